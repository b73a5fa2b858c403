"""The Milvus backend against milvus-lite (a local file): same answers as the in-process retriever on a small KB."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdial.retrieval.base import Retrieval
from ragdial.retrieval.config import RetrieverConfig
from ragdial.schema import Knowledge, KnowledgeBase, Speaker, Turn

FIXTURE = Path(__file__).parent / "fixtures" / "retrieval" / "kb.jsonl"


def kb() -> KnowledgeBase:
    return KnowledgeBase(Knowledge.from_dict(json.loads(line)) for line in FIXTURE.read_text().splitlines())


@pytest.fixture(scope="module")
def milvus(tmp_path_factory):
    pytest.importorskip("pymilvus", reason="pymilvus not installed (the 'milvus' extra)")
    pytest.importorskip("milvus_lite", reason="milvus-lite not installed (the 'milvus' extra)")
    from ragdial.retrieval.milvus import MilvusRetriever

    uri = str(tmp_path_factory.mktemp("milvus") / "kb.db")
    try:
        hybrid = MilvusRetriever(uri, "hybrid", RetrieverConfig(encoder="hash", fusion="rrf"), language="en")
    except Exception as err:  # the embedded server could not start here
        pytest.skip(f"milvus-lite could not start: {err}")
    hybrid.build(kb())
    lexical = MilvusRetriever(uri, "lexical", RetrieverConfig(encoder=None, fusion="bm25"), language="en")
    lexical.build(kb())
    yield hybrid, lexical, uri
    hybrid.close()


def user(text: str) -> Turn:
    return Turn(Speaker.USER, text)


def test_bm25_and_hybrid_find_the_entity_faq(milvus):
    hybrid, lexical, _ = milvus
    context = [user("I'm looking at Blue Harbor Inn."), Turn(Speaker.SYSTEM, "Nice."), user("Is there parking?")]
    for retriever in (lexical, hybrid):
        results = retriever.retrieve(context, k=3).ranked
        assert results[0].item.id == "h2:faq:1"
        assert all(r.item.fields.get("entity") in (None, "Blue Harbor Inn") for r in results)  # entity filter
        assert results[0].item.source.value == "faq"


def test_local_items_need_their_dialog(milvus):
    _, lexical, _ = milvus
    context = [user("monthly data plan")]
    assert "u7:profile" in [r.item.id for r in lexical.retrieve(context, scope="dialog-7").ranked]
    assert "u7:profile" not in [r.item.id for r in lexical.retrieve(context).ranked]


def test_empty_query_and_reconnect(milvus):
    from ragdial.retrieval.milvus import MilvusRetriever

    hybrid, _, uri = milvus
    assert hybrid.retrieve([user("  ")]) == Retrieval()
    again = MilvusRetriever(uri, "lexical", RetrieverConfig(encoder=None, fusion="bm25"))
    assert len(again.tracker) == 4  # entity names read back from the collection
    assert again.retrieve([user("Sunrise Lodge pets")], k=1).ranked[0].item.id == "h1:faq:2"
    missing = MilvusRetriever(uri, "nothing_here", RetrieverConfig(encoder=None, fusion="bm25"))
    assert missing.retrieve([user("parking")]) == Retrieval()
