"""``ragdial chat`` and ``ragdial run`` on the command line; bad configs are one clear line, not a traceback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest
import yaml

import service_doubles as doubles
from service_server import ROOT


def _ragdial(*args: str, stdin: str = "", cwd=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT / 'tests'}"}
    command = [sys.executable, "-c", "from ragdial.cli import main; main()", *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, timeout=300, cwd=cwd)


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "system.yaml"
    path.write_text(yaml.safe_dump(doubles.CONFIG, allow_unicode=True), encoding="utf-8")
    return path


def test_chat_answers_each_line_with_its_citations(config_file):
    result = _ragdial(
        "chat",
        "--config",
        str(config_file),
        "--profile",
        "u2",
        "--json",
        stdin="夜猫流量包还剩多少\n怎么查询话费余额\n",
    )
    assert result.returncode == 0, result.stderr
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(replies) == 2
    assert replies[0]["text"].startswith("[夜猫流量包还剩多少]") and "u2:plan" in [
        k["id"] for k in replies[0]["knowledge"]
    ]
    first = replies[1]["knowledge"][0]
    assert (first["id"], first["source"], first["scope"]) == ("f1", "faq", "")
    assert first["text"] == "问题：怎么查询话费余额？答案：发送短信YE到10086" and first["score"] > 0


def test_chat_shows_sources_and_handles_commands(config_file):
    stdin = "/profiles\n/profile u9\n/profile u1\n畅游套餐\n/reset\n/quit\nnever read\n"
    result = _ragdial("chat", "--config", str(config_file), "--language", "zh", stdin=stdin)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Alice" in out and "Bob" in out
    assert "unknown profile 'u9'" in out and "profile u1; history cleared" in out
    assert "[畅游套餐]" in out and "product" in out and "user profile" in out and "history cleared" in out
    assert "never read" not in out


def test_bad_config_and_unknown_profile_are_one_line_errors(tmp_path, config_file):
    bad = tmp_path / "bad.yaml"
    bad.write_text("retriever: {name: no_such_retriever}\n", encoding="utf-8")
    result = _ragdial("chat", "--config", str(bad))
    assert result.returncode == 2 and "unknown retriever 'no_such_retriever'" in result.stderr
    assert "Traceback" not in result.stderr
    result = _ragdial("serve", "--config", str(tmp_path / "missing.yaml"))
    assert result.returncode == 2 and "missing.yaml: cannot read the config" in result.stderr
    result = _ragdial("chat", "--config", str(config_file), "--profile", "nobody")
    assert result.returncode == 2 and "unknown profile 'nobody'" in result.stderr


def test_run_demo_writes_the_official_files_and_scores(tmp_path):
    out = tmp_path / "run"
    result = _ragdial(
        "run", "demo", "--retriever", "bm25", "--generator", "template", "--no-bertscore", "--out", str(out)
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    assert summary["examples"] == 33 and summary["components"]["retriever"] == "HybridRetriever"
    track1 = summary["scores"]["futuredial-track1"]
    # BM25 over the demo is deterministic: 20, 29 and 34 of the 35 gold pieces (27 turns) at ranks 1, 5 and 20
    # in the answer model's ranking of the candidates (19, 29, 34 before session 10's rebuild on the pooled tuning
    # sets with the dialog features, md5 207e7659; 18, 28, 34 before session 8's retraining with the name cue
    # and the A-not-A question act as features, whose cross-validated first-gold on train + dev rose 0.715 ->
    # 0.722; 17, 28, 34 before session 7's retraining, which leaves the
    # train set's three third-language turns out of the examples; 20, 30, 34 before the head-cover and unknown-term
    # features of session 5, whose grouped CV first-gold on train+dev rose 0.736 -> 0.750: these dialogs are not in
    # its data; 17, 24, 34 before the field features; 12, 25 and 30 before the model)
    assert track1["counts"] == {"turns": 27, "pieces": 35}
    recall = {key: hits / (35 + 1e-7) for key, hits in (("R@1", 20), ("R@5", 29), ("R@20", 34))}
    assert track1["scores"] == pytest.approx({**recall, "score": sum(recall.values())}, rel=1e-9)
    top20 = json.loads((out / "track1_top20.json").read_text(encoding="utf-8"))
    assert len(top20) == 33 and all(
        set(r) == {"id", "turn_num", "top20_id"} and len(r["top20_id"]) <= 20 for r in top20
    )
    track2 = json.loads((out / "track2_responses.json").read_text(encoding="utf-8"))
    assert len(track2) == 33 and all(r["客服-生成"] for r in track2)
    # a greeting and a question about one's services: every service of the profile, not the no-knowledge fallback
    assert all(name in track2[0]["客服-生成"] for name in ("青禾畅享58元套餐", "夜间流量包")), track2[0]
    # the template copies the user's usage from the profile verbatim
    assert track2[1]["客服-生成"] == "本月已用通用流量：35.2GB，剩余通用流量：4.8GB，剩余夜间流量：6.1GB。"
    assert summary["speed"]["turns"] == 33 and summary["speed"]["tokens"] > 0
    assert "tokens/s" in result.stdout


def test_run_refuses_an_unknown_benchmark():
    result = _ragdial("run", "nonsense")
    assert result.returncode == 2 and "unknown benchmark 'nonsense'" in result.stderr


def test_serve_on_a_port_in_use_says_so_before_loading_anything(config_file):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _ragdial("serve", "--config", str(config_file), "--port", str(port))
    assert result.returncode == 2  # the CLI's code for a RagdialError
    assert f"port {port} on 127.0.0.1 is already in use" in result.stderr
    assert "ready" not in result.stdout and "building" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_serve_refuses_to_start_when_the_warm_up_turn_fails(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump({**doubles.CONFIG, "generator": "service_doubles:broken_generator"}), "utf-8")
    result = _ragdial("serve", "--config", str(path), "--port", "0")
    assert result.returncode == 2 and "ready" not in result.stdout
    assert "warming up 'zh': a first short turn failed: RuntimeError: connection refused" in result.stderr
