"""Metric details the score tests do not pin, worked out by hand on small inputs: the JSON forms a score and a
challenge's scores take, the turn count KdConv/Huawei scoring reports, the mean of no query, the repetition rule's
sentence boundaries, and METEOR 1.5's score name. Written from the survivors
of the session-6 metrics mutation sample (docs/testing.md)."""

from __future__ import annotations

import shutil

import pytest

from ragdial.metrics import meteor, retrieval
from ragdial.metrics.challenges import kdsd
from ragdial.metrics.grounding import degenerate_reason
from ragdial.metrics.result import ChallengeScores, Score


def test_a_score_and_a_challenges_scores_as_json():
    assert Score("bleu", 0.25, "bleu|n:4").to_dict() == {"name": "bleu", "value": 0.25, "signature": "bleu|n:4"}
    scores = ChallengeScores("dstc9", {"detection": {"f1": 1, "recall": 0.5}, "mrr": 2}, {"detection": "s"}, {"n": 3})
    assert scores.to_dict() == {
        "challenge": "dstc9",
        "scores": {"detection": {"f1": 1, "recall": 0.5}, "mrr": 2},
        "signatures": {"detection": "s"},
        "counts": {"n": 3},
    }
    assert scores.flat() == {"detection.f1": 1.0, "detection.recall": 0.5, "mrr": 2.0}
    with pytest.raises(TypeError, match=r"detection\.f1"):
        ChallengeScores("x", {"detection": {"f1": None}}).flat()


def test_kdsd_counts_the_turns_it_scored():
    generated, references = ["好的", "天气很好", "是的"], ["好的", "天气好", "是"]
    result = kdsd.score_kdsd([["a"], ["b"], []], [["a"], [], ["c"]], generated, references)
    assert result.counts == {"turns": 3}


def test_no_query_with_gold_ids_scores_zero():
    assert retrieval.recall_at_k([[], []], [["a"], ["b"]], 1).value == 0.0  # both skipped
    assert retrieval.mrr_at_k([[]], [["a"]], 5).value == 0.0


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("谢谢您。谢谢您。谢谢您。", "repetition"),  # three sentences of four characters, all the same
        ("谢谢您。谢谢您。", None),  # two sentences are not "mostly repeated text"
        ("谢谢。谢谢。谢谢。", None),  # sentences of three characters are not counted
        ("谢谢您。谢谢您。好的。", None),
    ],
)
def test_the_repeated_sentence_rule_at_its_boundaries(text, reason):
    assert degenerate_reason(text) == reason


@pytest.mark.skipif(shutil.which("java") is None, reason="METEOR 1.5 needs Java")
def test_meteor15_is_named_meteor():
    assert meteor.meteor15(["free parking"], ["free parking"]).name == "meteor"
