"""Retrieval details from the survivors of the fresh seed-31 sample (docs/testing.md, session 9), on small
hand-written inputs: the last-turn BM25 column is the last user turn's, a Milvus collection of Chinese names matches
a name by its sound when built and when reconnected, a triple reranker says how its folds were grouped, and
fine-tuning leaves the input embeddings as shipped."""

from __future__ import annotations

import pytest

from _retrieval_helpers import lite_or_skip, tiny_tuned_encoder
from ragdial.retrieval.analyzer import Analyzer
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.schema import Example, Knowledge, KnowledgeBase, SourceKind, Speaker, Turn

BELL = [
    Knowledge("p", "Bell Inn parking is free for guests", SourceKind.FAQ, {"entity": "Bell Inn"}),
    Knowledge("w", "Bell Inn wifi works in every room", SourceKind.FAQ, {"entity": "Bell Inn"}),
]


def test_the_last_turn_column_scores_the_last_user_turn_alone():
    retriever = HybridRetriever(KnowledgeBase(BELL), RetrieverConfig(encoder=None, fusion="bm25", query="recent"))
    context = [
        Turn(Speaker.USER, "Is there parking at the Bell Inn?"),
        Turn(Speaker.SYSTEM, "Yes, it is free."),
        Turn(Speaker.USER, "And wifi?"),
    ]
    scores = retriever.score(context)
    last = dict(zip((retriever.items[int(i)].id for i in scores.indices), scores.bm25_last.tolist(), strict=True))
    assert last["w"] > 0 and last["p"] == 0, last  # "wifi" only: the parking turn is not the last one
    alone = retriever.score([Turn(Speaker.USER, "Is there parking at the Bell Inn?")])
    assert alone.bm25_last.tolist() == pytest.approx(alone.bm25.tolist())  # one turn: the whole query


def test_a_milvus_collection_of_chinese_names_matches_a_name_by_its_sound_built_and_reconnected(tmp_path):
    uri = lite_or_skip(str(tmp_path / "zh.db"))
    from ragdial.retrieval.milvus import MilvusRetriever

    items = [
        Knowledge("a", "金陵饭店有免费停车场", SourceKind.FAQ, {"entity": "金陵饭店"}),
        Knowledge("b", "和平宾馆早餐七点开始", SourceKind.FAQ, {"entity": "和平宾馆"}),
    ]
    config = RetrieverConfig(encoder=None, fusion="bm25", analyzer=Analyzer(language="zh", pinyin=True))
    turn = "金灵饭店有停车场吗"  # 金灵 as an ASR might write 金陵: the same sound
    built = MilvusRetriever(uri, "zh_names", config, language="zh")
    try:
        built.build(KnowledgeBase(items))
        assert built.tracker.find(turn) == ["金陵饭店"]
        again = MilvusRetriever(uri, "zh_names", config, language="zh")
        assert again.tracker.find(turn) == ["金陵饭店"]  # the names read back keep matching by sound
        ranked = again.retrieve([Turn(Speaker.USER, "金陵饭店的停车场收费吗")], k=2).ranked
        assert [r.item.id for r in ranked] == ["a"]  # scoped to the named hotel (a Chinese name in the filter)
        again.close()
    finally:
        built.close()


def test_a_triple_reranker_trained_without_groups_says_it_folded_by_dialog():
    from ragdial.datasets import kdconv
    from ragdial.retrieval import triples

    film = [kdconv.triple(f, "上映时间", y) for f, y in (("山城", "2001年"), ("海港", "1998年"), ("长河", "2010年"))]
    examples = [
        Example(
            f"{i}:{n}",
            f"{i}:{n}",
            1,
            [Turn(Speaker.USER, f"{t.fields['entity']}是哪年上映的？" + "！" * n)],
            True,
            [t.id],
        )
        for i, t in enumerate(film)
        for n in range(2)
    ]
    retriever = HybridRetriever(KnowledgeBase(film), RetrieverConfig(fusion="rrf", encoder="hash"))
    info = triples.train(retriever, examples, rounds=3, folds=2).info
    assert (info["grouped_by"], info["groups"]) == ("dialog folds", 2)  # two folds of whole dialogs


def test_fine_tuning_leaves_the_input_embeddings_as_shipped():
    scorer = tiny_tuned_encoder(hidden=32, layers=1)
    import torch

    before = scorer.model.get_input_embeddings().weight.detach().clone()
    layer = next(p for n, p in scorer.model.named_parameters() if "encoder" in n).detach().clone()
    pairs = [("Is it quiet?", "The rooms were quiet."), ("Is it quiet?", "Breakfast was good.")] * 2
    scorer.fit(pairs, [1.0, 0.0, 1.0, 0.0], epochs=3, learning_rate=1e-2)
    assert torch.equal(scorer.model.get_input_embeddings().weight, before)
    assert not torch.equal(next(p for n, p in scorer.model.named_parameters() if "encoder" in n), layer)  # it learnt
