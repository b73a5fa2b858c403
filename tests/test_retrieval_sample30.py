"""Retrieval details from the survivors of the fresh seed-30 sample (docs/testing.md, session 9), on small
hand-written inputs: a name typed one letter short or long, a bad analyzer option and an index whose item count
does not match named, the transfer reranker's "agreement with the fused top 3" and the examples it trains on, a
triple reranker's training rounds and a save into a folder that exists, a BM25-only Milvus collection without
vectors."""

from __future__ import annotations

import numpy as np
import pytest

from _retrieval_helpers import lite_or_skip
from ragdial.errors import RagdialError
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.entities import EntityTracker
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.retrieval.index import read_items, save_index
from ragdial.retrieval.pool import CandidateScores
from ragdial.schema import Example, Knowledge, KnowledgeBase, SourceKind, Speaker, Turn


def named(*names: str) -> list[Knowledge]:
    return [
        Knowledge(f"k{i}", f"{name} is open daily", SourceKind.FAQ, {"entity": name}) for i, name in enumerate(names)
    ]


def test_a_long_name_typed_one_letter_short_or_long_is_found():
    tracker = EntityTracker(named("Gardenia", "Bloom"))
    assert tracker.find("is the gardnia open late?") == ["Gardenia"]  # the "e" left out
    assert tracker.find("is the gardeniia open late?") == ["Gardenia"]  # an "i" typed twice
    assert tracker.find("is the gardnai open late?") == []  # a letter left out and two swapped: two errors


def test_an_analyzer_option_that_is_not_a_mapping_is_named():
    with pytest.raises(RagdialError, match=r"^analyzer must be a mapping of Analyzer fields, not 'jieba'$"):
        RetrieverConfig.from_dict({"analyzer": "jieba"})


def test_an_index_whose_items_file_lost_a_line_says_how_many_of_how_many(tmp_path):
    kb = KnowledgeBase(named("Gardenia", "Bloom", "Nandos"))
    directory = save_index(HybridRetriever(kb, RetrieverConfig(encoder=None)), tmp_path / "index")
    items = directory / "items.jsonl"
    assert [k.id for k in read_items(directory)] == ["k0", "k1", "k2"]
    items.write_text("".join(items.read_text(encoding="utf-8").splitlines(keepends=True)[:2]), encoding="utf-8")
    with pytest.raises(RagdialError, match=r"items\.jsonl: 2 items, index\.json says 3$"):
        read_items(directory)


def test_top_agreement_is_the_cosine_to_the_mean_of_the_fused_top_three():
    from ragdial.retrieval import transfer

    # items 1-3 say the same thing, item 0 something else; item 0 is fused last, so the top 3 are items 1-3
    items = [
        Knowledge("a", "Pets are welcome in every room", SourceKind.REVIEW, {"entity": "Bell Inn"}),
        *(Knowledge(c, "The breakfast buffet opens at seven", SourceKind.REVIEW, {"entity": "Bell Inn"}) for c in "bc"),
        Knowledge("d", "The breakfast buffet opens at seven", SourceKind.REVIEW, {"entity": "Bell Inn"}),
    ]
    pool = HybridRetriever(KnowledgeBase(items), RetrieverConfig(encoder="hash", entity_scope=False))
    assert pool.vectors is not None
    scores = CandidateScores(
        indices=np.array([0, 1, 2, 3]),
        bm25=np.zeros(4, np.float32),
        dense=np.zeros(4, np.float32),
        fused=np.array([1.0, 4.0, 3.0, 2.0], np.float32),
        bm25_last=np.zeros(4, np.float32),
        dense_last=np.zeros(4, np.float32),
    )
    x = transfer.features(pool, [Turn(Speaker.USER, "When is breakfast?")], scores)
    agreement = x[:, transfer.FEATURES.index("top_agreement")]
    assert agreement[1:].tolist() == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)  # each is the top-3 mean itself
    assert agreement[0] < 0.9  # the pets review is not what the top 3 say


def _asked(i: int, text: str, needs: bool, gold: list[str]) -> Example:
    context = [Turn(Speaker.USER, f"hello {i}"), Turn(Speaker.SYSTEM, "hi"), Turn(Speaker.USER, text)]
    return Example(f"d{i}:2", f"d{i}", 2, context, needs_knowledge=needs, knowledge_ids=gold)


def test_the_transfer_reranker_trains_only_on_knowledge_seeking_turns_with_gold():
    from ragdial.retrieval import transfer

    kb = KnowledgeBase(
        Knowledge(f"{e[0]}{a}", f"{e} {a} info", SourceKind.FAQ, {"entity": e})
        for e in ("Gardenia", "Bloom")
        for a in ("parking", "wifi")
    )
    asked = [("Gardenia", "parking"), ("Gardenia", "wifi"), ("Bloom", "parking"), ("Bloom", "wifi")]
    examples = [_asked(i, f"does {e} have {a}?", True, [f"{e[0]}{a}"]) for i, (e, a) in enumerate(asked)]
    examples += [
        _asked(8, "does Bloom have parking?", False, ["Bparking"]),  # gold ids on a turn that needs none
        _asked(9, "does Gardenia have wifi?", True, []),  # knowledge-seeking, but no gold to learn from
    ]
    retriever = HybridRetriever(kb, RetrieverConfig(encoder=None, entity_scope=False))
    info = transfer.train(retriever, examples, rounds=3, folds=2, widen=False).info
    assert (info["queries"], info["rows"], info["positives"]) == (4, 4 * 4, 4)


def test_a_triple_reranker_keeps_its_rounds_and_saves_into_a_folder_that_exists(tmp_path):
    from ragdial.datasets import kdconv
    from ragdial.retrieval import triples
    from ragdial.retrieval.rerank import load_reranker

    film = [
        kdconv.triple(film, attribute, value)
        for film, values in (("山城", ("2001年", "林一")), ("海港", ("1998年", "王二")))
        for attribute, value in zip(("上映时间", "导演"), values, strict=True)
    ]
    asks = {"上映时间": "{e}是哪年上映的？", "导演": "{e}的导演是谁？"}
    examples = [
        Example(
            f"{item.fields['entity']}:{n}",
            f"{item.fields['entity']}:{n}",
            1,
            [Turn(Speaker.USER, asks[item.fields["attribute"]].format(e=item.fields["entity"]) + "！" * n)],
            True,
            [item.id],
        )
        for n in range(3)
        for item in film
    ]
    retriever = HybridRetriever(KnowledgeBase(film), RetrieverConfig(fusion="rrf", encoder="hash"))
    model = triples.train(retriever, examples, rounds=4, folds=2)
    assert model.info["rounds"] == 4
    target = tmp_path / "triples"
    target.mkdir()  # an existing (empty) folder, as a user's output folder often is
    model.save(target)
    model.save(target)  # saved again over itself
    loaded = load_reranker(target)
    assert isinstance(loaded, triples.TripleReranker) and loaded.info == model.info


def test_a_bm25_only_milvus_collection_stores_no_vectors_even_with_an_encoder_named(tmp_path):
    uri = lite_or_skip(str(tmp_path / "kb.db"))
    from ragdial.retrieval.milvus import MilvusRetriever

    lexical = MilvusRetriever(uri, "bm25_only", RetrieverConfig(encoder="hash", fusion="bm25"), language="en")
    try:
        assert lexical.encoder is None  # no encoder loaded for a fusion that never reads vectors
        lexical.build(KnowledgeBase(named("Gardenia", "Bloom")))
        fields = [f["name"] for f in lexical.client.describe_collection("bm25_only")["fields"]]
        assert "dense" not in fields and "sparse" in fields, fields
        assert [s.item.id for s in lexical.retrieve([Turn(Speaker.USER, "is Bloom open?")], k=1).ranked] == ["k1"]
    finally:
        lexical.close()
