"""The tuned wrapper keeps its held-out F1 to four decimals (a survivor of the fresh seed-32 retrieval sample,
docs/testing.md "Session 10"): the set-up of ``test_tuned_sample30.py`` (a flat wrapped reranker, a scorer that knows
the asked aspect, no training) with one gold set that also names a review on the other aspect."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="tuning needs the torch extra")
pytest.importorskip("transformers", reason="tuning needs the torch extra")

from ragdial.retrieval import tuned
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.schema import Example, Knowledge, KnowledgeBase, SourceKind, Speaker, Turn
from test_tuned_sample30 import ASKED, HOTELS, REVIEWS, AspectScorer, Flat


def test_the_held_out_f1_is_kept_to_four_decimals():
    kb = KnowledgeBase(
        Knowledge(f"{key}:{r}", text, SourceKind.REVIEW, {"domain": "hotel", "entity": HOTELS[key]})
        for key in HOTELS
        for r, text in REVIEWS.items()
    )
    retriever = HybridRetriever(kb, RetrieverConfig(encoder=None, entity_scope=True))
    examples = [
        Example(
            f"{key}{kind}",
            f"d-{key}{kind}",
            1,
            [Turn(Speaker.USER, text.format(name))],
            True,
            [f"{key}:{kind}1", f"{key}:{kind}2", *(["s:b1"] if (key, kind) == ("s", "q") else [])],
        )
        for key, name in HOTELS.items()
        for kind, text in ASKED.items()
    ]
    base = Flat()
    model = tuned.train(retriever, examples, base, refit=lambda part: base, negatives=2, new_scorer=AspectScorer)
    # the two reviews on the asked aspect are chosen for each of the 6 questions: 12 chosen, all right, of 13 gold
    assert model.info["held_out_f1"] == round(2 * 12 / (12 + 13), 4) == 0.96
    assert model.info["negatives"] == 2  # (how it was trained, kept)
