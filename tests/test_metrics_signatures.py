"""The BERTScore and METEOR 1.5 signatures, pinned (without the ragdial version part): what a reported number claims
about how it was computed (from a metrics mutation sample, seed 21)."""

from __future__ import annotations

import pytest

from ragdial.metrics.meteor import meteor15_signature


def parts(sig: str) -> list[str]:
    return [p for p in sig.split("|") if not p.startswith("ragdial:")]


def test_meteor15_signature():
    assert parts(meteor15_signature()) == ["meteor", "impl:meteor-1.5-jar", "lang:en", "norm:yes", "agg:corpus"]


def test_bertscore_signature():
    bert_score = pytest.importorskip("bert_score")  # the signature carries its version
    from ragdial.metrics.bertscore import bertscore_signature

    assert parts(bertscore_signature("bert-base-chinese", 4)) == [
        "bertscore",
        "model:bert-base-chinese",
        "layer:4",
        "idf:no",
        "rescale:no",
        "stat:f1",
        "agg:mean",
        f"version:{bert_score.__version__}",
    ]
