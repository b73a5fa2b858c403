"""The learned reranker's feature row of each candidate, every column worked out by hand on three hand-written items
(one per source kind, one without an entity), and an approximate dense index built chunk by chunk."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragdial.retrieval import dense, rerank
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.pool import CandidateScores, KnowledgePool
from ragdial.retrieval.rerank import FEATURES
from ragdial.schema import Knowledge, KnowledgeBase, SourceKind, Speaker, Turn

ITEMS = [
    Knowledge(
        "a",
        "The pool opens at nine",
        SourceKind.REVIEW,
        {"entity": "Acorn House", "attribute": "pool", "value": "nine", "title": "Pool hours"},
    ),
    Knowledge("b", "Parking is free", SourceKind.FAQ, {"entity": "Bell Inn", "attribute": "parking", "value": "free"}),
    Knowledge("c", "Breakfast is served daily", SourceKind.SNIPPET),
]
QUERY = "Does the pool at Acorn House open at nine?"  # tokens: pool acorn hous open nine
CONTEXT = [
    Turn(Speaker.USER, "Is parking included at the Bell Inn?"),
    Turn(Speaker.SYSTEM, "Yes, parking is free there.", knowledge_ids=["b"]),
    Turn(Speaker.USER, QUERY),
]


def _scores() -> CandidateScores:
    return CandidateScores(
        indices=np.array([0, 1, 2]),
        bm25=np.array([4.0, 1.0, 0.0], np.float32),
        dense=np.array([0.5, 0.9, 0.2], np.float32),
        fused=np.array([3.0, 2.0, 1.0], np.float32),
        bm25_last=np.array([2.0, 0.5, 0.0], np.float32),
        dense_last=np.array([0.4, 0.3, 0.1], np.float32),
        focus=["Acorn House"],
        mention_age={"Acorn House": 0},
        query=QUERY,
    )


def test_every_feature_column_of_three_candidates():
    pool = KnowledgePool(KnowledgeBase(ITEMS), RetrieverConfig(encoder=None))
    x = rerank.features(pool, CONTEXT, _scores())
    assert x.shape == (3, len(FEATURES))
    ln2, ln3 = math.log(2), math.log(3)
    expected = {
        "bm25": [4, 1, 0],
        "bm25_last": [2, 0.5, 0],
        "bm25_rel": [1, 0.25, 0],  # over the best BM25
        "bm25_log_rank": [0, ln2, ln3],
        "dense": [0.5, 0.9, 0.2],
        "dense_last": [0.4, 0.3, 0.1],
        "dense_gap": [0.4, 0, 0.7],  # below the best dense score
        "dense_log_rank": [ln2, 0, ln3],
        "fused_log_rank": [0, ln2, ln3],
        "log_candidates": [ln3] * 3,
        "source_review": [1, 0, 0],
        "source_faq": [0, 1, 0],
        "source_snippet": [0, 0, 1],
        "source_product": [0, 0, 0],
        "has_entity": [1, 1, 0],
        "entity_in_focus": [1, 0, 0],
        "entity_age": [0, 20, 20],  # never mentioned / no entity: 20
        "entity_in_last_turn": [1, 0, 0],
        "entity_used_before": [0, 1, 0],  # the system turn used item b of Bell Inn
        "attribute_in_query": [1, 0, 0],
        # "pool": p, o, l all in the query; "parking": of p a r k i n g, k and g are not in the query
        "attribute_char_overlap": [1, 5 / 7, 0],
        "value_in_context": [1, 1, 0],  # "nine" in the last turn, "free" in the system turn
        "value_in_query": [1, 0, 0],
        # the share of the item's tokens in the query, and of the query's 5 tokens in the item
        "overlap_item": [1, 0, 0],
        "overlap_query": [3 / 5, 0, 0],
        "title_overlap": [1 / 5, 0, 0],  # "pool" of the title, over the query's 5 tokens
        "used_before": [0, 1, 0],
        "log_length": [math.log(4), math.log(3), math.log(4)],  # 3, 2, 3 tokens
        "interaction": [0, 0, 0],
    }
    for name, values in expected.items():
        assert x[:, FEATURES.index(name)] == pytest.approx(values, abs=1e-6), name


def test_the_bm25_share_of_candidates_without_a_lexical_hit_is_zero():
    scores = _scores()
    scores.bm25 = np.zeros(3, np.float32)  # no lexical hit: divided by 1, not by 0
    x = rerank.features(KnowledgePool(KnowledgeBase(ITEMS), RetrieverConfig(encoder=None)), CONTEXT, scores)
    assert x[:, FEATURES.index("bm25_rel")].tolist() == [0, 0, 0]


def test_no_candidates_give_no_rows():
    empty = CandidateScores(*(np.zeros(0) for _ in range(6)), query=QUERY)
    x = rerank.features(KnowledgePool(KnowledgeBase(ITEMS), RetrieverConfig(encoder=None)), CONTEXT, empty)
    assert x.shape == (0, len(FEATURES))


def test_a_dense_index_built_in_several_chunks_finds_every_vector(monkeypatch):
    pytest.importorskip("faiss")
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(60, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    monkeypatch.setattr(dense, "CHUNK", 7)  # 9 chunks, the last of 4 rows
    added: list[int] = []
    index = dense.DenseIndex.build(vectors, nprobe=16, lists=4, progress=added.append)
    assert added == [7] * 8 + [4]
    assert len(index) == 60
    # every vector is its own best match (the lists are all probed): each row was added once, in order
    assert [int(index.search(v, 1)[0]) for v in vectors] == list(range(60))


def test_a_dense_index_over_fewer_vectors_than_its_default_lists_is_built_and_searched():
    # a knowledge base of 10 items with prune_above below 10 (the default is 16 lists): faiss refused to train
    pytest.importorskip("faiss")
    vectors = np.eye(10, 12, dtype=np.float32)
    index = dense.DenseIndex.build(vectors)
    assert len(index) == 10
    assert [int(index.search(v, 1)[0]) for v in vectors] == list(range(10))
    assert len(dense.DenseIndex.build(vectors[:1], lists=4)) == 1  # more lists asked than vectors: one list each


def test_a_memory_mapped_matrix_is_read_row_range_by_row_range(tmp_path):
    matrix = np.arange(24, dtype=np.float16).reshape(6, 4)
    np.save(tmp_path / "m.npy", matrix)
    mapped = np.load(tmp_path / "m.npy", mmap_mode="r")
    rows = dense.read_rows(mapped, 2, 5)
    assert rows.dtype == np.float32
    assert rows.tolist() == matrix[2:5].astype(np.float32).tolist()
    assert dense.read_rows(mapped, 4, 99).tolist() == matrix[4:].astype(np.float32).tolist()  # clipped at the end


# --- the transfer reranker's features (no encoder: the cosine columns stay 0), worked out by hand ---

TRANSFER_ITEMS = [
    Knowledge(
        "t1",
        "Acorn House opened in 1998",
        SourceKind.KG_TRIPLE,
        {"entity": "Acorn House", "attribute": "opening year", "value": "1998", "domain": "hotel"},
    ),
    Knowledge(
        "t2",
        "Acorn House has forty rooms",
        SourceKind.KG_TRIPLE,
        {"entity": "Acorn House", "attribute": "rooms", "value": "forty", "domain": "hotel"},
    ),
    Knowledge(
        "f1", "Trains leave every hour", SourceKind.FAQ, {"domain": "train", "title": "How often do trains run?"}
    ),
    Knowledge("r1", "The Bell Inn was noisy", SourceKind.REVIEW, {"entity": "Bell Inn", "domain": "hotel"}),
]
TRANSFER_CONTEXT = [
    Turn(Speaker.USER, "Is Acorn House the one with forty rooms?"),
    Turn(Speaker.SYSTEM, "Yes. Trains to it leave every hour.", knowledge_ids=["f1", "t2"]),
    Turn(Speaker.USER, "When did Acorn House open, in 1998?"),  # tokens: acorn hous open 1998
]


def _transfer_scores() -> CandidateScores:
    return CandidateScores(
        indices=np.array([0, 1, 2, 3]),
        bm25=np.array([3.0, 1.0, 0.0, 2.0], np.float32),
        dense=np.array([0.2, 0.6, 0.4, -0.1], np.float32),
        fused=np.array([4.0, 3.0, 2.0, 1.0], np.float32),
        bm25_last=np.array([1.0, 2.0, 0.0, 0.0], np.float32),
        dense_last=np.array([0.1, 0.3, 0.3, 0.0], np.float32),
        focus=["Acorn House"],
        mention_age={"Acorn House": 0},
        query=TRANSFER_CONTEXT[-1].text,
    )


def test_every_transfer_feature_column_of_four_candidates():
    from ragdial.retrieval import transfer

    pool = KnowledgePool(KnowledgeBase(TRANSFER_ITEMS), RetrieverConfig(encoder=None))
    x = transfer.features(pool, TRANSFER_CONTEXT, _transfer_scores())
    assert x.shape == (4, len(transfer.FEATURES))
    ln = math.log
    # idf over the 4 items' question and answer words: acorn, hous in 2 items (ln 3), open and 1998 in one (ln 5)
    acorn_cover = (2 * ln(3)) / (2 * ln(3) + 2 * ln(5))
    expected = {
        "fused_log_rank": [0, ln(2), ln(3), ln(4)],
        "bm25_rel": [1, 1 / 3, 0, 2 / 3],
        "bm25_log_rank": [0, ln(3), ln(4), ln(2)],
        "bm25_last_rel": [0.5, 1, 0, 0],
        "dense": [0.2, 0.6, 0.4, -0.1],
        "dense_gap": [0.4, 0, 0.2, 0.7],
        "dense_log_rank": [ln(3), 0, ln(2), ln(4)],
        "dense_last_gap": [0.2, 0, 0, 0.3],
        "question_cos": [0, 0, 0, 0],  # no encoder
        "question_coverage": [1, acorn_cover, 0, 0],
        "answer_coverage": [1, acorn_cover, 0, 0],
        "top_agreement": [0, 0, 0, 0],  # no vectors
        "doc_triple": [1, 1, 0, 0],
        "doc_qa": [0, 0, 1, 0],  # an item with a title is a question and its answer
        "doc_statement": [0, 0, 0, 1],
        "doc_profile": [0, 0, 0, 0],
        "has_entity": [1, 1, 0, 1],
        "scope_in_focus": [1, 1, 0, 0],  # trains were named a turn ago, but Acorn House since: not in scope
        "scope_in_last_turn": [1, 1, 0, 0],
        "scope_recency": [1, 1, 0.5, 0],  # the train domain: "trains" one turn back
        "entity_used_before": [1, 1, 0, 0],
        "scope_dialog_gap": [0, 0, 0, 0],
        "used_before": [0, 1, 1, 0],
        "log_candidates": [ln(4)] * 4,
        # "open" of "opening year" (4 of 12 characters); of "rooms" one character at most
        "attribute_match": [1 / 3, 1 / 5, 0, 0],
        "attribute_match_gap": [0, 1 / 3 - 1 / 5, 1 / 3, 1 / 3],
        "attribute_used_before": [0, 1, 0, 0],  # Acorn House's rooms were cited
        "value_in_context": [1, 1, 0, 0],
        "value_in_last_turn": [1, 0, 0, 0],
        "log_turn": [ln(4)] * 4,
        "answer_type_match": [1, 0, 0, 0],  # "when" asks for a date: 1998 is one
        "answer_type_clash": [0, 1, 0, 0],  # "forty" has no digit
        "value_log_length": [ln(5), ln(6), 0, 0],
    }
    for name, values in expected.items():
        assert x[:, transfer.FEATURES.index(name)] == pytest.approx(values, abs=1e-6), name


def test_a_domain_named_in_the_last_turn_puts_its_domain_wide_items_in_scope():
    from ragdial.retrieval import transfer

    pool = KnowledgePool(KnowledgeBase(TRANSFER_ITEMS), RetrieverConfig(encoder=None))
    context = [Turn(Speaker.USER, "How often do the trains go?")]
    scores = _transfer_scores()
    scores.focus, scores.mention_age = [], {}
    x = transfer.features(pool, context, scores)
    column = {name: x[:, transfer.FEATURES.index(name)].tolist() for name in transfer.FEATURES}
    assert column["scope_in_focus"] == [0, 0, 1, 0]
    assert column["scope_in_last_turn"] == [0, 0, 1, 0]
    assert column["scope_recency"] == [0, 0, 1, 0]
    assert column["answer_type_match"] == [0, 0, 0, 0]  # "how often" asks for neither a date nor a count


def test_the_question_cosine_reads_the_title_and_the_answer_cosine_the_text():
    from ragdial.retrieval import transfer

    items = [
        Knowledge("p", "Yes, free parking.", SourceKind.FAQ, {"title": "Is there parking?"}),
        Knowledge("w", "Wifi is free in every room.", SourceKind.FAQ, {"title": "Do you have wifi?"}),
    ]
    pool = KnowledgePool(KnowledgeBase(items), RetrieverConfig(encoder="hash"))
    from ragdial.text.encoders import get_encoder

    pool.encoder = get_encoder("hash")
    scores = CandidateScores(*(np.array(v, np.float32) for v in ([0, 1], [1, 0], [0.5, 0.4], [2, 1], [0, 0], [0, 0])))
    scores.indices = np.array([0, 1])
    x = transfer.features(pool, [Turn(Speaker.USER, "Is there parking?")], scores)
    col = {
        name: x[:, transfer.FEATURES.index(name)]
        for name in ("question_cos", "question_gap", "answer_cos", "answer_gap")
    }
    assert col["question_cos"][0] == pytest.approx(1.0, abs=1e-5)  # the same words as the turn
    assert col["question_gap"].tolist() == pytest.approx([0, 1 - col["question_cos"][1]], abs=1e-6)
    assert 0 < col["answer_cos"][0] < 0.99  # the answer shares only "parking"
    assert col["answer_gap"].tolist() == pytest.approx([0, col["answer_cos"][0] - col["answer_cos"][1]], abs=1e-6)


class _Booster:
    """A stand-in LightGBM booster: fixed probabilities for the candidates it is given, in order."""

    def __init__(self, probabilities: list[float]) -> None:
        self.probabilities = np.array(probabilities)
        self.rows = 0

    def predict(self, x: np.ndarray) -> np.ndarray:
        self.rows = len(x)
        return self.probabilities[: len(x)]


def test_an_unsure_transfer_reranker_keeps_the_fused_order_on_the_probability_scale():
    from ragdial.retrieval.transfer import TransferReranker

    pool = KnowledgePool(KnowledgeBase(TRANSFER_ITEMS), RetrieverConfig(encoder=None))
    scores = _transfer_scores()
    scores.fused = np.array([1.0, 4.0, 3.0, 2.0], np.float32)  # fused order: 1, 2, 3, 0
    booster = _Booster([0.1, 0.3, 0.2])  # for the depth-3 best fused: items 1, 2, 3
    unsure = TransferReranker(booster, depth=3, fallback=0.5).predict(pool, TRANSFER_CONTEXT, scores)
    assert booster.rows == 3
    # best probability 0.3 < 0.5: the fused order, 0.3 x (1, 3/4, 2/4); item 0 below the depth: -1 - rank 4/4
    assert unsure.tolist() == pytest.approx([-2.0, 0.3, 0.225, 0.15])
    sure = TransferReranker(booster, depth=3, fallback=0.25).predict(pool, TRANSFER_CONTEXT, scores)
    assert sure.tolist() == pytest.approx([-2.0, 0.1, 0.3, 0.2])


def test_a_reranker_scores_only_its_depth_and_ranks_the_rest_below_zero():
    pool = KnowledgePool(KnowledgeBase(ITEMS), RetrieverConfig(encoder=None))
    scores = _scores()
    scores.fused = np.array([1.0, 3.0, 2.0], np.float32)  # fused order: 1, 2, 0
    booster = _Booster([0.7, 0.9])
    final = rerank.Reranker(booster, depth=2).predict(pool, CONTEXT, scores)
    assert booster.rows == 2
    assert final.tolist() == pytest.approx([-2.0, 0.7, 0.9])  # item 0: -1 - rank 3 / 3 candidates


def test_a_reranker_saved_twice_into_the_same_folder_loads_the_second(tmp_path):
    lightgbm = pytest.importorskip("lightgbm")
    x = np.random.default_rng(0).normal(size=(40, len(FEATURES)))
    y = (x[:, 0] > 0).astype(int)
    booster = lightgbm.train({"objective": "binary", "verbose": -1, "num_leaves": 4}, lightgbm.Dataset(x, y), 5)
    folder = tmp_path / "reranker"
    rerank.Reranker(booster, threshold=0.3).save(folder)
    rerank.Reranker(booster, threshold=0.6, max_select=3, depth=7, relative=0.5).save(folder)
    loaded = rerank.Reranker.load(folder)
    assert (loaded.threshold, loaded.max_select, loaded.depth, loaded.relative) == (0.6, 3, 7, 0.5)
