"""Selection by precedent (issue 20): a training turn that asked the same of the same entity lends its gold set;
turns of other entities or without a close precedent keep the wrapped reranker's ranking and cut. A small review KB
and dialogs of our own; the hash encoder keeps it fast."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragdial.errors import RagdialError
from ragdial.retrieval import precedent, rerank, transfer
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.schema import Example, Knowledge, KnowledgeBase, SourceKind, Speaker, Turn

ASPECTS = {
    "q1": "The rooms were very quiet at night.",
    "q2": "We slept well with no noise from the street.",
    "b1": "Breakfast had fresh fruit and eggs.",
    "b2": "The breakfast buffet was rather small.",
}
HOTELS = {"s": "Sunrise Lodge", "h": "Blue Harbor Inn", "g": "Green Park Hotel"}
QUESTIONS = {
    "q": ["Is {} quiet at night?", "Is it quiet at night at {}?", "Are the rooms at {} quiet at night?"],
    "b": ["Is breakfast good at {}?", "How is the breakfast at {}?", "Is the breakfast at {} any good?"],
}


def review(key: str, aspect: str) -> Knowledge:
    fields = {"domain": "hotel", "entity": HOTELS[key], "doc_type": "review"}
    return Knowledge(f"{key}:{aspect}", ASPECTS[aspect], SourceKind.REVIEW, fields)


def user(text: str) -> Turn:
    return Turn(Speaker.USER, text)


@pytest.fixture(scope="module")
def setting():
    kb = KnowledgeBase(review(key, aspect) for key in HOTELS for aspect in ASPECTS)
    retriever = HybridRetriever(kb, RetrieverConfig(fusion="rrf", encoder="hash"))
    examples = [  # precedents for Sunrise Lodge and Blue Harbor Inn only
        Example(
            f"{key}{kind}{n}",
            f"d-{key}{kind}{n}",
            1,
            [user(text.format(HOTELS[key]))],
            True,
            [f"{key}:{kind}1", f"{key}:{kind}2"],
        )
        for key in ("s", "h")
        for kind, texts in QUESTIONS.items()
        for n, text in enumerate(texts)
    ]
    base = transfer.train(retriever, examples, rounds=5, folds=3)
    return retriever, examples, base, precedent.train(retriever, examples, base)


def selected(retriever, text: str) -> list[str]:
    return sorted(r.item.id for r in retriever.retrieve([user(text)], None, 10).selected)


def test_a_close_precedent_of_the_same_entity_gives_its_whole_gold_set(setting):
    retriever, _, _, wrapped = setting
    assert wrapped.threshold < 1.0 and wrapped.info["held_out_covered"] > 0
    retriever.reranker = wrapped
    assert selected(retriever, "Is Blue Harbor Inn really quiet at night?") == ["h:q1", "h:q2"]
    assert selected(retriever, "How good is the breakfast at Sunrise Lodge?") == ["s:b1", "s:b2"]
    ranked = retriever.retrieve([user("How good is the breakfast at Sunrise Lodge?")], None, 10).ranked
    assert {r.item.id for r in ranked[:2]} == {"s:b1", "s:b2"} and ranked[0].score >= precedent.PRECEDENT_SCORE


def test_without_a_precedent_of_that_entity_or_any_entity_the_wrapped_reranker_decides(setting):
    retriever, _, base, wrapped = setting
    for text in ("Is Green Park Hotel quiet at night?", "Is it quiet at night?"):  # no precedent / no focus
        retriever.reranker = base
        alone = selected(retriever, text)
        scores = retriever.score([user(text)])
        retriever.reranker = wrapped
        assert selected(retriever, text) == alone
        assert np.allclose(
            wrapped.predict(retriever, [user(text)], scores), base.predict(retriever, [user(text)], scores)
        )
    # a threshold no precedent reaches turns it off
    retriever.reranker = base
    alone = selected(retriever, "Is Blue Harbor Inn really quiet at night?")
    retriever.reranker = precedent.PrecedentReranker(base, wrapped.vectors, wrapped.golds, "hash", threshold=1.1)
    assert selected(retriever, "Is Blue Harbor Inn really quiet at night?") == alone


def test_a_context_without_a_user_turn_keeps_the_wrapped_rerankers_scores(setting):
    retriever, _, base, wrapped = setting
    context = [Turn(Speaker.SYSTEM, "Welcome to Blue Harbor Inn. Is it quiet at night? Very.")]
    scores = retriever.score(context)
    assert np.allclose(wrapped.predict(retriever, context, scores), base.predict(retriever, context, scores))


def test_the_threshold_is_the_lowest_cosine_whose_borrowed_sets_beat_the_floor():
    assert precedent.best_threshold([0.9, 0.6, 0.8, 0.7], [1.0, 1.0, 1.0, 0.5], 0.85) == 0.8
    assert precedent.best_threshold([0.9, 0.8], [0.5, 0.6], 0.85) == 1.1  # never better than the reranker
    assert precedent.best_threshold([], [], 0.85) == 1.1


def test_saved_precedents_load_through_load_reranker_and_predict_the_same(setting, tmp_path):
    retriever, _, _, wrapped = setting
    folder = wrapped.save(tmp_path / "precedent")
    loaded = rerank.load_reranker(folder)
    assert isinstance(loaded, precedent.PrecedentReranker)
    assert isinstance(loaded.base, transfer.TransferReranker) and loaded.threshold == wrapped.threshold
    assert loaded.info == wrapped.info and loaded.info["held_out_covered"] > 0
    context = [user("Is Blue Harbor Inn really quiet at night?")]
    scores = retriever.score(context)
    assert np.allclose(loaded.predict(retriever, context, scores), wrapped.predict(retriever, context, scores))
    meta = json.loads((folder / precedent.META_FILE).read_text())
    meta["golds"] = meta["golds"][:-1]
    (folder / precedent.META_FILE).write_text(json.dumps(meta))
    with pytest.raises(RagdialError, match=r"precedent\.json: field 'golds'"):
        rerank.load_reranker(folder)
    (folder / precedent.VECTORS_FILE).unlink()
    with pytest.raises(RagdialError, match="not a precedent reranker directory"):
        rerank.load_reranker(folder)


def test_precedents_refuse_a_retriever_with_another_encoder(setting):
    retriever, _, base, wrapped = setting
    other = precedent.PrecedentReranker(base, wrapped.vectors, wrapped.golds, "use", wrapped.threshold)
    context = [user("Is Blue Harbor Inn quiet at night?")]
    with pytest.raises(RagdialError, match="encoded with 'use'"):
        other.predict(retriever, context, retriever.score(context))


def test_stack_features_read_the_closest_usable_precedents_on_hand_numbers():
    ids = ["a", "b", "c", "d"]
    probabilities = np.array([0.9, 0.2, -1.5, 0.5], dtype=np.float32)  # "c" was below the reranker's depth
    cosines = np.array([0.9, 0.5, 0.8], dtype=np.float32)
    usable = np.array([True, True, False])  # the third precedent is of another entity
    rows, x = precedent.stack_features(ids, probabilities, cosines, usable, [["a", "d"], ["b"], ["c"]])
    assert rows.tolist() == [0, 3, 1] and x.shape == (3, len(precedent.STACK_FEATURES))
    feature = {name: x[2, i] for i, name in enumerate(precedent.STACK_FEATURES)}  # item "b", third
    assert feature["probability"] == pytest.approx(0.2)
    assert feature["probability_to_best"] == pytest.approx(0.2 / 0.9)
    assert feature["log_rank"] == pytest.approx(np.log1p(2)) and feature["best_probability"] == pytest.approx(0.9)
    assert feature["precedent_cosine"] == pytest.approx(0.5) and feature["precedent_gap"] == pytest.approx(-0.4)
    assert feature["precedent_share"] == pytest.approx(0.5 / 1.4) and feature["closest_cosine"] == pytest.approx(0.9)
    assert feature["in_closest_usable"] == 0.0 and x[0, -1] == 1.0 and x[1, -1] == 1.0  # "a", "d": closest's set
    _, none = precedent.stack_features(ids, probabilities, cosines, np.zeros(3, bool), [["a", "d"], ["b"], ["c"]])
    assert none[:, 4].tolist() == [0.0, 0.0, 0.0] and none[:, 5].tolist() == [-1.0, -1.0, -1.0]


@pytest.fixture(scope="module")
def voted(setting):
    retriever, examples, base, _ = setting
    return precedent.train(
        retriever, examples, base, refit=lambda part: transfer.train(retriever, part, rounds=5, folds=3)
    )


def test_voted_precedents_rank_by_a_stacker_and_select_the_whole_set(setting, voted):
    retriever, _, base, wrapped = setting
    assert voted.stacker is not None and voted.info["stacker_turns"] == 12
    assert 0.0 <= voted.stacker.threshold <= 1.0
    retriever.reranker = voted
    try:
        assert selected(retriever, "Is Blue Harbor Inn really quiet at night?") == ["h:q1", "h:q2"]
        context = [user("How good is the breakfast at Sunrise Lodge?")]
        scores = retriever.score(context)
        final = voted.predict(retriever, context, scores)
        assert (final >= precedent.PRECEDENT_SCORE).sum() == min(len(final), precedent.STACK_DEPTH)
        assert not np.allclose(final, wrapped.predict(retriever, context, scores))
        ranked = retriever.retrieve(context, None, 10).ranked
        assert {r.item.id for r in ranked[:2]} == {"s:b1", "s:b2"}
        for text in ("Is Green Park Hotel quiet at night?", "Is it quiet at night?"):  # no usable precedent
            context = [user(text)]
            scores = retriever.score(context)
            assert np.allclose(voted.predict(retriever, context, scores), base.predict(retriever, context, scores))
            retriever.reranker = base
            alone = selected(retriever, text)
            retriever.reranker = voted
            assert selected(retriever, text) == alone
    finally:
        retriever.reranker = base


def test_a_saved_stacker_loads_and_a_broken_one_is_named(setting, voted, tmp_path):
    retriever, _, _, _ = setting
    folder = voted.save(tmp_path / "voted")
    loaded = rerank.load_reranker(folder)
    assert isinstance(loaded, precedent.PrecedentReranker) and loaded.stacker is not None
    assert (loaded.stacker.threshold, loaded.stacker.relative) == (voted.stacker.threshold, voted.stacker.relative)
    context = [user("Is Blue Harbor Inn really quiet at night?")]
    scores = retriever.score(context)
    assert np.allclose(loaded.predict(retriever, context, scores), voted.predict(retriever, context, scores))
    (folder / precedent.STACKER_FILE).write_text("not a model")
    with pytest.raises(RagdialError, match=r"stacker\.txt: not a stacker model"):
        rerank.load_reranker(folder)
    meta = json.loads((folder / precedent.META_FILE).read_text())
    meta["stacker"]["features"] = ["probability"]
    (folder / precedent.META_FILE).write_text(json.dumps(meta))
    with pytest.raises(RagdialError, match=r"precedent\.json: field 'stacker' was trained on other features"):
        rerank.load_reranker(folder)
    meta["format"] = "something else"
    (folder / precedent.META_FILE).write_text(json.dumps(meta))
    with pytest.raises(RagdialError, match=r"precedent\.json: field 'format' must be "):
        rerank.load_reranker(folder)


def test_a_turn_without_a_usable_precedent_is_skipped_and_its_fold_goes_on(setting):
    # the Green Park Hotel question comes first in its fold: no other dialog asked about that hotel, so it gives the
    # stacker no rows, and every later turn of the fold still does (12 turns, as without it)
    retriever, examples, base, _ = setting
    lonely = Example("g0", "d-g0", 1, [user("Is Green Park Hotel quiet at night?")], True, ["g:q1", "g:q2"])
    voted = precedent.train(
        retriever, [lonely, *examples], base, refit=lambda part: transfer.train(retriever, part, rounds=5, folds=3)
    )
    assert voted.info["stacker_turns"] == 12 and voted.info["stacker_folds"] == 4
