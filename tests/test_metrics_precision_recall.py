"""Precision and recall on inputs where they differ, worked out by hand, so a swap of the two cannot pass.

The official-number fixtures elsewhere happen to have P = R (the tiny DSTC fixture: 3 of 4 both ways); these
inputs do not. Counts are written next to each case.
"""

from __future__ import annotations

import pytest

from ragdial.metrics.challenges import dstc
from ragdial.metrics.challenges.detection import DetectionCounts
from ragdial.metrics.classification import classification_report


def faq(entity: int, doc: int) -> dict:
    return {"domain": "hotel", "entity_id": entity, "doc_type": "faq", "doc_id": doc}


# detection: tp 2 (0, 1), fp 2 (2, 3), fn 1 (4), tn 1 (5) -> P = 1/2, R = 2/3, F = 4/7
GOLD = [
    {"target": True, "knowledge": [faq(1, 0)], "response": "free parking is available on site"},
    {"target": True, "knowledge": [faq(1, 1)], "response": "breakfast starts at seven"},
    {"target": False},
    {"target": False},
    {"target": True, "knowledge": [faq(2, 0)], "response": "yes there is a gym"},
    {"target": False},
]
PRED = [
    {"target": True, "knowledge": [faq(1, 0)], "response": "free parking is available on site"},
    {"target": True, "knowledge": [faq(1, 5), faq(1, 1)], "response": "the bar opens around noon"},
    {"target": True, "knowledge": [faq(3, 0)], "response": "it has a pool"},
    {"target": True, "knowledge": [faq(3, 1)], "response": "pets are allowed"},
    {"target": False},
    {"target": False},
]


def test_detection_counts_precision_over_predicted_recall_over_gold():
    counts = DetectionCounts()
    for gold, predicted in [(True, True), (False, True), (False, True), (True, False), (False, False)]:
        counts.add(gold, predicted)
    assert (counts.tp, counts.fp, counts.fn, counts.tn) == (1, 2, 1, 1)
    assert counts.prf() == {"prec": pytest.approx(1 / 3), "rec": pytest.approx(1 / 2), "f1": pytest.approx(2 / 5)}
    # a sum over true positives of 0.5 is divided by the 3 predicted (P) and the 2 gold (R) targets
    p, r, f = counts.weighted(0.5)
    assert (p, r, f) == (pytest.approx(1 / 6), pytest.approx(1 / 4), pytest.approx(1 / 5))
    assert DetectionCounts().prf() == {"prec": 0.0, "rec": 0.0, "f1": 0.0}


def test_dstc11_detection_and_selection_p_differs_from_r():
    result = dstc.score_dstc11(GOLD, PRED, with_meteor=False)
    detection = result.scores["detection"]
    assert detection == {"prec": pytest.approx(1 / 2), "rec": pytest.approx(2 / 3), "f1": pytest.approx(4 / 7)}
    # selection over the 5 instances where gold or prediction lists knowledge: tp 2 (0, 1), fp 3 (1, 2, 3), fn 1 (4)
    selection = result.scores["selection"]
    assert selection == {
        "prec": pytest.approx(2 / 5),
        "rec": pytest.approx(2 / 3),
        "f1": pytest.approx(1 / 2),
        "em_acc": pytest.approx(1 / 5),
    }
    assert result.counts == {"instances": 6, "tp": 2, "fp": 2, "fn": 1, "tn": 1, "selection_instances": 5}
    # ROUGE-1 sums to 1 (instance 0, exact) + 0 (instance 1, no word shared) -> F of P = 1/4, R = 1/3
    assert result.scores["generation"]["rouge_1"] == pytest.approx(2 / 7)


def test_dstc9_detection_and_weighted_selection():
    result = dstc.score_dstc9(GOLD, PRED)
    assert result.scores["detection"] == {
        "prec": pytest.approx(1 / 2),
        "rec": pytest.approx(2 / 3),
        "f1": pytest.approx(4 / 7),
    }
    # per true positive: instance 0 has gold at rank 1, instance 1 at rank 2; sums r@1 = 1, r@5 = 2, mrr = 1.5,
    # each divided by 4 predicted (P) and 3 gold (R) targets, reported as F
    selection = result.scores["selection"]
    assert selection["r@1"] == pytest.approx(2 * (1 / 4) * (1 / 3) / (1 / 4 + 1 / 3))
    assert selection["r@5"] == pytest.approx(4 / 7)
    assert selection["mrr@5"] == pytest.approx(2 * 0.375 * 0.5 / 0.875)


def test_classification_precision_and_recall_per_class_differ():
    report = classification_report(["a", "a", "a", "b"], ["a", "b", "b", "b"])
    # a: tp 1, fp 0, fn 2 -> P 1, R 1/3; b: tp 1, fp 2, fn 0 -> P 1/3, R 1
    assert report["per_class"]["a"]["precision"] == pytest.approx(1.0)
    assert report["per_class"]["a"]["recall"] == pytest.approx(1 / 3)
    assert report["per_class"]["b"]["precision"] == pytest.approx(1 / 3)
    assert report["per_class"]["b"]["recall"] == pytest.approx(1.0)
    assert report["macro"]["precision"] == pytest.approx(2 / 3)
    assert report["per_class"]["a"]["support"] == 3 and report["per_class"]["b"]["support"] == 1


def test_macro_average_counts_every_class_of_the_label_set():
    # "b" is only predicted (no gold support) and "c" is named but never seen: both score 0 and both count
    report = classification_report(["a", "a"], ["a", "b"], labels=["a", "b", "c"])
    assert report["per_class"]["a"] == {"precision": 1.0, "recall": 0.5, "f1": pytest.approx(2 / 3), "support": 2}
    assert report["per_class"]["b"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0}
    assert report["per_class"]["c"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0}
    assert report["macro"] == {
        "precision": pytest.approx(1 / 3),
        "recall": pytest.approx(1 / 6),
        "f1": pytest.approx(2 / 9),
    }
    assert report["micro"]["precision"] == pytest.approx(1 / 2)
    assert report["accuracy"] == pytest.approx(1 / 2)
    assert report["confusion"] == [[1, 1, 0], [0, 0, 0], [0, 0, 0]]
    assert classification_report(["a", "a"], ["a", "b"])["labels"] == ["a", "b"]  # default: seen in gold or predictions
