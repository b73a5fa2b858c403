"""Retrieval details the ranking tests do not pin, on small hand-written items: which index files a lexical-only
configuration writes, a retriever's default configuration, an analyzer given as a mapping, which entity names a
tracker keeps and whether it learns short names, dense-only fusion, the reranker's selection floor, the source
column of an index, the second encoder's columns without a user turn, and a domain named as a turn's last word.
Written from surviving mutants of ``ragdial.retrieval`` (docs/testing.md, sessions 5-6)."""

from __future__ import annotations

import numpy as np
import pytest

from ragdial.retrieval import transfer
from ragdial.retrieval.analyzer import Analyzer
from ragdial.retrieval.base import Retrieval, Retriever, ScoredKnowledge
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.entities import EntityTracker
from ragdial.retrieval.index import read_meta, write_index
from ragdial.retrieval.pool import CandidateScores, KnowledgePool, fuse
from ragdial.retrieval.rerank import cut_by_score
from ragdial.retrieval.store import ColumnsBuilder
from ragdial.schema import Knowledge, KnowledgeBase, SourceKind, Speaker, Turn

ITEMS = [
    Knowledge("h1:parking", "Free parking is available at Sunrise Lodge", SourceKind.FAQ, {"entity": "Sunrise Lodge"}),
    Knowledge("h1:wifi", "Wifi at the Sunrise is free in every room", SourceKind.FAQ, {"entity": "Sunrise Lodge"}),
    Knowledge("h2:pets", "Pets are not allowed at Harbour Inn", SourceKind.REVIEW, {"entity": "Harbour Inn"}),
    Knowledge("x:rules", "Check-out is at noon everywhere", SourceKind.FAQ, {"entity": ""}),
    Knowledge("x:number", "Room 7 has a view", SourceKind.FAQ, {"entity": 7}),
]


def test_a_lexical_only_index_keeps_no_vectors_even_with_an_encoder_named(tmp_path):
    # fusion bm25 uses no dense score, so the encoder named in the config is not run and no vector is written
    write_index(ITEMS, tmp_path / "bm25", RetrieverConfig(encoder="hash", fusion="bm25"))
    assert read_meta(tmp_path / "bm25")["encoder"] is None
    assert not (tmp_path / "bm25" / "vectors.npy").exists()
    write_index(ITEMS, tmp_path / "rrf", RetrieverConfig(encoder="hash", fusion="rrf"))
    assert read_meta(tmp_path / "rrf")["encoder"] is not None
    assert (tmp_path / "rrf" / "vectors.npy").is_file()


def test_a_retriever_without_its_own_config_is_named_by_its_class():
    class Nothing(Retriever):
        def retrieve(self, context, scope=None, k=20, filter=None, select=None) -> Retrieval:
            return Retrieval()

    assert Nothing().to_config() == {"name": f"{Nothing.__module__}:Nothing"}


def test_an_analyzer_given_as_a_mapping_is_built():
    config = RetrieverConfig(encoder=None, analyzer={"language": "en", "stem": False, "pinyin": True})
    assert config.analyzer == Analyzer(language="en", stem=False, pinyin=True)


def test_the_tracker_keeps_text_names_only_and_learns_short_names_only_when_asked():
    learning = EntityTracker(ITEMS)
    assert learning.to_dict()["names"] == ["Sunrise Lodge", "Harbour Inn"]  # not "" nor 7
    assert learning.find("is the sunrise quiet?") == ["Sunrise Lodge"]  # "Sunrise" alone, learnt from the items
    fixed = EntityTracker(ITEMS, learn=False)
    assert fixed.to_dict()["learned"] == [] and fixed.find("is the sunrise quiet?") == []
    assert fixed.find("is the Sunrise Lodge quiet?") == ["Sunrise Lodge"]


def test_dense_fusion_is_the_dense_scores():
    bm25, dense = np.array([3.0, 0.0], np.float32), np.array([0.1, 0.9], np.float32)
    assert fuse(RetrieverConfig(encoder="hash", fusion="dense"), bm25, dense).tolist() == dense.tolist()


def test_the_selection_floor_is_a_share_of_the_best_score():
    ranked = [ScoredKnowledge(item, score) for item, score in zip(ITEMS, [0.8, 0.5, 0.3], strict=False)]
    # floor max(0.1, 0.5 x 0.8) = 0.4: the first two; a floor of 0.9 keeps the best one alone
    assert [r.score for r in cut_by_score(ranked, 0.1, 0.5, 3)] == [0.8, 0.5]
    assert [r.score for r in cut_by_score(ranked, 0.9, 0.5, 3)] == [0.8]
    assert [r.score for r in cut_by_score(ranked, 0.1, 0.5, 1)] == [0.8]


def test_the_source_column_codes_each_kind_once():
    builder = ColumnsBuilder()
    for item in ITEMS[:3]:
        builder.add(item)
    columns = builder.build()
    assert columns.sources == ["faq", "review"] and columns.source.tolist() == [0, 0, 1]
    assert columns.source_codes([SourceKind.REVIEW]) == [1]


def _scores(n: int) -> CandidateScores:
    zeros = np.zeros(n, np.float32)
    return CandidateScores(np.arange(n), zeros, zeros, np.arange(n, 0, -1).astype(np.float32), zeros, zeros)


def test_the_second_encoders_columns_are_zero_without_a_user_turn():
    pool = KnowledgePool(KnowledgeBase(ITEMS[:3]), RetrieverConfig(encoder=None))
    out = transfer.aux_features(pool, [Turn(Speaker.SYSTEM, "Welcome to the Sunrise Lodge.")], _scores(3), "hash")
    assert out.shape == (3, len(transfer.AUX_FEATURES)) and not out.any()


@pytest.mark.parametrize("said", ["I have a question about trains", "trains?", "Any trains"])
def test_a_domain_named_as_the_turns_last_word_is_in_scope(said):
    items = [
        Knowledge("f1", "Trains leave every hour", SourceKind.FAQ, {"domain": "train", "title": "How often?"}),
        Knowledge("f2", "Rooms are cleaned daily", SourceKind.FAQ, {"domain": "hotel", "title": "Cleaning?"}),
    ]
    pool = KnowledgePool(KnowledgeBase(items), RetrieverConfig(encoder=None))
    x = transfer.features(pool, [Turn(Speaker.USER, said)], _scores(2))
    assert x[:, transfer.FEATURES.index("scope_recency")].tolist() == [1, 0]
