"""What keeps retrieval fast on large knowledge bases: BM25 top-k by MaxScore (exact), the shortlist before fusion,
the approximate dense index saved with an index, and entity names looked up instead of scanned.

The knowledge base here is generated (seeded words of our own, Zipf-like frequencies) so that postings are long
for common words and short for rare ones; it only checks that the fast paths give what the full ones give.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from ragdial.retrieval.analyzer import Analyzer
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.entities import EntityTracker
from ragdial.retrieval.fusion import top_k
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.retrieval.index import ANN, load_index, save_index
from ragdial.retrieval.lexical import LexicalIndex
from ragdial.schema import Knowledge, KnowledgeBase, SourceKind, Speaker, Turn

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "da", "fu"]
WORDS = sorted({a + b + c for a in SYLLABLES for b in SYLLABLES for c in SYLLABLES[:4]})  # 576 made-up words
PLACES = ["Harbour", "Meadow", "Orchard", "Station", "Terrace"]


def make_items(count: int, seed: int = 0) -> list[Knowledge]:
    rng = random.Random(seed)
    weights = [1 / (rank + 1) for rank in range(len(WORDS))]
    items = []
    for i in range(count):
        entity = f"Avalon {PLACES[i % len(PLACES)]} {i // 40}"
        words = rng.choices(WORDS, weights, k=rng.randint(6, 30))
        items.append(Knowledge(f"k{i}", " ".join(words), SourceKind.FAQ, {"entity": entity}))
    return items


@pytest.fixture(scope="module")
def items() -> list[Knowledge]:
    return make_items(3000)


@pytest.fixture(scope="module")
def lexical(items) -> LexicalIndex:
    return LexicalIndex.build([item.text for item in items], Analyzer(language="en"))


def queries(count: int, seed: int = 1) -> list[list[tuple[str, float]]]:
    rng = random.Random(seed)
    return [
        [(" ".join(rng.choices(WORDS, k=rng.randint(1, 6))), 1.0), (" ".join(rng.choices(WORDS, k=4)), 0.3)]
        for _ in range(count)
    ]


def test_maxscore_top_k_equals_ranking_every_score(items, lexical):
    rng = np.random.default_rng(0)
    for n, pairs in enumerate(queries(60)):
        full = sum(weight * lexical.scores(text) for text, weight in pairs)
        allowed = None
        if n % 3 == 0:  # within a candidate mask
            allowed = rng.random(len(items)) < 0.3
            full = np.where(allowed, full, 0.0)
        expected = [i for i in top_k(full, 20) if full[i] > 0]
        docs, scores = lexical.top(lexical.query_terms(pairs), 20, allowed)
        assert len(docs) == len(expected)
        np.testing.assert_allclose(scores, full[expected], rtol=1e-5)
        assert set(docs[scores > scores[-1] + 1e-4]) <= set(expected)  # the same items up to ties at the cut
        if allowed is not None:
            assert allowed[docs].all()


def test_scores_of_a_subset_are_the_same_numbers(items, lexical):
    docs = np.array(sorted(random.Random(2).sample(range(len(items)), 200)))
    for pairs in queries(10):
        text = pairs[0][0]
        assert np.array_equal(lexical.scores_of(text, docs), lexical.scores(text)[docs])  # bit for bit


def test_the_shortlist_keeps_the_ranking_and_the_saved_index_keeps_its_ann(items, tmp_path):
    kb = KnowledgeBase(items)
    full = HybridRetriever(kb, RetrieverConfig(encoder="hash", shortlist=0, entity_scope=False))
    short = RetrieverConfig(encoder="hash", shortlist=100, prune_above=1000, entity_scope=False)
    pruned = HybridRetriever(kb, short, lexical=full.lexical, vectors=full.vectors)
    assert pruned.ann is not None and len(pruned.ann) == len(items)  # a KB above prune_above gets one
    assert full.ann is None
    lexical_full = HybridRetriever(kb, RetrieverConfig(encoder=None, fusion="bm25", shortlist=0), lexical=full.lexical)
    lexical_short = HybridRetriever(kb, RetrieverConfig(encoder=None, fusion="bm25", prune_above=1000), full.lexical)
    asked = queries(40, seed=3)
    same_first = 0
    for pairs in asked:
        context = [Turn(Speaker.USER, pairs[0][0])]
        # BM25 alone: the shortlist is its exact top k, so the ranking is the same
        a = lexical_full.retrieve(context, k=10).ranked
        b = lexical_short.retrieve(context, k=10).ranked
        assert [r.score for r in a] == pytest.approx([r.score for r in b], rel=1e-5)
        # fused with (here nearly random) hashed vectors: the first item is kept
        a = full.retrieve(context, k=10).ranked
        b = pruned.retrieve(context, k=10).ranked
        same_first += a[0].item.id == b[0].item.id
    assert same_first >= 0.9 * len(asked)
    save_index(pruned, tmp_path / "index")
    assert (tmp_path / "index" / ANN).is_file()
    loaded = load_index(tmp_path / "index")
    assert loaded.ann is not None and len(loaded.ann) == len(items)
    context = [Turn(Speaker.USER, asked[0][0][0])]
    assert [r.item.id for r in loaded.retrieve(context, k=10).ranked] == [
        r.item.id for r in pruned.retrieve(context, k=10).ranked
    ]


def test_names_are_found_among_thousands_with_a_typing_error(items):
    tracker = EntityTracker(items)
    assert len(tracker) == len(PLACES) * len(items) // 40  # 375 names sharing their first word
    assert tracker.find("is avalon orchard 12 open late?") == ["Avalon Orchard 12"]
    assert tracker.find("is avlaon orchard 12 open late?") == ["Avalon Orchard 12"]  # swapped letters
    assert tracker.find("and avalon meadow 3 or avalon station 71") == ["Avalon Meadow 3", "Avalon Station 71"]
    assert tracker.find("avalon orchard") == []  # no entity is called that


def test_an_index_written_from_a_stream_answers_like_the_retriever_built_in_memory(items, tmp_path):
    from ragdial.errors import RagdialError
    from ragdial.retrieval.index import write_index

    config = RetrieverConfig(encoder="hash", shortlist=100, prune_above=1000)
    built = HybridRetriever(KnowledgeBase(items), config)
    heard: dict[str, int] = {}

    def progress(step: str, n: int) -> None:
        heard[step] = heard.get(step, 0) + n

    write_index((item for item in items), tmp_path / "streamed", config, progress=progress)  # a generator
    assert heard == {"items": len(items), "bm25": len(items), "ann index": len(items)}
    loaded = load_index(tmp_path / "streamed")
    assert loaded.ann is not None
    np.testing.assert_allclose(loaded.vectors, built.vectors, atol=1e-6)
    for pairs in queries(15, seed=5):
        for context in ([Turn(Speaker.USER, pairs[0][0])], [Turn(Speaker.USER, "avalon orchard 12 " + pairs[0][0])]):
            a = built.retrieve(context, k=10).ranked
            b = loaded.retrieve(context, k=10).ranked
            assert [r.item for r in a] == [r.item for r in b]
    with pytest.raises(RagdialError, match="3 vectors for 3000 knowledge items"):
        write_index(items, tmp_path / "bad", config, vectors=np.zeros((3, 256), np.float32))
    assert not (tmp_path / "bad").exists() and not list(tmp_path.glob(".bad*"))  # nothing half-written
