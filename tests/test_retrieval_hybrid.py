"""The in-process retriever on a small mixed zh/en knowledge base: scope, entities, query modes, edge cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdial.retrieval.base import KnowledgeFilter, Retrieval, Scope
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.schema import Knowledge, KnowledgeBase, SourceKind, Speaker, Turn

FIXTURE = Path(__file__).parent / "fixtures" / "retrieval" / "kb.jsonl"


def load_kb() -> KnowledgeBase:
    return KnowledgeBase(Knowledge.from_dict(json.loads(line)) for line in FIXTURE.read_text().splitlines())


def user(text: str) -> Turn:
    return Turn(Speaker.USER, text)


def system(text: str) -> Turn:
    return Turn(Speaker.SYSTEM, text)


@pytest.fixture(scope="module", params=["bm25", "rrf"])
def retriever(request) -> HybridRetriever:
    encoder = None if request.param == "bm25" else "hash"
    return HybridRetriever(load_kb(), RetrieverConfig(fusion=request.param, encoder=encoder))


def ids(found) -> list[str]:
    return [r.item.id for r in found.ranked]


def test_entity_scope_picks_the_entity_under_discussion(retriever):
    context = [user("I'm looking at Blue Harbor Inn."), system("It is a nice inn."), user("Is there parking?")]
    top = ids(retriever.retrieve(context, k=3))
    assert top[0] == "h2:faq:1"
    assert "h1:faq:1" not in top  # the other hotel's parking FAQ is out of scope
    assert "d:faq:1" in ids(retriever.retrieve(context, k=10))  # domain-wide items stay candidates


def test_entity_carries_over_turns(retriever):
    context = [user("Tell me about Sunrise Lodge"), system("Sure."), user("Can I bring my dog? Are pets ok?")]
    assert ids(retriever.retrieve(context, k=1)) == ["h1:faq:2"]


def test_local_items_only_for_their_dialog(retriever):
    context = [user("how much monthly data does my plan have")]
    assert "u7:profile" in ids(retriever.retrieve(context, scope="dialog-7", k=20))
    assert "u7:profile" not in ids(retriever.retrieve(context, scope="dialog-8", k=20))
    assert "u7:profile" not in ids(retriever.retrieve(context, k=20))


def test_scope_and_filter_are_applied_before_ranking_not_after(retriever):
    context = [user("how much monthly data does my plan have")]
    only_local = retriever.retrieve(context, Scope(local="dialog-7", include_global=False), k=20)
    assert ids(only_local) == ["u7:profile"]
    faq = retriever.retrieve(context, "dialog-7", k=3, filter=KnowledgeFilter(sources=(SourceKind.FAQ,)))
    assert len(faq.ranked) == 3  # k items of the allowed kinds, however far down the unfiltered list they are
    assert {r.item.source for r in faq.ranked if r.item.is_global} == {SourceKind.FAQ}
    everything = retriever.retrieve(context, "dialog-7", k=50)
    floor = sorted(r.score for r in everything.ranked)[len(everything.ranked) // 2]
    high = retriever.retrieve(context, "dialog-7", k=50, filter=KnowledgeFilter(min_score=floor))
    assert high.ranked and all(r.score >= floor for r in high.ranked)


def test_the_retriever_selects_from_its_own_ranking(retriever):
    context = [user("Tell me about Sunrise Lodge"), system("Sure."), user("Can I bring my dog? Are pets ok?")]
    found = retriever.retrieve(context, k=10)
    assert found.selected == found.ranked[:1]  # no reranker: the first ``config.select``
    assert retriever.retrieve(context, k=10, select=3).selected == found.ranked[:3]
    assert found.items == [found.ranked[0].item] and found.items[0] is retriever.kb.get("h1:faq:2")


def test_chinese_query_with_entity(retriever):
    context = [user("梅花山要门票吗")]
    assert ids(retriever.retrieve(context, k=1)) == ["kg:1"]


def test_empty_query_and_empty_context_return_nothing(retriever):
    assert retriever.retrieve([user("   ")]) == Retrieval()
    assert retriever.retrieve([]) == Retrieval()


def test_query_in_other_language_returns_ranked_list_without_error(retriever):
    results = retriever.retrieve([user("停车场在哪里")], k=5).ranked
    assert len(results) <= 5
    assert all(isinstance(r.score, float) for r in results)


def test_item_without_text_is_never_ranked_above_a_match(retriever):
    context = [user("Blue Harbor Inn wifi?")]
    top = ids(retriever.retrieve(context, k=20))
    assert top[0] == "h2:faq:2"
    assert top.index("empty") > 0


def test_empty_kb():
    retriever = HybridRetriever(KnowledgeBase(), RetrieverConfig(encoder="hash"))
    assert retriever.retrieve([user("is there parking")]) == Retrieval()


def test_query_modes_weight_recent_turns():
    kb = load_kb()
    context = [user("tell me about breakfast and coffee at Sunrise Lodge"), system("ok"), user("and is it generous?")]
    last = HybridRetriever(kb, RetrieverConfig(encoder=None, fusion="bm25", query="last_user"))
    recent = HybridRetriever(kb, RetrieverConfig(encoder=None, fusion="bm25", query="recent", turns=3, decay=0.5))
    assert ids(recent.retrieve(context, k=1)) == ["h1:review:1"]
    scores_last = last.score(context)
    scores_recent = recent.score(context)
    assert scores_recent.bm25.sum() > scores_last.bm25.sum()
