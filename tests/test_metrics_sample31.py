"""Metrics details from the survivors of the fresh seed-31 sample (docs/testing.md, session 9), by hand: detection
counts every true negative, DSTC9 keeps its counts, a system that selects no knowledge has selection precision 0
(not 1), and ROUGE scores carry their names."""

from __future__ import annotations

from ragdial.metrics import rouge
from ragdial.metrics.challenges import dstc
from ragdial.metrics.challenges.detection import DetectionCounts


def test_detection_counts_every_true_negative():
    counts = DetectionCounts()
    for gold, predicted in ((False, False), (True, True), (False, False), (False, True), (False, False)):
        counts.add(gold, predicted)
    assert (counts.tp, counts.fp, counts.fn, counts.tn) == (1, 1, 0, 3)


def _turns():
    gold = [{"target": True, "knowledge": [{"domain": "d", "entity_id": 1, "doc_id": 2}], "response": "free parking"}]
    gold += [{"target": False}, {"target": False}]
    pred = [{"target": True, "knowledge": [], "response": "free parking"}, {"target": False}, {"target": True}]
    return gold, pred


def test_dstc9_keeps_its_detection_counts():
    gold, pred = _turns()
    pred[2] = {"target": True, "knowledge": [], "response": "x"}
    assert dstc.score_dstc9(gold, pred).counts == {"instances": 3, "tp": 1, "fp": 1, "fn": 0, "tn": 1}


def test_a_system_that_selects_no_knowledge_has_selection_precision_zero():
    gold, pred = _turns()
    pred[2] = {"target": False}
    selection = dstc.score_dstc11(gold, pred, with_meteor=False).scores["selection"]
    assert selection == {"prec": 0.0, "rec": 0.0, "f1": 0.0, "em_acc": 0.0}


def test_rouge_scores_carry_their_names():
    assert {key: score.name for key, score in rouge.rouge("the cat sat", "the cat sat down").items()} == {
        "rouge1": "rouge1",
        "rouge2": "rouge2",
        "rougeL": "rougeL",
    }


def test_futuredial_track1_refuses_fewer_rankings_than_gold_turns():
    import pytest

    from ragdial.metrics.challenges import futuredial

    with pytest.raises(ValueError):  # a turn left unranked is an error, not a turn silently dropped
        futuredial.score_track1([[1], [2]], [[1, 3]])
