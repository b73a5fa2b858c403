"""The tuned wrapper keeps its held-out F1 to four decimals (a survivor of the fresh seed-32 retrieval sample,
docs/testing.md "Session 10"): the set-up of ``test_tuned_sample30.py`` (a flat wrapped reranker, a scorer that knows
the asked aspect, no training) with one gold set that also names a review on the other aspect."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="tuning needs the torch extra")
pytest.importorskip("transformers", reason="tuning needs the torch extra")

from ragdial.retrieval import tuned
from test_tuned_sample30 import AspectScorer, Flat, asked_examples, review_retriever


def test_the_held_out_f1_is_kept_to_four_decimals():
    retriever = review_retriever()
    examples = asked_examples(lambda key, kind: ["s:b1"] if (key, kind) == ("s", "q") else [])
    base = Flat()
    model = tuned.train(retriever, examples, base, refit=lambda part: base, negatives=2, new_scorer=AspectScorer)
    # the two reviews on the asked aspect are chosen for each of the 6 questions: 12 chosen, all right, of 13 gold
    assert model.info["held_out_f1"] == round(2 * 12 / (12 + 13), 4) == 0.96
    assert model.info["negatives"] == 2  # (how it was trained, kept)
