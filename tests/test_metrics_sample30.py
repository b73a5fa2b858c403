"""Metrics details from the survivors of the fresh seed-30 sample (docs/testing.md, session 9): DSTC9's ROUGE-L
finds the longest common subsequence when the words it skips sit between those it keeps. By hand."""

from __future__ import annotations

import pytest

from ragdial.metrics import rouge


def test_rouge_dstc9_l_keeps_the_longest_common_subsequence_across_skipped_words():
    # hyp "breakfast free with parking", ref "free parking breakfast": the LCS is "free parking" (2 words; "breakfast"
    # alone is 1), so P = 2/4 and R = 2/3 over the unique words -> F = 2PR / (P + R + 1e-8)
    scores = rouge.rouge_dstc9("Breakfast free with parking.", "Free parking, breakfast.")
    p, r = 2 / 4, 2 / 3
    assert scores["rougeL"].value == pytest.approx(2 * p * r / (p + r + 1e-8), rel=1e-9)
    assert scores["rouge1"].value == pytest.approx(2 * (3 / 4) * 1 / (3 / 4 + 1 + 1e-8), rel=1e-9)  # 3 shared words
