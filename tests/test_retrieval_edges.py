"""Retrieval parts pinned on small hand-written knowledge: a name's aliases without "the", the parts of names that
name one entity, the shortlist of a scoped candidate set, reciprocal-rank fusion with the configured constant and
depth, the transfer reranker's fallback confidence, and the error of a reranker trained on other features."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragdial.errors import RagdialError
from ragdial.retrieval.base import ScoredKnowledge
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.entities import aliases, partial_names
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.retrieval.pool import KnowledgePool
from ragdial.retrieval.query import query_texts
from ragdial.retrieval.rerank import META_FILE, MODEL_FILE, Reranker
from ragdial.retrieval.transfer import best_fallback
from ragdial.schema import Knowledge, KnowledgeBase, SourceKind, Speaker, Turn


def faq(item_id: str, text: str, entity: str | None = None) -> Knowledge:
    return Knowledge(item_id, text, SourceKind.FAQ, {"entity": entity} if entity else {})


def test_aliases_drop_a_leading_the_and_a_generic_suffix():
    assert aliases("The Gardenia") == {" gardenia "}
    assert aliases("The Lensfield Hotel") == {" lensfield hotel ", " lensfield "}


def test_a_name_part_used_by_other_items_more_than_twice_is_not_a_name():
    items = [
        faq("a", "Stazione Restaurant serves pizza", "Stazione Restaurant"),
        faq("b", "Golden Curry opens at noon", "Golden Curry"),
        faq("c", "golden hour at the bar"),
        faq("d", "the golden gate"),
    ]
    # "stazione": the first word of one name; "golden curry" and "golden": one entity's (golden is used by two
    # other items: at most two is allowed); "curry" alone is not the first word; "restaurant" is generic
    assert partial_names(items) == {
        " stazione ": {"Stazione Restaurant"},
        " golden ": {"Golden Curry"},
        " golden curry ": {"Golden Curry"},
    }
    # a third other item says "golden": it no longer names Golden Curry alone
    assert partial_names([*items, faq("e", "golden tickets")]) == {
        " stazione ": {"Stazione Restaurant"},
        " golden curry ": {"Golden Curry"},
    }


TEXTS = [
    "free parking at the hotel",
    "breakfast is served at seven",
    "pets are welcome",
    "the pool opens at nine",
    "parking costs ten pounds",
    "wifi is free",
    "late checkout on request",
    "airport shuttle every hour",
]
KB = KnowledgeBase([faq(f"k{i}", text) for i, text in enumerate(TEXTS)])


def test_the_shortlist_of_a_scoped_candidate_set_stays_in_it():
    lexical = HybridRetriever(KB, RetrieverConfig(encoder=None, shortlist=1, prune_above=100))
    query = [("free parking", 1.0)]
    assert lexical.shortlist(np.arange(8), query, None).tolist() == [0]  # both words
    # without item 0: items 4 and 5 have one word each; 5 is the shorter text, so BM25 puts it first
    assert lexical.shortlist(np.array([1, 2, 3, 4, 5]), query, None).tolist() == [5]
    dense = HybridRetriever(KB, RetrieverConfig(encoder="hash", shortlist=1, prune_above=100))
    queries = dense._queries(["free parking"])  # type: ignore[misc]
    scoped = dense.shortlist(np.array([1, 2, 3, 4, 5]), query, queries)
    assert 5 in scoped and set(scoped.tolist()) <= {1, 2, 3, 4, 5} and len(scoped) <= 2


def test_rrf_fusion_uses_the_configured_constant_and_depth():
    pool = KnowledgePool(KB, RetrieverConfig(encoder="hash", fusion="rrf", rrf_k=1))
    bm25 = np.array([3.0, 2.0, 1.0], dtype=np.float32)  # ranks 1, 2, 3
    dense = np.array([1.0, 2.0, 3.0], dtype=np.float32)  # ranks 3, 2, 1
    assert pool.fuse(bm25, dense).tolist() == pytest.approx([1 / 2 + 1 / 4, 1 / 3 + 1 / 3, 1 / 4 + 1 / 2])
    # depth 1: only each list's first counts
    assert pool.fuse(bm25, dense, depth=1).tolist() == pytest.approx([1 / 2, 0.0, 1 / 2])


def test_the_fallback_is_the_lowest_confidence_under_which_the_given_order_wins():
    # query 1: the reranker is unsure (max 0.12) and wrong (puts item 1 first; the gold is item 0);
    # query 2: the reranker is sure (0.9) and right (item 1 is gold, the given order has it second)
    probs = [np.array([0.1, 0.12]), np.array([0.2, 0.9])]
    labels = [np.array([True, False]), np.array([False, True])]
    # fallback 0.15: query 1 keeps the given order (MRR 1), query 2 the reranker's (MRR 1): total 2, the best;
    # 0.0-0.1 reach 1.5, 0.15-0.5 all reach 2: ties go to the lowest
    assert best_fallback(probs, labels) == 0.15


def test_a_reranker_trained_on_other_features_says_to_retrain(tmp_path):
    (tmp_path / MODEL_FILE).write_text("tree\n", encoding="utf-8")
    (tmp_path / META_FILE).write_text(json.dumps({"features": ["bm25"]}), encoding="utf-8")
    with pytest.raises(RagdialError, match=r"trained on other features; retrain with `ragdial train retriever`"):
        Reranker.load(tmp_path)


def test_a_cited_item_as_the_api_returns_it():
    item = Knowledge("u1", "套餐：流量王", SourceKind.USER_PROFILE, {}, scope="user-7")
    assert ScoredKnowledge(item, 0.25).to_dict() == {
        "id": "u1",
        "source": "user_profile",
        "text": "套餐：流量王",
        "score": 0.25,
        "scope": "user-7",
    }


def test_every_entity_in_focus_missing_from_the_turn_is_carried():
    context = [Turn(Speaker.USER, "Is it open late?")]
    pairs = query_texts(context, RetrieverConfig(query="last_user", encoder=None), ["Gold Fish", "Blue Bar"])
    assert pairs == [("Is it open late? Gold Fish Blue Bar", 1.0)]
    named = [Turn(Speaker.USER, "Is the gold fish open late?")]
    assert query_texts(named, RetrieverConfig(query="last_user", encoder=None), ["Gold Fish", "Blue Bar"]) == [
        ("Is the gold fish open late? Blue Bar", 1.0)
    ]


def test_the_fallback_counts_a_query_without_a_hit_in_the_top_five_as_zero():
    # six candidates, the gold one last in the given order (no hit in its top 5); the reranker puts it second
    probs = [np.array([0.3, 0.1, 0.1, 0.1, 0.1, 0.2])]
    labels = [np.array([False, False, False, False, False, True])]
    # fallbacks up to 0.3 keep the reranker's order (MRR 1/2); 0.4 and 0.5 the given one (MRR 0): the lowest wins
    assert best_fallback(probs, labels) == 0.0


def test_registry_retrievers_name_themselves_in_their_spec():
    from ragdial.components import BuildContext
    from ragdial.retrieval.registry import bm25, hybrid
    from ragdial.schema import Dataset

    ctx = BuildContext(Dataset("dstc9", "val", "en", KB, [], []), "en")
    assert hybrid(ctx, encoder="hash").spec == {"name": "hybrid", "encoder": "hash"}  # type: ignore[attr-defined]
    assert bm25(ctx).spec == {"name": "bm25"}  # type: ignore[attr-defined]
    # built in code (no spec): the config names the registry entry that builds the same retriever again
    lexical = HybridRetriever(KB, RetrieverConfig(encoder=None, fusion="bm25"))
    assert lexical.to_config()["name"] == "bm25" and lexical.to_config()["fusion"] == "bm25"
    assert HybridRetriever(KB, RetrieverConfig(encoder="hash")).to_config()["name"] == "hybrid"
