"""Retrieval behaviour that surviving mutants showed unpinned (docs/testing.md, session 7): the dialog-to-scope
cosine columns of the transfer reranker use unit-length centroids, and a reranker trained with a second encoder is
trained on the candidates it will score (those that encoder brings up), and an entity's scope recency halves with
each turn since it was named (session 8), on small hand-written items."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from ragdial.retrieval import transfer
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.retrieval.pool import CandidateScores, KnowledgePool
from ragdial.schema import Example, Knowledge, KnowledgeBase, SourceKind, Speaker, Turn
from ragdial.text.encoders import get_encoder

HOTEL = {"domain": "hotel"}
SCOPED = [
    Knowledge("s1", "Sunrise Lodge has free parking", SourceKind.FAQ, {**HOTEL, "entity": "Sunrise Lodge"}),
    Knowledge("s2", "Breakfast at the Sunrise is at seven", SourceKind.FAQ, {**HOTEL, "entity": "Sunrise Lodge"}),
    Knowledge("h1", "Harbour Inn allows small pets", SourceKind.FAQ, {**HOTEL, "entity": "Harbour Inn"}),
    Knowledge("t1", "Trains leave every hour", SourceKind.FAQ, {"domain": "train"}),
]


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / np.linalg.norm(vector)


def test_the_dialog_gaps_compare_the_turn_with_unit_length_scope_centroids():
    # one user turn, so the dialog vector is that turn's vector; each entity's (and domain's) centroid is the mean of
    # its items' vectors scaled to unit length: a two-item entity is not penalised for its items differing
    encoder = get_encoder("hash")
    pool = KnowledgePool(KnowledgeBase(SCOPED), RetrieverConfig(encoder="hash"), encoder=encoder)
    turn = "Does the Harbour Inn allow pets?"
    zeros = np.zeros(4, np.float32)
    scores = CandidateScores(np.arange(4), zeros, zeros, np.array([4, 3, 2, 1], np.float32), zeros, zeros)
    x = transfer.features(pool, [Turn(Speaker.USER, turn)], scores)
    v = encoder.encode([item.text for item in SCOPED])
    d = encoder.encode([turn])[0]
    sunrise, harbour = float(_unit(v[0] + v[1]) @ d), float(v[2] @ d)
    hotel, train = float(_unit(v[0] + v[1] + v[2]) @ d), float(v[3] @ d)
    assert harbour > sunrise and hotel > train  # the entity and the domain the turn is about are closest
    best_scope = max(sunrise, harbour, train)  # the domain-wide item's scope is "train/*", centroid = its vector
    expected_scope = [best_scope - sunrise, best_scope - sunrise, best_scope - harbour, best_scope - train]
    assert x[:, transfer.FEATURES.index("scope_dialog_gap")] == pytest.approx(expected_scope, abs=1e-5)
    expected_domain = [0, 0, 0, hotel - train]
    assert x[:, transfer.FEATURES.index("domain_dialog_gap")] == pytest.approx(expected_domain, abs=1e-5)
    assert np.linalg.norm(v[0] + v[1]) / 2 < 0.95  # the two Sunrise items differ: their plain mean is shorter than 1


def _faq(item_id: str, question: str, answer: str) -> Knowledge:
    return Knowledge(item_id, f"{question} {answer}", SourceKind.FAQ, {"title": question, "body": answer})


BIKES = [
    _faq("b1", "Do you rent helmets with the bikes?", "Every rental comes with a free helmet."),
    _faq("b2", "Can I return the bike to another shop?", "One-way returns cost 5 pounds."),
    _faq("b3", "Are electric bikes available?", "Ten electric bikes can be reserved a day ahead."),
    _faq("b4", "Is there a child seat?", "Child seats fit every city bike."),
    _faq("b5", "Do you have tandem bikes?", "Two tandems can be hired by the hour."),
    _faq("b6", "What are the opening hours?", "The shop opens at 8 and closes at 6."),
]


def _bike_examples() -> list[Example]:
    said = [("b6", "when do you open?"), ("b1", "helmet included?"), ("b3", "any e-bikes?")]
    out = []
    for n, first in enumerate(["Hello, about rentals", "We are a family of four", "I need bikes for two people"]):
        for m, (gold, text) in enumerate(said):
            context = [Turn(Speaker.USER, first), Turn(Speaker.SYSTEM, "Sure."), Turn(Speaker.USER, text)]
            out.append(Example(f"{n}-{m}", f"d{n}", 2, context, True, [gold]))
    return out


def test_a_reranker_with_a_second_encoder_trains_on_the_candidates_that_encoder_brings_up():
    retriever = HybridRetriever(KnowledgeBase(BIKES), RetrieverConfig(fusion="rrf", encoder="hash"))
    examples = _bike_examples()

    def positives(aux: str | None) -> int:  # the gold items among each example's top candidate
        found = 0
        for example in examples:
            scores = retriever.score(example.context)
            top = transfer.reranker_input(retriever, example.context, scores, 1, aux)
            found += sum(retriever.items[int(scores.indices[i])].id in example.knowledge_ids for i in top)
        return found

    # "when do you open?" after a greeting: the fused score's top is the opening hours, the hash encoder's another
    assert positives("hash") != positives(None)
    model = transfer.train(retriever, examples, depth=1, rounds=3, folds=3, widen=False, aux_encoder="hash")
    assert model.info["queries"] == model.info["rows"] == len(examples)
    assert model.info["positives"] == positives("hash")
    # widened: the unscoped twin (the same candidates here: no item has an entity) adds the same rows again
    wide = transfer.train(retriever, examples, depth=1, rounds=3, folds=3, widen=True, aux_encoder="hash")
    assert (wide.info["rows"], wide.info["positives"]) == (2 * len(examples), 2 * positives("hash"))


def test_bm25_top_k_reads_on_until_the_kth_best_is_safe():
    # "zebra" is read first (the larger bound): the short zebra text scores above all "lion" can add, the long one
    # below it; so after the zebra postings the second place is not settled and the short lion text takes it
    from ragdial.retrieval.analyzer import Analyzer
    from ragdial.retrieval.lexical import LexicalIndex

    texts = ["zebra", "zebra " + " ".join(f"filler{i}" for i in range(30)), "lion", "lion tiger", "lion bear"]
    index = LexicalIndex.build(texts, Analyzer(language="en"))
    full = index.scores("zebra") + index.scores("lion")
    docs, scores = index.top(index.query_terms([("zebra", 1.0), ("lion", 1.0)]), 2)
    assert docs.tolist() == [0, 2] and full[1] < full[2]
    assert scores == pytest.approx(full[[0, 2]], rel=1e-5)


def test_an_approximate_index_only_above_prune_above_items():
    # (faiss needs 16 vectors or more to build one, so the retriever is asked rather than built at the limit below)
    retriever = HybridRetriever(KnowledgeBase(BIKES), RetrieverConfig(encoder="hash", shortlist=2, entity_scope=False))
    retriever.config = replace(retriever.config, prune_above=len(BIKES))
    assert not retriever.wants_ann()  # not more than prune_above items
    retriever.config = replace(retriever.config, prune_above=len(BIKES) - 1)
    assert retriever.wants_ann()


def test_a_cited_item_without_a_score_reads_back_as_zero():
    from ragdial.retrieval.base import ScoredKnowledge

    cited = ScoredKnowledge.from_dict({"id": "b1", "text": "Helmets are free.", "source": "faq"})
    assert (cited.item.id, cited.score) == ("b1", 0.0)


def test_a_saved_reranker_without_a_relative_cut_loads_with_none(tmp_path):
    import json

    lightgbm = pytest.importorskip("lightgbm")
    from ragdial.retrieval import rerank

    x = np.random.default_rng(0).normal(size=(40, len(rerank.FEATURES)))
    booster = lightgbm.train(
        {"objective": "binary", "verbose": -1, "num_leaves": 4}, lightgbm.Dataset(x, (x[:, 0] > 0).astype(int)), 3
    )
    folder = rerank.Reranker(booster, threshold=0.4, relative=0.5).save(tmp_path / "reranker")
    meta_path = next(p for p in folder.iterdir() if p.suffix == ".json")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    del meta["relative"]  # a model saved before the relative cut existed
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    loaded = rerank.Reranker.load(folder)
    assert (loaded.threshold, loaded.relative) == (0.4, 0.0)


def test_an_entitys_scope_recency_halves_with_each_turn_since_it_was_named():
    # unscoped, so the Sunrise Lodge items named two turns back stay candidates beside the Harbour Inn's
    retriever = HybridRetriever(KnowledgeBase(SCOPED), RetrieverConfig(encoder=None, fusion="bm25", entity_scope=False))
    context = [
        Turn(Speaker.USER, "Tell me about the Sunrise Lodge"),
        Turn(Speaker.SYSTEM, "It is by the sea."),
        Turn(Speaker.USER, "And does the Harbour Inn allow pets?"),
    ]
    scores = retriever.score(context)
    assert scores.mention_age == {"Harbour Inn": 0, "Sunrise Lodge": 2}
    x = transfer.features(retriever, context, scores)
    ids = [retriever.items[int(i)].id for i in scores.indices]
    recency = dict(zip(ids, x[:, transfer.FEATURES.index("scope_recency")].tolist(), strict=True))
    assert recency == {"s1": 0.25, "s2": 0.25, "h1": 1.0, "t1": 0.0}  # the train domain was never named
    assert x.dtype == np.float32
