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


def test_the_trained_reranker_ranks_and_cuts_after_milvus_as_after_the_in_process_retriever(tmp_path):
    """One code path: Milvus shortlists and scores, then ``KnowledgePool.rank`` applies the same trained reranker
    and cut as for ``HybridRetriever``; a config names it as ``reranker`` and ``to_config`` keeps it."""
    pytest.importorskip("pymilvus", reason="pymilvus not installed (the 'milvus' extra)")
    pytest.importorskip("milvus_lite", reason="milvus-lite not installed (the 'milvus' extra)")
    from ragdial import datasets
    from ragdial.components import BuildContext
    from ragdial.retrieval import rerank
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.retrieval.registry import RETRIEVERS

    dstc = datasets.load("dstc11", FIXTURE.parent / "dstc")
    local = HybridRetriever(dstc.kb, RetrieverConfig(encoder="hash"))
    local.reranker = rerank.train(local, dstc.examples, rounds=40)
    folder = local.reranker.save(tmp_path / "reranker")
    uri = str(tmp_path / "kb.db")
    try:
        remote = RETRIEVERS.build("milvus", BuildContext(dstc, "en"), uri=uri, reranker=str(folder), encoder="hash")
    except Exception as err:  # the embedded server could not start here
        pytest.skip(f"milvus-lite could not start: {err}")
    assert remote.to_config()["reranker"] == str(folder)
    plain = RETRIEVERS.build("milvus", BuildContext(dstc, "en"), uri=uri, build="never", encoder="hash")
    seeking = [e for e in dstc.examples if e.needs_knowledge]
    hits = total = same_first = 0
    sizes = set()
    for example in seeking:
        got = remote.retrieve(example.context, k=5, select=5)
        assert got.ranked and got.selected == local.reranker.cut(got.ranked, 5)
        assert all(0.0 <= r.score <= 1.0 for r in got.selected)  # the model's probabilities, not RRF sums
        sizes.add(len(got.selected))
        hits += len({r.item.id for r in got.selected} & set(example.knowledge_ids))
        total += len(example.knowledge_ids)
        same_first += got.ranked[0].item.id == local.retrieve(example.context, k=5).ranked[0].item.id
        assert len(plain.retrieve(example.context, k=5, select=5).selected) == 5  # no reranker: no cut
    assert hits / total > 0.8
    assert len(sizes) > 1  # the threshold cut selects one item for some turns, several for others
    assert same_first / len(seeking) >= 0.8
    remote.close()
    plain.close()
