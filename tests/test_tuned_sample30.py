"""The tuned wrapper's cross-fitting from the survivors of the fresh seed-30 retrieval sample (docs/testing.md,
session 9): with an uninformative wrapped reranker and a scorer that knows the asked aspect, the held-out choice
takes the smallest weight that reaches the best F1, and that F1 is 1; a folder that holds no encoder is named.
Stand-ins for the reranker and the scorer (no training), a small review KB of our own."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

pytest.importorskip("torch", reason="tuning needs the torch extra")
pytest.importorskip("transformers", reason="tuning needs the torch extra")

from ragdial.errors import RagdialError
from ragdial.retrieval import tuned
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.schema import Example, Knowledge, KnowledgeBase, SourceKind, Speaker, Turn

REVIEWS = {
    "q1": "The rooms were very quiet at night.",
    "q2": "We slept well with no noise from the street.",
    "b1": "Breakfast had fresh fruit and eggs.",
    "b2": "The breakfast buffet was rather small.",
}
HOTELS = {"s": "Sunrise Lodge", "h": "Blue Harbor Inn", "r": "Red Gate House"}
ASKED = {"q": "Is {} quiet at night?", "b": "How is the breakfast at {}?"}


class Flat:
    """A wrapped reranker that cannot tell the candidates apart: 0.5 for each."""

    def predict(self, retriever, context, scores) -> np.ndarray:
        return np.full(len(scores.indices), 0.5, dtype=np.float32)


class AspectScorer:
    """A scorer that knows the asked aspect: 1 for a review on it, 0 for any other (``fit`` learns nothing)."""

    def fit(self, pairs, labels, epochs, learning_rate, seed):
        assert pairs and any(labels)
        return self

    def score(self, question: str, texts) -> np.ndarray:
        words = ("quiet", "noise") if "quiet" in question else ("breakfast",)
        return np.array([float(any(w in t.lower() for w in words)) for t in texts], dtype=np.float32)


def review_retriever() -> HybridRetriever:
    """The hotels' reviews, each of its entity, searched lexically within the entity in focus."""
    kb = KnowledgeBase(
        Knowledge(f"{key}:{r}", text, SourceKind.REVIEW, {"domain": "hotel", "entity": HOTELS[key]})
        for key in HOTELS
        for r, text in REVIEWS.items()
    )
    return HybridRetriever(kb, RetrieverConfig(encoder=None, entity_scope=True))


def asked_examples(extra: Callable[[str, str], list[str]] = lambda key, kind: []) -> list[Example]:
    """One question per hotel and aspect; gold: its two reviews on the aspect (+ ``extra(key, kind)``)."""
    return [
        Example(
            f"{key}{kind}",
            f"d-{key}{kind}",
            1,
            [Turn(Speaker.USER, text.format(name))],
            True,
            [f"{key}:{kind}1", f"{key}:{kind}2", *extra(key, kind)],
        )
        for key, name in HOTELS.items()
        for kind, text in ASKED.items()
    ]


def test_the_held_out_choice_takes_the_smallest_weight_that_reaches_the_best_f1():
    retriever, examples = review_retriever(), asked_examples()
    base = Flat()
    model = tuned.train(retriever, examples, base, refit=lambda part: base, negatives=2, new_scorer=AspectScorer)
    # weight 0 leaves every candidate tied at 0.5; from 0.25 on, the two reviews on the asked aspect lead
    assert model.info["held_out_f1"] == 1.0
    assert model.weight == 0.25 and model.weight == tuned.WEIGHTS[1]
    assert (model.info["queries"], model.info["halves"]) == (len(examples), 2)


def test_a_folder_without_a_saved_encoder_is_named(tmp_path):
    with pytest.raises(RagdialError, match=r"nothing: not a saved tuned encoder \("):
        tuned.TunedEncoder.load(tmp_path / "nothing")
