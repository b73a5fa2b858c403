"""Entity names with typing errors, a saved index's extra metadata, a cited item read back, the Milvus registry's
build modes, the transfer reranker's fallback and training errors, a saved index's config with another reranker and
the steps an index written in chunks reports: small hand-written cases."""

from __future__ import annotations

import numpy as np
import pytest

from ragdial.components import BuildContext, ConfigError
from ragdial.errors import RagdialError
from ragdial.retrieval.base import ScoredKnowledge
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.entities import EntityTracker
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.retrieval.index import read_meta, save_index
from ragdial.retrieval.transfer import best_fallback
from ragdial.schema import Dataset, Example, Knowledge, KnowledgeBase, SourceKind, Speaker, Turn


def named(*names: str) -> list[Knowledge]:
    return [
        Knowledge(f"k{i}", f"{name} is open daily", SourceKind.FAQ, {"entity": name}) for i, name in enumerate(names)
    ]


def test_a_long_one_word_name_is_found_with_two_neighbouring_letters_swapped():
    tracker = EntityTracker(named("Gardenia", "Bloom"))
    assert tracker.find("is the gardenai open late?") == ["Gardenia"]  # "ia" typed "ai"
    # two letters swapped that are not neighbours is two errors, not one
    assert tracker.find("is the gardinea open late?") == []


def test_a_one_word_name_of_six_letters_forgives_a_typo_and_one_of_five_does_not():
    tracker = EntityTracker(named("Nandos", "Bloom"))
    assert tracker.find("book a table at nandso please") == ["Nandos"]
    assert tracker.find("book a table at blom please") == []  # "bloom" is too short to guess at
    assert tracker.find("book a table at bloom please") == ["Bloom"]


def test_a_misspelt_one_word_name_before_street_is_an_address():
    tracker = EntityTracker(named("Gardenia"))
    assert tracker.find("the shop on gardenai street") == []
    assert tracker.find("the shop on gardenai please") == ["Gardenia"]


def test_a_cited_item_is_read_back_with_its_score():
    item = Knowledge("f1", "Parking is free", SourceKind.FAQ, {"entity": "Bell Inn"}, scope="dialog-3")
    back = ScoredKnowledge.from_dict(ScoredKnowledge(item, 0.75).to_dict())
    assert (back.item.id, back.item.text, back.item.source, back.item.scope, back.score) == (
        "f1",
        "Parking is free",
        SourceKind.FAQ,
        "dialog-3",
        0.75,
    )
    assert back.item.fields == {}  # the cited form has no structured fields
    assert ScoredKnowledge.from_dict({"id": "a", "source": "faq", "text": "t", "score": "high"}).score == 0.0


def test_a_saved_index_keeps_the_extra_metadata_it_was_given(tmp_path):
    retriever = HybridRetriever(KnowledgeBase(named("Gardenia", "Bloom")), RetrieverConfig(encoder=None))
    save_index(retriever, tmp_path / "index", extra={"dataset": "hand-written", "split": "dev"})
    meta = read_meta(tmp_path / "index")
    assert (meta["dataset"], meta["split"], meta["items"], meta["encoder"]) == ("hand-written", "dev", 2, None)


def test_the_milvus_registry_refuses_an_unknown_build_mode_before_connecting(tmp_path):
    from ragdial.retrieval.registry import milvus

    ctx = BuildContext(Dataset("demo", "val", "en", KnowledgeBase(named("Gardenia")), [], []), "en")
    with pytest.raises(ConfigError, match=r"build must be one of missing, always, never, not 'sometimes'"):
        milvus(ctx, str(tmp_path / "absent" / "kb.db"), build="sometimes")


def test_the_fallback_of_a_single_unsure_wrong_query_is_the_lowest_that_keeps_the_given_order():
    # the reranker puts item 1 first at 0.12, but item 0 (first in the given order) is gold: from fallback 0.15 on,
    # the given order is kept (MRR 1 instead of 1/2)
    assert best_fallback([np.array([0.1, 0.12])], [np.array([True, False])]) == 0.15


def test_training_a_transfer_reranker_without_gold_knowledge_says_so():
    from ragdial.retrieval import transfer

    retriever = HybridRetriever(KnowledgeBase(named("Gardenia", "Bloom")), RetrieverConfig(encoder=None))
    chitchat = Example("d1:1", "d1", 1, [Turn(Speaker.USER, "hello there")], needs_knowledge=False, response="Hi!")
    with pytest.raises(RagdialError, match="no knowledge-seeking examples with gold knowledge to train the reranker"):
        transfer.train(retriever, [chitchat])


def _hotel_examples() -> tuple[KnowledgeBase, list[Example]]:
    kb = KnowledgeBase(
        Knowledge(f"{e[0]}{a}", f"{e} {a} info", SourceKind.FAQ, {"entity": e})
        for e in ("Gardenia", "Bloom")
        for a in ("parking", "wifi")
    )
    asked = [("Gardenia", "parking"), ("Gardenia", "wifi"), ("Bloom", "parking"), ("Bloom", "wifi")] * 2
    examples = [
        Example(
            f"d{i}:2",
            f"d{i}",
            2,
            [Turn(Speaker.USER, f"hello {i}"), Turn(Speaker.SYSTEM, "hi"), Turn(Speaker.USER, f"does {e} have {a}?")],
            needs_knowledge=True,
            knowledge_ids=[f"{e[0]}{a}"],
        )
        for i, (e, a) in enumerate(asked)
    ]
    return kb, examples


def test_widening_trains_the_transfer_reranker_on_the_unscoped_candidates_too():
    from ragdial.retrieval import transfer

    kb, examples = _hotel_examples()
    scoped = HybridRetriever(kb, RetrieverConfig(encoder=None, entity_scope=True))
    # scoped, each of the 8 questions has the 2 items of the hotel it names; unscoped, all 4 items
    wide = transfer.train(scoped, examples, rounds=3, folds=2, widen=True).info
    assert wide == {"queries": 8, "rows": 8 * (2 + 4), "positives": 8 * 2, "rounds": 3, "widen": True}
    narrow = transfer.train(scoped, examples, rounds=3, folds=2, widen=False).info
    assert narrow == {"queries": 8, "rows": 8 * 2, "positives": 8, "rounds": 3, "widen": False}
    unscoped = HybridRetriever(kb, RetrieverConfig(encoder=None, entity_scope=False))
    assert transfer.train(unscoped, examples, rounds=3, folds=2, widen=True).info["rows"] == 8 * 4  # nothing to widen


def test_the_focus_carries_only_the_given_number_of_turns_before_the_last_naming_one():
    tracker = EntityTracker(named("Gardenia", "Bloom", "Acorn House"))
    context = [
        Turn(Speaker.USER, "Is Gardenia nice?"),
        Turn(Speaker.USER, "What about Bloom?"),
        Turn(Speaker.USER, "And Acorn House?"),
        Turn(Speaker.USER, "Does it have parking?"),
    ]
    assert tracker.focus(context) == ["Acorn House"]
    assert tracker.focus(context, carry_turns=1) == ["Acorn House", "Bloom"]  # not Gardenia, two turns back
    assert tracker.focus(context, carry_turns=5) == ["Acorn House", "Gardenia", "Bloom"]


def test_a_knowledge_base_is_chinese_when_most_of_its_texts_are():
    from ragdial.retrieval.milvus import language_of

    zh = [Knowledge(f"z{i}", text, SourceKind.FAQ) for i, text in enumerate(["停车免费", "早餐七点开始", "Wifi free"])]
    assert language_of(KnowledgeBase(zh)) == "zh"
    en = [*zh[2:], Knowledge("e1", "Pets are welcome", SourceKind.FAQ), Knowledge("z9", "可以带宠物", SourceKind.FAQ)]
    assert language_of(KnowledgeBase(en)) == "en"  # one Chinese text of three


def test_a_saved_index_is_memory_mapped_unless_asked_not_to_be(tmp_path):
    from ragdial.retrieval.registry import index

    kb = KnowledgeBase(named("Gardenia", "Bloom"))
    save_index(HybridRetriever(kb, RetrieverConfig(encoder="hash")), tmp_path / "index")
    ctx = BuildContext(Dataset("demo", "val", "en", kb, [], []), "en")
    assert isinstance(index(ctx, str(tmp_path / "index")).vectors, np.memmap)
    assert not isinstance(index(ctx, str(tmp_path / "index"), mmap=False).vectors, np.memmap)


def test_a_saved_index_with_another_reranker_names_it_in_its_config(tmp_path):
    from ragdial.retrieval import rerank
    from ragdial.retrieval.registry import index

    kb, examples = _hotel_examples()
    retriever = HybridRetriever(kb, RetrieverConfig(encoder=None, entity_scope=False))
    save_index(retriever, tmp_path / "index")
    folder = str(rerank.train(retriever, examples, rounds=3, folds=2).save(tmp_path / "reranker"))
    ctx = BuildContext(Dataset("demo", "val", "en", kb, [], []), "en")
    plain = index(ctx, str(tmp_path / "index"))
    assert plain.reranker is None and plain.to_config() == {"name": "index", "path": str(tmp_path / "index")}
    reranked = index(ctx, str(tmp_path / "index"), reranker=folder)
    assert reranked.reranker is not None  # a config written from it builds the same retriever, reranker included
    assert reranked.to_config() == {"name": "index", "path": str(tmp_path / "index"), "reranker": folder}


def test_an_index_written_in_chunks_reports_each_step_under_its_name(tmp_path, monkeypatch):
    # the CLI adds the counts per step name ("items", "bm25"): a chunk reported under another name would crash it
    from ragdial.retrieval import index
    from ragdial.retrieval.index import load_index, write_index

    monkeypatch.setattr(index, "CHUNK", 3)  # 7 items: chunks of 3, 3 and 1
    kb = KnowledgeBase(named("Gardenia", "Bloom", "Acorn House", "Birch", "Cedar", "Dune", "Elm"))
    heard: list[tuple[str, int]] = []
    write_index(kb, tmp_path / "i", RetrieverConfig(encoder="hash"), progress=lambda s, n: heard.append((s, n)))
    assert [h for h in heard if h[0] != "bm25"] == [("items", 3), ("items", 3), ("items", 1)]
    assert sum(n for step, n in heard if step == "bm25") == 7
    built = HybridRetriever(kb, RetrieverConfig(encoder="hash"))
    np.testing.assert_allclose(load_index(tmp_path / "i").vectors, built.vectors, atol=1e-6)  # encoded by chunk


def test_a_saved_chinese_index_finds_a_name_by_its_sound_as_in_memory(tmp_path):
    # 金灵饭店 (as an ASR might write it) sounds like 金陵饭店: with pinyin on, the saved tracker matches it too
    from ragdial.retrieval.analyzer import Analyzer
    from ragdial.retrieval.index import load_index, write_index

    items = [
        Knowledge("a", "金陵饭店有免费停车场", SourceKind.FAQ, {"entity": "金陵饭店"}),
        Knowledge("b", "和平宾馆早餐七点开始", SourceKind.FAQ, {"entity": "和平宾馆"}),
    ]
    config = RetrieverConfig(encoder=None, analyzer=Analyzer(pinyin=True))
    write_index(KnowledgeBase(items), tmp_path / "i", config)
    turn = "金灵饭店有停车场吗"
    assert load_index(tmp_path / "i").tracker.find(turn) == ["金陵饭店"]
    assert HybridRetriever(KnowledgeBase(items), config).tracker.find(turn) == ["金陵饭店"]


def test_a_reranker_trained_on_fewer_dialogs_than_folds_scores_the_interaction_in_sample():
    from ragdial.retrieval import rerank

    kb, examples = _hotel_examples()
    retriever = HybridRetriever(kb, RetrieverConfig(encoder=None, entity_scope=False))
    model = rerank.train(retriever, examples[:4], rounds=3, folds=5)  # 4 dialogs < 5 folds: no held-out fold
    assert model.interaction is not None and (model.threshold, model.relative) == (0.5, 0.0)
    with pytest.raises(
        RagdialError, match=r"^no knowledge-seeking examples with gold knowledge to train the reranker on$"
    ):
        rerank.train(retriever, [Example("d9:1", "d9", 1, [Turn(Speaker.USER, "hello")], needs_knowledge=False)])
    from ragdial.retrieval import transfer

    with pytest.raises(
        RagdialError, match=r"^no knowledge-seeking examples with gold knowledge to train the reranker on$"
    ):
        transfer.train(retriever, [Example("d9:1", "d9", 1, [Turn(Speaker.USER, "hello")], needs_knowledge=False)])
