"""``ragdial train detector|intent|api-query`` and ``ragdial predict`` on our fixtures."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ragdial.cli import main
from ragdial.understanding import TextClassifier


def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["ragdial", *map(str, args)])
    try:
        main()
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def smp_like(tmp_path: Path, fixtures: Path) -> Path:
    """Our intent fixture written in the SMP2017 layout (train/train_<label>.txt, UTF-8 with BOM, CRLF)."""
    data = json.loads((fixtures / "understanding" / "intents.json").read_text(encoding="utf-8"))
    folder = tmp_path / "smp" / "train"
    folder.mkdir(parents=True)
    for label, texts in data.items():
        (folder / f"train_{label}.txt").write_bytes("\r\n".join(texts).encode("utf-8-sig"))
    return tmp_path / "smp"


def test_train_and_predict_intent(monkeypatch, capsys, smp_like: Path, tmp_path: Path) -> None:
    model_dir = tmp_path / "intent"
    args = ("train", "intent", "smp2017", smp_like, "--embedding", "none", "-o", model_dir)
    code, out, _ = run(monkeypatch, capsys, *args)
    assert code == 0 and "trained intent on 24 examples (4 classes)" in out
    code, out, _ = run(monkeypatch, capsys, "predict", model_dir, "后天南京会下雪吗", "")
    records = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and records[0]["prediction"] == "weather"
    assert len(records) == 2 and 0 < records[1]["confidence"] <= 1
    out_file = tmp_path / "pred.json"
    code, _, err = run(
        monkeypatch, capsys, "predict", model_dir, "--format", "smp2017", "--data", smp_like, "--split", "train",
        "-o", out_file,
    )  # fmt: skip
    assert code == 0 and "exact match with the gold labels: 24/24" in err
    assert len(json.loads(out_file.read_text(encoding="utf-8"))) == 24


def test_train_and_predict_detector(monkeypatch, capsys, fixtures: Path, tmp_path: Path) -> None:
    data = fixtures / "understanding" / "dstc"
    model_dir = tmp_path / "det"
    args = ("train", "detector", "dstc11", data, "--split", "val", "--embedding", "none", "--threshold", "0.4")
    code, out, _ = run(monkeypatch, capsys, *args, "-o", model_dir)
    assert code == 0 and "trained detector on 24 examples" in out
    model = TextClassifier.load(model_dir)
    assert model.meta["data_format"] == "dstc11" and model.head.threshold == 0.4
    code, out, _ = run(monkeypatch, capsys, "predict", model_dir, "Are pets allowed at the Hilltop Inn?")
    assert code == 0 and json.loads(out)["prediction"] == "true"
    code, out, err = run(monkeypatch, capsys, "predict", model_dir, "--format", "dstc11", "--data", data, "--fold", "0")
    assert code == 0 and "exact match" in err


def test_cli_errors_are_one_line(monkeypatch, capsys, tmp_path: Path, fixtures: Path) -> None:
    code, _, err = run(monkeypatch, capsys, "predict", tmp_path / "nothing", "hello")
    assert code == 2 and "model.json: missing" in err and "Traceback" not in err
    code, _, err = run(monkeypatch, capsys, "train", "intent", "smp2017", tmp_path / "absent", "-o", tmp_path / "m")
    assert code == 2 and "no such file or folder" in err
    data = fixtures / "understanding" / "dstc"
    code, _, err = run(monkeypatch, capsys, "train", "intent", "dstc11", data, "-o", tmp_path / "m")
    assert code == 2 and "no examples labelled for task 'intent'" in err
    args = ("train", "detector", "dstc11", data, "--exclude-fold", "7", "-o", tmp_path / "m")
    code, _, err = run(monkeypatch, capsys, *args)
    assert code == 2 and "--exclude-fold must be in 0..4" in err
    assert not (tmp_path / "m").exists()


def test_train_and_predict_api_query(monkeypatch, capsys, fixtures: Path, tmp_path: Path) -> None:
    data = fixtures / "mobilecs2" / "zh" / "dev_final_processed.json"
    model_dir = tmp_path / "api"
    code, out, _ = run(monkeypatch, capsys, "train", "api-query", "mobilecs2", data, "-o", model_dir)
    assert code == 0 and "trained api_query on 23 examples" in out
    code, out, err = run(monkeypatch, capsys, "predict", model_dir, "--format", "mobilecs2", "--data", data)
    records = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(records) == 23 and "exact match with the gold labels: 23/23" in err
    assert {r["prediction"] for r in records} >= {"", "[QA]", "查询用户已办理的业务，取消"}


def test_predict_reports_gold_labels_unseen_in_training(monkeypatch, capsys, smp_like: Path, tmp_path: Path) -> None:
    model_dir = tmp_path / "intent"
    args = ("train", "intent", "smp2017", smp_like, "--embedding", "none", "-o", model_dir)
    assert run(monkeypatch, capsys, *args)[0] == 0
    (smp_like / "train" / "train_alarm.txt").write_bytes("明早七点叫我起床\r\n".encode("utf-8-sig"))
    code, out, err = run(monkeypatch, capsys, "predict", model_dir, "--format", "smp2017", "--data", smp_like)
    predictions = {json.loads(line)["prediction"] for line in out.splitlines()}
    assert code == 0 and "alarm" not in predictions and len(out.splitlines()) == 25
    assert "exact match with the gold labels: 24/25" in err
    assert "gold labels never seen in training (always counted wrong): alarm" in err
