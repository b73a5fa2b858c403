"""``ragdial data stats|validate|convert`` end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import shared_path
from ragdial.schema import Example, Knowledge

SRC = Path(__file__).resolve().parents[1] / "src"


def ragdial(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    command = [sys.executable, "-m", "ragdial", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.shared_data
def test_stats_dstc11_json(shared_data: Path) -> None:
    root = shared_path(shared_data, "dstc11_track5")
    done = ragdial("data", "stats", "dstc11", str(root), "--split", "val", "--json")
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    assert stats["format"] == "dstc11" and stats["split"] == "val"
    assert (stats["dialogs"], stats["examples"], stats["knowledge_seeking"]) == (4173, 4173, 2129)
    assert stats["knowledge_items"] == 10882


def test_stats_table_and_validate_on_mobilecs2(fixtures: Path) -> None:
    path = fixtures / "mobilecs2" / "zh" / "dev_final_processed.json"
    table = ragdial("data", "stats", "mobilecs2", str(path))
    assert table.returncode == 0 and "knowledge_seeking" in table.stdout and "19" in table.stdout
    valid = ragdial("data", "validate", "mobilecs2", str(path))
    assert valid.returncode == 0 and valid.stdout.startswith(
        "ok: 23 examples, 48 knowledge items"
    )  # 42 + 6 [QA] entries


def test_convert_writes_the_unified_schema(fixtures: Path, tmp_path: Path) -> None:
    out = tmp_path / "zh.jsonl"
    done = ragdial("data", "convert", "mobilecs2", str(fixtures / "mobilecs2" / "zh"), str(out), "--split", "dev")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    knowledge = [Knowledge.from_dict(r) for r in rows if r.pop("type") == "knowledge"]
    examples = [Example.from_dict(r) for r in rows if "dialog_id" in r]
    assert len(knowledge) == 42 + 6 and len(examples) == 23  # + one ret_qa entry per [QA] turn
    assert examples[2].knowledge_ids == ["product:6", "product:7"] and examples[2].api_query == "查询特定业务信息"
