"""DSTC11 track 5 val from the shared data: gold scores 1.0; a prediction file with known mistakes gets exactly the
numbers of the official ``scores.py`` (DSTC11, and DSTC9's formulas on the same labels) run in a throwaway harness."""

from __future__ import annotations

import json
import shutil

import pytest

from _metrics_mistakes import dstc_mistakes
from conftest import shared_path
from ragdial.metrics.challenges import dstc

pytestmark = pytest.mark.shared_data

OFFICIAL_DSTC11_MISTAKES = {
    "detection": {"prec": 0.9123468426013195, "rec": 0.9093471113198685, "f1": 0.9108445071747824},
    "selection": {
        "prec": 0.7506893382352942,
        "rec": 0.7537201522666974,
        "f1": 0.7522016922811259,
        "em_acc": 0.5633512174989682,
    },
    "generation": {
        "bleu": 0.46576337755244035,
        "meteor": 0.36062522505397965,
        "rouge_1": 0.7664540450086882,
        "rouge_2": 0.46925377092769904,
        "rouge_l": 0.51917049680978,
    },
}
OFFICIAL_DSTC9_MISTAKES = {
    "detection": {"prec": 0.9123468426013195, "rec": 0.9093471113198685, "f1": 0.9108445071747824},
    "selection": {"mrr@5": 0.7918136908962596, "r@1": 0.7913432133615619, "r@5": 0.7927546459656551},
    "generation": {
        "bleu-1": 0.673207993373377,
        "bleu-2": 0.3971762569551439,
        "bleu-3": 0.37970580997918835,
        "bleu-4": 0.37680714651381486,
        "meteor": 0.577206077112173,
        "rouge_1": 0.7696411893826017,
        "rouge_2": 0.465568688869922,
        "rouge_l": 0.5040348379427393,
    },
}


@pytest.fixture(scope="module")
def gold(shared_data):
    path = shared_path(shared_data, "dstc11_track5/val/labels.json")
    return json.loads(path.read_text())


def _close(actual, expected):
    for key, value in expected.items():
        if isinstance(value, dict):
            _close(actual[key], value)
        else:
            assert actual[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key


def test_gold_as_prediction_scores_one(gold):
    java = shutil.which("java") is not None
    result = dstc.score_dstc11(gold, gold, with_meteor=java)
    for family in ("detection", "selection"):
        assert all(v == 1.0 for v in result.scores[family].values()), family
    generation = result.scores["generation"]
    assert generation["bleu"] == pytest.approx(1.0, abs=1e-12)
    assert generation["rouge_1"] == generation["rouge_2"] == generation["rouge_l"] == 1.0
    if java:  # the official script gives exactly 1.0 here too
        assert generation["meteor"] == pytest.approx(1.0, abs=1e-12)
    assert result.counts["tp"] == 2129


@pytest.mark.skipif(shutil.which("java") is None, reason="METEOR 1.5 needs Java")
def test_mistakes_equal_official_dstc11(gold):
    predictions = dstc_mistakes(gold)
    dstc.check_predictions("mistakes.json", predictions, gold, "dstc11")
    _close(dstc.score_dstc11(gold, predictions).scores, OFFICIAL_DSTC11_MISTAKES)


def test_mistakes_equal_official_dstc9_formulas(gold):
    predictions = dstc_mistakes(gold)
    for hyp in predictions:  # DSTC9's rouge package raises on an empty hypothesis: the official run had none
        if hyp["target"] and hyp["response"] == "":
            hyp["response"] = "ok"
    _close(dstc.score_dstc9(gold, predictions).scores, OFFICIAL_DSTC9_MISTAKES)
