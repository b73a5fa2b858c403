"""DISTINCT, generation F1 and Inform by hand."""

from __future__ import annotations

import pytest

from ragdial.metrics import overlap


def test_distinct_by_hand():
    responses = ["好的好的", "好的"]
    # chars: 好 的 好 的 | 好 的 -> 2 distinct of 6; bigrams: 好的 的好 好的 | 好的 -> 2 distinct of 4
    assert overlap.distinct(responses, 1).value == pytest.approx(2 / 6)
    assert overlap.distinct(responses, 2).value == pytest.approx(2 / 4)
    assert overlap.distinct([], 1).value == 0.0


def test_generation_f1_by_hand():
    # 天气很好 vs 今天天气很好: common 4, P = 1, R = 4/6 -> 0.8; empty hypothesis -> 0
    score = overlap.generation_f1(["天气很好", ""], ["今天天气很好", "你好"])
    assert score.value == pytest.approx(0.4)
    assert "tok:chars-nopunct" in score.signature
    with pytest.raises(ValueError):  # a reply without its reference is an error, not dropped
        overlap.generation_f1(["天气很好", "你好"], ["今天天气很好"])


def test_inform_counts_pieces():
    score = overlap.inform([["流量王", "三十元"], [], ["视频包"]], ["流量王每月三十元", "好的", "没有"])
    assert score.value == pytest.approx(2 / 3)
    assert overlap.inform([[]], ["x"]).value == 0.0
