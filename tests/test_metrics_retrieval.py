"""Retrieval metrics by hand, including the policy for queries without gold."""

from __future__ import annotations

import pytest

from ragdial.metrics import retrieval

GOLD = [["a"], ["b", "c"], []]
RANKED = [["x", "a", "y"], ["c", "z", "b"], ["q"]]


def test_recall_units():
    assert retrieval.recall_at_k(GOLD, RANKED, 1).value == pytest.approx(0.5)  # query 2 hits at rank 1
    assert retrieval.recall_at_k(GOLD, RANKED, 2).value == pytest.approx(1.0)
    assert retrieval.recall_at_k(GOLD, RANKED, 1, unit="piece").value == pytest.approx(1 / 3)
    assert retrieval.recall_at_k(GOLD, RANKED, 3, unit="fraction").value == pytest.approx(1.0)
    assert retrieval.recall_at_k(GOLD, RANKED, 1, unit="fraction").value == pytest.approx(0.25)


def test_no_gold_policy():
    assert retrieval.recall_at_k(GOLD, RANKED, 2, no_gold="zero").value == pytest.approx(2 / 3)
    assert retrieval.recall_at_k(GOLD, RANKED, 1, no_gold="one").value == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="query 2 has no gold"):
        retrieval.recall_at_k(GOLD, RANKED, 1, no_gold="error")
    assert "no_gold:skip" in retrieval.recall_at_k(GOLD, RANKED, 1).signature


def test_mrr_and_cutoff():
    assert retrieval.mrr_at_k(GOLD, RANKED, 5).value == pytest.approx((1 / 2 + 1) / 2)
    assert retrieval.mrr_at_k(GOLD, RANKED, 1).value == pytest.approx(0.5)
    assert retrieval.reciprocal_rank(["a"], ["x", "y", "a"], 2).value == 0.0
    assert retrieval.reciprocal_rank(["a"], ["x", "y", "a"], 3).value == pytest.approx(1 / 3)
    assert retrieval.hit_at_k(["a"], ["x", "y", "a"], 3).value == 1.0
    assert retrieval.hit_at_k(["a"], ["x", "y", "a"], 2).value == 0.0
    # per-query terms are Scores like every metric, their signature naming the cut-off and the ragdial version
    one = retrieval.reciprocal_rank(["a"], ["a"], 5)
    assert one.name == "rr@5" and one.signature.startswith("rr|k:5|unit:query|ragdial:")
    assert retrieval.hit_at_k(["a"], ["a"], 1).signature.startswith("hit|k:1|unit:query|ragdial:")


def test_set_prf_and_exact_match():
    scores = retrieval.set_prf([["a", "b"], [], ["c"], ["e"]], [["a", "a"], [], ["c", "d", "f"], ["e"]])
    # tp = 3 (a, c, e), fp = 2 (d, f), fn = 1 (b): P = 3/5, R = 3/4; exact match 1 of the 3 non-empty queries
    assert scores["precision"].value == pytest.approx(3 / 5)
    assert scores["recall"].value == pytest.approx(3 / 4)
    assert scores["f1"].value == pytest.approx(2 / 3)
    assert scores["exact_match"].value == pytest.approx(1 / 3)
