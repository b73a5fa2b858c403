"""Understanding details from the survivors of the fresh seed-31 sample (docs/testing.md, session 9), on small
hand-written inputs: an n-gram block over the history reads its own window, an embedding block of no contexts is an
empty matrix of its width, and the knowledge base's coverage of a turn compares word stems."""

from __future__ import annotations

import pytest

from ragdial.schema import Speaker, Turn
from ragdial.understanding.features import NgramTfidf, SentenceEmbedding
from ragdial.understanding.knowledge_cues import KnowledgeMatcher


def test_an_ngram_block_over_the_history_reads_only_its_window():
    context = [
        Turn(Speaker.USER, "zebra"),
        Turn(Speaker.SYSTEM, "okay"),
        Turn(Speaker.USER, "kiwi please"),
    ]
    block = NgramTfidf(view="history", analyzer="word", ngram_range=(1, 1), window=1).fit([context])
    assert sorted(block.vocabulary) == ["okay"]  # one turn before the newest user turn: the system's
    wide = NgramTfidf(view="history", analyzer="word", ngram_range=(1, 1), window=3).fit([context])
    assert sorted(wide.vocabulary) == ["okay", "zebra"]


def test_an_embedding_block_of_no_contexts_is_an_empty_matrix_of_its_width():
    block = SentenceEmbedding(encoder="hash").fit([[Turn(Speaker.USER, "hello")]])
    assert block.dim > 0 and block.transform([]).shape == (0, block.dim)


def test_the_kb_coverage_of_a_turn_compares_word_stems():
    matcher = KnowledgeMatcher(["Parking is free for hotel guests."], "hash")
    best, anywhere = matcher.coverage("Do guests park free?")  # park / parking, guests / guests, free / free
    assert (best, anywhere) == (pytest.approx(1.0), pytest.approx(1.0))
