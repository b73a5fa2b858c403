"""The Milvus backend against milvus-lite (a local file) and, where ``RAGDIAL_MILVUS_URI`` names one, a Milvus server
(>= 2.5): the same code and the same answers on a small KB."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ragdial.retrieval.base import Retrieval
from ragdial.retrieval.config import RetrieverConfig
from ragdial.schema import Knowledge, KnowledgeBase, Speaker, Turn

FIXTURE = Path(__file__).parent / "fixtures" / "retrieval" / "kb.jsonl"


def kb() -> KnowledgeBase:
    return KnowledgeBase(Knowledge.from_dict(json.loads(line)) for line in FIXTURE.read_text().splitlines())


NO_SERVER = (
    "no Milvus server: set RAGDIAL_MILVUS_URI=http://host:19530 to a Milvus >= 2.5 (none runs here: no container "
    "runtime, and the PyPI `milvus` 2.3.5 server has no BM25 functions or sparse vectors; see docs/deploy.md)"
)


@pytest.fixture(scope="module", params=["milvus-lite", "server"])
def milvus(request, tmp_path_factory):
    pytest.importorskip("pymilvus", reason="pymilvus not installed (the 'milvus' extra)")
    from ragdial.retrieval.milvus import MilvusRetriever

    if request.param == "server":
        uri = os.environ.get("RAGDIAL_MILVUS_URI", "")
        if not uri:
            pytest.skip(NO_SERVER)
    else:
        pytest.importorskip("milvus_lite", reason="milvus-lite not installed (the 'milvus' extra)")
        uri = str(tmp_path_factory.mktemp("milvus") / "kb.db")
    config = RetrieverConfig(encoder="hash", fusion="rrf")
    try:
        hybrid = MilvusRetriever(uri, "ragdial_test_hybrid", config, language="en")
    except Exception as err:  # the embedded server could not start here
        if request.param == "server":
            raise
        pytest.skip(f"milvus-lite could not start: {err}")
    hybrid.build(kb())
    lexical = MilvusRetriever(uri, "ragdial_test_lexical", RetrieverConfig(encoder=None, fusion="bm25"), language="en")
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
    again = MilvusRetriever(uri, "ragdial_test_lexical", RetrieverConfig(encoder=None, fusion="bm25"))
    assert len(again.tracker) == 4  # entity names read back from the collection
    assert again.retrieve([user("Sunrise Lodge pets")], k=1).ranked[0].item.id == "h1:faq:2"
    missing = MilvusRetriever(uri, "nothing_here", RetrieverConfig(encoder=None, fusion="bm25"))
    assert missing.retrieve([user("parking")]) == Retrieval()


def test_a_milvus_server_older_than_2_5_is_named_not_half_used():
    from ragdial.retrieval.milvus import old_server

    # what the servers here answer: the PyPI `milvus` 2.3.5 launcher and milvus-lite 3.x
    assert old_server("v2.3.5-lite") == "v2.3.5-lite"
    assert old_server("v2.4.17") == "v2.4.17"
    assert old_server("v2.5.4") is None and old_server("2.6.0") is None
    assert old_server("milvus_lite-3.2.2") is None and old_server("") is None


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


def test_the_selection_is_the_configured_number_of_ranked_items_unless_asked_for_more(milvus):
    _, lexical, _ = milvus  # select: 1 (the config's default)
    context = [user("I'm looking at Blue Harbor Inn."), Turn(Speaker.SYSTEM, "Nice."), user("Is there parking?")]
    default = lexical.retrieve(context, k=3)
    assert len(default.ranked) == 3 and default.selected == default.ranked[:1]
    assert lexical.retrieve(context, k=3, select=2).selected == default.ranked[:2]
