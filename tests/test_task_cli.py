"""``ragdial task make-db|search`` and ``ragdial simulate`` end to end, and their one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def ragdial(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run(
        [sys.executable, "-m", "ragdial", *args], capture_output=True, text=True, env=env, timeout=300, cwd=cwd
    )


def test_make_db_search_and_simulate(tmp_path):
    db = tmp_path / "travel.sqlite"
    done = ragdial("task", "make-db", "--out", str(db), "--days", "4", "--start", "2026-12-01")
    assert done.returncode == 0, done.stderr
    assert "trains" in done.stdout and db.is_file()
    done = ragdial("task", "search", "hotel", "city=杭州", "date=2026-12-02", "--db", f"sqlite:///{db}", "--limit", "2")
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rows) == 2 and all(r["city"] == "杭州" for r in rows) and rows[0]["price"] <= rows[1]["price"]
    out = tmp_path / "run"
    done = ragdial("simulate", "--goals", "6", "--seed", "4", "--db", str(db), "--out", str(out), "--noise", "0.2")
    assert done.returncode == 0, done.stderr
    assert "task completion ratio" in done.stdout
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    dialogs = [json.loads(line) for line in (out / "dialogs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert metrics["dialogs"] == len(dialogs) == 6
    assert all(d["log"] and {"user", "heard", "system"} <= set(d["log"][0]) for d in dialogs)
    # the run is seeded (goals, user behaviour, noise; "today" is the database's first day): its figures are exact
    assert metrics == {
        "dialogs": 6,
        "completion_ratio": 1.0,
        # noisy yeses (没问体, 队的) are asked again, not read as a no (6.83 before session 6); a yes word heard by
        # sound (可依) is a yes where one is expected (6.0 before session 7)
        "mean_turns": 5.166666666666667,
        "guidance_rate": 1.0,
        "off_topic_dialogs": 3,
        "integrity_errors": 0,
        "dialogs_with_integrity_errors": 0,
        "relaxed_dialogs": 0,
    }
    assert [len(d["log"]) for d in dialogs] == [4, 8, 4, 5, 4, 8]
    assert all(d["success"] for d in dialogs)


def test_errors_are_one_line(tmp_path):
    for args in (
        ("simulate", "--db", str(tmp_path / "missing.sqlite")),
        ("task", "make-db", "--start", "2026-13-01", "--out", str(tmp_path / "x.sqlite")),
        ("task", "search", "flight", "dep_city", "--db", str(tmp_path / "missing.sqlite")),
        ("simulate", "--db", "postgresql://localhost/travel"),
    ):
        done = ragdial(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("error:") and "Traceback" not in done.stderr
    assert not (tmp_path / "x.sqlite").exists()
