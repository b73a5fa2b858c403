"""The Milvus backend against milvus-lite (a local file) and, where ``RAGDIAL_MILVUS_URI`` names one, a Milvus server
(>= 2.5): the same code and the same answers on a small KB."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from _retrieval_helpers import lite_or_skip
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
        uri = lite_or_skip(str(tmp_path_factory.mktemp("milvus") / "kb.db"))
    config = RetrieverConfig(encoder="hash", fusion="rrf")
    hybrid = MilvusRetriever(uri, "ragdial_test_hybrid", config, language="en")
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
        assert [r.item for r in results] == [
            kb().get(r.item.id) for r in results
        ]  # read back whole: text, fields, scope


def test_local_items_need_their_dialog(milvus):
    _, lexical, _ = milvus
    context = [user("monthly data plan")]
    assert "u7:profile" in [r.item.id for r in lexical.retrieve(context, scope="dialog-7").ranked]
    assert "u7:profile" not in [r.item.id for r in lexical.retrieve(context).ranked]


def test_empty_query_and_reconnect(milvus):
    from ragdial.retrieval.milvus import MilvusRetriever

    hybrid, lexical, uri = milvus
    assert hybrid.retrieve([user("  ")]) == Retrieval()
    assert lexical.retrieve([user("zzzzqq xxyyw")]) == Retrieval()  # no term of the KB: nothing matches
    again = MilvusRetriever(uri, "ragdial_test_lexical", RetrieverConfig(encoder=None, fusion="bm25"))
    assert len(again.tracker) == 4  # entity names read back from the collection
    assert again.retrieve([user("Sunrise Lodge pets")], k=1).ranked[0].item.id == "h1:faq:2"
    missing = MilvusRetriever(uri, "nothing_here", RetrieverConfig(encoder=None, fusion="bm25"))
    assert missing.retrieve([user("parking")]) == Retrieval()
    assert (missing.count(), again.count()) == (-1, len(kb()))  # -1: no collection, not an empty one


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
    uri = lite_or_skip(str(tmp_path / "kb.db"))
    remote = RETRIEVERS.build("milvus", BuildContext(dstc, "en"), uri=uri, reranker=str(folder), encoder="hash")
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


def _same_dataset(name: str):
    from ragdial import datasets
    from ragdial.datasets import mobilecs2

    if name == "dstc":  # English, entity-scoped turns
        return datasets.load("dstc11", FIXTURE.parent / "dstc"), "en"
    path = Path(__file__).parent / "fixtures" / "mobilecs2" / "zh" / "dev_final_processed.json"
    return mobilecs2.load(path, rules="faq-answer"), "zh"  # Chinese, each dialog's own (local) items


@pytest.mark.parametrize("name", ["dstc", "mobilecs2"])
@pytest.mark.parametrize("fusion", ["bm25", "rrf"])
def test_milvus_ranks_as_the_in_process_retriever_with_the_same_scores(name, fusion, tmp_path):
    """Same tokens (ragdial's analyzer in a ``terms`` field), the same BM25 parameters and statistics (a sealed
    collection), each context turn searched and weighted, the same dense scores and RRF: on a candidate pool
    smaller than the shortlist depth Milvus gives the in-process ranking, with the in-process scores."""
    pytest.importorskip("pymilvus", reason="pymilvus not installed (the 'milvus' extra)")
    pytest.importorskip("milvus_lite", reason="milvus-lite not installed (the 'milvus' extra)")
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.retrieval.milvus import MilvusRetriever

    dataset, language = _same_dataset(name)
    config = RetrieverConfig(encoder="hash" if fusion == "rrf" else None, fusion=fusion)
    local = HybridRetriever(dataset.kb, config)
    remote = MilvusRetriever(lite_or_skip(str(tmp_path / "kb.db")), "same", config, language=language)
    remote.build(dataset.kb, vectors=local.vectors)
    # opened again (a restart, ``build: missing``) with the system's knowledge: the same entity tracker, so the same
    # entity scoping, as the retriever that built the collection
    reopened = MilvusRetriever(str(tmp_path / "kb.db"), "same", config, language=language, kb=dataset.kb)
    compared = with_history = 0
    for example in dataset.examples:
        if not example.context or not example.context[-1].text.strip():
            continue
        want = local.retrieve(example.context, example.dialog_id, k=8).ranked
        got = remote.retrieve(example.context, example.dialog_id, k=8).ranked
        if fusion == "bm25":  # Milvus returns the items the query matches; in-process fills up with zeros
            want = [hit for hit in want if hit.score > 0]
        assert [hit.id for hit in got] == [hit.id for hit in want], example.id
        assert [hit.score for hit in got] == pytest.approx([hit.score for hit in want], rel=1e-4), example.id
        compared += 1
        with_history += len(example.context) > 1
        assert [hit.id for hit in reopened.retrieve(example.context, example.dialog_id, k=8).ranked] == [
            hit.id for hit in got
        ]
    assert compared >= 5 and with_history >= 3  # weighted earlier turns took part
    remote.close()


def test_a_collection_built_for_the_other_lexical_mode_is_rebuilt_or_named(tmp_path):
    pytest.importorskip("pymilvus", reason="pymilvus not installed (the 'milvus' extra)")
    pytest.importorskip("milvus_lite", reason="milvus-lite not installed (the 'milvus' extra)")
    from ragdial import datasets
    from ragdial.components import BuildContext, ConfigError
    from ragdial.retrieval.registry import RETRIEVERS

    dstc = datasets.load("dstc11", FIXTURE.parent / "dstc")
    uri = str(tmp_path / "kb.db")
    own = RETRIEVERS.build("milvus", BuildContext(dstc, "en"), uri=uri, lexical="milvus", encoder=None)
    assert own.stale() is None and own.to_config()["lexical"] == "milvus"
    own.close()
    with pytest.raises(ConfigError, match="built for lexical: milvus, not ragdial"):
        RETRIEVERS.build("milvus", BuildContext(dstc, "en"), uri=uri, build="never", encoder=None)
    with pytest.raises(ConfigError, match="retriever 'milvus': lexical must be one of ragdial, milvus, not 'bm25'"):
        RETRIEVERS.build("milvus", BuildContext(dstc, "en"), uri=uri, lexical="bm25", encoder=None)
    rebuilt = RETRIEVERS.build("milvus", BuildContext(dstc, "en"), uri=uri, encoder=None)  # build: missing
    assert rebuilt.stale() is None and rebuilt.count() == len(dstc.kb)
    rebuilt.close()
    with pytest.raises(ConfigError, match="built for lexical: ragdial, not milvus"):  # and the other way round
        RETRIEVERS.build("milvus", BuildContext(dstc, "en"), uri=uri, build="never", lexical="milvus", encoder=None)


def test_a_reopened_collection_scopes_entities_as_the_in_process_retriever(tmp_path):
    """Reopened with the system's knowledge (a restart), the retriever learns entity aliases from the item texts as
    in-process: "golden" is used in other entities' reviews, so it does not name Golden Curry House; the entity
    names alone (all a collection holds) would take it for one and scope the turn to that entity's items."""
    pytest.importorskip("pymilvus", reason="pymilvus not installed (the 'milvus' extra)")
    pytest.importorskip("milvus_lite", reason="milvus-lite not installed (the 'milvus' extra)")
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.retrieval.milvus import MilvusRetriever
    from ragdial.schema import SourceKind

    curry = {"entity": "Golden Curry House"}
    items = [
        Knowledge("c1", "Golden Curry House serves mild curries.", SourceKind.FAQ, curry),
        Knowledge("c2", "Golden Curry House has a small terrace.", SourceKind.FAQ, curry),
        *(
            Knowledge(
                f"s{i}",
                f"Guests of Sunrise Lodge watch the golden hour from the terrace ({i}).",
                SourceKind.REVIEW,
                {"entity": "Sunrise Lodge"},
            )
            for i in range(4)
        ),
    ]
    config = RetrieverConfig(encoder=None, fusion="bm25")
    uri = lite_or_skip(str(tmp_path / "kb.db"))
    MilvusRetriever(uri, "golden", config).build(KnowledgeBase(items))
    context = [user("Is the terrace nice at golden hour?")]
    local = HybridRetriever(KnowledgeBase(items), config)
    reopened = MilvusRetriever(uri, "golden", config, kb=KnowledgeBase(items))
    names_only = MilvusRetriever(uri, "golden", config)
    assert reopened.tracker.focus(context, 0) == local.tracker.focus(context, 0) == []
    assert names_only.tracker.focus(context, 0) == ["Golden Curry House"]
    ranked = [hit.id for hit in reopened.retrieve(context, k=6).ranked]
    assert ranked == [hit.id for hit in local.retrieve(context, k=6).ranked if hit.score > 0]
    assert any(i.startswith("s") for i in ranked)  # the lodge's reviews, left out when scoped to the curry house
    reopened.close()


def test_the_selection_is_the_configured_number_of_ranked_items_unless_asked_for_more(milvus):
    hybrid, _, _ = milvus  # select: 1 (the config's default)
    context = [user("I'm looking at Blue Harbor Inn."), Turn(Speaker.SYSTEM, "Nice."), user("Is there parking?")]
    default = hybrid.retrieve(context, k=3)
    assert len(default.ranked) >= 2 and default.selected == default.ranked[:1]
    assert hybrid.retrieve(context, k=3, select=2).selected == default.ranked[:2]


def test_a_minimum_score_drops_the_ranked_items_below_it(milvus):
    from ragdial.retrieval.base import KnowledgeFilter

    _, lexical, _ = milvus
    context = [user("is there free parking or wifi")]
    every = lexical.retrieve(context, k=5).ranked
    floor = every[1].score
    assert every[-1].score < floor  # the filter has something to drop
    kept = lexical.retrieve(context, k=5, filter=KnowledgeFilter(min_score=floor)).ranked
    assert [(r.item.id, r.score) for r in kept] == [(r.item.id, r.score) for r in every if r.score >= floor]


def test_milvus_dense_scores_are_the_in_process_weighted_mean_over_the_turns(tmp_path):
    """Each candidate's dense score under Milvus is the in-process one (the turns' similarities averaged with the
    turns' weights), not only the same ranking: checked on contexts with earlier turns."""
    pytest.importorskip("pymilvus", reason="pymilvus not installed (the 'milvus' extra)")
    pytest.importorskip("milvus_lite", reason="milvus-lite not installed (the 'milvus' extra)")
    from ragdial.retrieval.base import Scope
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.retrieval.milvus import MilvusRetriever

    dataset, language = _same_dataset("dstc")
    config = RetrieverConfig(encoder="hash", fusion="rrf")
    local = HybridRetriever(dataset.kb, config)
    remote = MilvusRetriever(lite_or_skip(str(tmp_path / "kb.db")), "dense", config, language=language)
    remote.build(dataset.kb, vectors=local.vectors)
    compared = 0
    for example in dataset.examples:
        if len(example.context) < 2:
            continue
        found = remote.score(example.context, Scope(example.dialog_id), 8, None)
        assert found is not None
        keys, scores = found
        want = local.score(example.context, example.dialog_id)
        by_id = {local.items[int(i)].id: float(d) for i, d in zip(want.indices, want.dense, strict=True)}
        assert scores.dense.tolist() == pytest.approx([by_id[key] for key in keys], abs=1e-5), example.id
        compared += 1
    remote.close()
    assert compared >= 3
