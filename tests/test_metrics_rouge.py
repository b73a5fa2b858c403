"""ROUGE: rouge-score with a Chinese-capable tokenizer, and the DSTC9 (pltrdy ``rouge``) flavour by hand."""

from __future__ import annotations

import pytest

import ragdial
from ragdial.metrics import rouge


def test_rouge_score_english_default_matches_hand_values():
    # "the cat sat" vs "the cat sat down": P1 = 3/3, R1 = 3/4 -> F = 6/7; bigrams 2/2, 2/3 -> 0.8; LCS 3 -> 6/7
    scores = rouge.rouge("the cat sat", "the cat sat down")
    assert scores["rouge1"].value == pytest.approx(6 / 7)
    assert scores["rouge2"].value == pytest.approx(0.8)
    assert scores["rougeL"].value == pytest.approx(6 / 7)


def test_default_tokenizer_scores_chinese_zero_ours_does_not():
    hyp, ref = "今天天气很好", "今天的天气很好"
    assert rouge.rouge(hyp, ref)["rouge1"].value == 0.0
    chars = rouge.rouge(hyp, ref, tokenizer="chars-nopunct", stemmer=False)
    # chars: hyp 6, ref 7, overlap 6 -> F1 = 2*6/(6+7); LCS 6 -> same
    assert chars["rouge1"].value == pytest.approx(12 / 13)
    assert chars["rougeL"].value == pytest.approx(12 / 13)
    assert rouge.rouge(hyp, ref, tokenizer="words", stemmer=False)["rouge1"].value > 0
    assert "tok:chars-nopunct" in rouge.rouge_signature("chars-nopunct", False)
    assert chars["rouge1"].signature == rouge.rouge_signature("chars-nopunct", False)
    assert chars["rouge1"].signature.endswith(f"|ragdial:{ragdial.__version__}")


def test_rouge_dstc9_counts_sets_by_hand():
    # after normalisation: hyp "cat cat sat" ref "cat sat on mat" (articles and punctuation dropped)
    scores = rouge.rouge_dstc9("The cat, the cat sat.", "A cat sat on the mat!")
    # unigram sets {cat, sat} vs {cat, sat, on, mat}: P = 1, R = 0.5 -> F = 2*0.5/(1.5 + 1e-8)
    assert scores["rouge1"].value == pytest.approx(2 * 0.5 / (1.5 + 1e-8), rel=1e-12)
    # bigram sets {(cat,cat),(cat,sat)} vs {(cat,sat),(sat,on),(on,mat)}: P = 1/2, R = 1/3
    assert scores["rouge2"].value == pytest.approx(2 * (1 / 6) / (5 / 6 + 1e-8), rel=1e-12)
    # LCS words {cat, sat}; unique words hyp 2, ref 4 -> same as ROUGE-1
    assert scores["rougeL"].value == pytest.approx(scores["rouge1"].value)
    assert {score.signature for score in scores.values()} == {rouge.rouge_dstc9_signature()}


def test_rouge_dstc9_empty_is_zero():
    scores = rouge.rouge_dstc9("...", "a reference")
    assert {key: score.value for key, score in scores.items()} == {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
    assert scores["rouge1"].signature == rouge.rouge_dstc9_signature()
