"""Retrieval behaviours from the survivors of the fresh seed-33 sample (docs/testing.md, "Session 10"): the triple
columns' gap to the best attribute cosine, a precedent's F1, a saved reranker whose training summary is not an
object named by its file, a lone candidate scored by the transfer model, a Milvus source filter and a Milvus
retriever opened before its collection existed (milvus-lite), and an entity without items having no positions (as
integers that still index). Small hand-written inputs, data absent."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from ragdial.errors import RagdialError
from ragdial.retrieval.rerank import FEATURES, META_FILE, MODEL_FILE, Reranker
from ragdial.schema import Knowledge, SourceKind


def test_the_attribute_gap_column_is_the_best_attribute_cosine_minus_each():
    from ragdial.retrieval.triples import ENCODER_FEATURES, encoder_features

    items = [
        Knowledge(f"t:{a}", f"山城 {a} {v}", SourceKind.KG_TRIPLE, {"entity": "山城", "attribute": a, "value": v})
        for a, v in (("导演", "林一"), ("上映时间", "2001年"), ("主演", "王二"))
    ]
    x = encoder_features("hash", "山城的导演是谁？", items)
    assert len(ENCODER_FEATURES) == 5 and np.isfinite(x).all()
    assert x[:, 4] == pytest.approx(x[:, 3].max() - x[:, 3])
    assert x[:, 1] == pytest.approx(x[:, 0].max() - x[:, 0])


def test_a_precedents_f1_against_the_gold_set():
    from ragdial.retrieval.precedent import _f1

    assert _f1(["a", "b"], ["a"]) == pytest.approx(2 / 3)
    assert _f1(["a", "b"], ["a", "b", "c", "d"]) == pytest.approx(2 / 3)
    assert _f1(["a"], ["b"]) == 0.0


def test_a_saved_reranker_whose_info_is_not_an_object_is_named_by_its_file(tmp_path):
    import lightgbm

    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, len(FEATURES)))
    data = lightgbm.Dataset(x, (x[:, 0] > 0).astype(int))
    booster = lightgbm.train({"objective": "binary", "verbose": -1, "num_threads": 1}, data, num_boost_round=2)
    booster.save_model(str(tmp_path / MODEL_FILE))
    meta = {"features": list(FEATURES), "threshold": 0.5, "max_select": 3, "depth": 10, "info": [1]}
    (tmp_path / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    message = f"{tmp_path / META_FILE}: field 'info' must be a JSON object, got list"
    with pytest.raises(RagdialError, match=re.escape(message)):
        Reranker.load(tmp_path)


class OneProbability:
    """Stands in for LightGBM: the same probability for every candidate."""

    def __init__(self, p: float) -> None:
        self.p = p

    def predict(self, rows: np.ndarray) -> np.ndarray:
        return np.full(len(rows), self.p)


def test_the_transfer_reranker_scores_a_lone_candidate_with_the_model():
    from ragdial.retrieval import transfer
    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.schema import KnowledgeBase, Speaker, Turn

    kb = KnowledgeBase([Knowledge("b:1", "Every rental comes with a free helmet.", SourceKind.FAQ, {})])
    retriever = HybridRetriever(kb, RetrieverConfig(fusion="rrf", encoder="hash"))
    context = [Turn(Speaker.USER, "Do you rent helmets with the bikes?")]
    scores = retriever.score(context)
    assert len(scores.indices) == 1
    sure = transfer.TransferReranker(OneProbability(0.8), fallback=0.4)
    assert sure.predict(retriever, context, scores).tolist() == pytest.approx([0.8])


def test_an_entity_without_items_has_no_positions_and_they_still_index():
    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.schema import KnowledgeBase

    kb = KnowledgeBase(
        [Knowledge(f"g:{i}", text, SourceKind.FAQ, {"entity": "Gardenia"}) for i, text in enumerate(("a", "b"))]
    )
    retriever = HybridRetriever(kb, RetrieverConfig(encoder=None))
    assert retriever.entity_items("Gardenia").tolist() == [0, 1]
    none = retriever.entity_items("Nowhere Lodge")
    assert none.dtype == np.int64 and len(none) == 0
    assert [retriever.items[int(i)].id for i in np.concatenate([none, retriever.entity_items("Gardenia")])] == [
        "g:0",
        "g:1",
    ]


def test_a_milvus_source_filter_keeps_only_those_sources_and_the_entity_scope(tmp_path):
    from _retrieval_helpers import lite_or_skip

    uri = lite_or_skip(str(tmp_path / "kb.db"))
    from ragdial.retrieval.base import KnowledgeFilter
    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.milvus import MilvusRetriever
    from ragdial.schema import KnowledgeBase, Speaker, Turn

    kb = KnowledgeBase(
        Knowledge(f"{kind.value}:{name}", f"{name} parking {text}", kind, {"entity": name})
        for name in ("Gardenia", "Bloom")
        for kind, text in ((SourceKind.FAQ, "costs five pounds"), (SourceKind.REVIEW, "was easy to find"))
    )
    lexical = MilvusRetriever(uri, "sources", RetrieverConfig(encoder=None, fusion="bm25"), language="en")
    try:
        lexical.build(kb)
        context = [Turn(Speaker.USER, "Is there parking at the Gardenia?")]
        reviews = lexical.retrieve(context, k=4, filter=KnowledgeFilter(sources=(SourceKind.REVIEW,))).ranked
        assert [r.item.id for r in reviews] == ["review:Gardenia"]  # a review, and of the entity asked about
    finally:
        lexical.close()


def test_a_milvus_retriever_opened_before_its_collection_was_built_searches_it_afterwards(tmp_path):
    from _retrieval_helpers import lite_or_skip

    uri = lite_or_skip(str(tmp_path / "kb.db"))
    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.milvus import MilvusRetriever
    from ragdial.schema import KnowledgeBase, Speaker, Turn

    config = RetrieverConfig(encoder=None, fusion="bm25")
    early = MilvusRetriever(uri, "later", config, language="en")  # no collection yet
    builder = MilvusRetriever(uri, "later", config, language="en")
    try:
        context = [Turn(Speaker.USER, "Is the Gardenia open late?")]
        assert early.retrieve(context, k=2).ranked == []
        builder.build(KnowledgeBase([Knowledge("g", "Gardenia is open late daily", SourceKind.FAQ, {})]))
        assert [r.item.id for r in early.retrieve(context, k=2).ranked] == ["g"]
    finally:
        builder.close()
        early.close()
