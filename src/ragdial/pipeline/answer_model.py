"""The learned answer model of the grounded path: three small logistic-regression heads over the features of
``ragdial.pipeline.answer_features``.

- **route**: which source answers the turn (``profile`` / ``product`` / ``faq``), from the turn's n-grams and the
  best lexical cover and cosine per source;
- **rank**: how likely a candidate item is the one to cite first, from its retrieval ranks, lexical cover, cosine,
  the asked attribute, being named or cited before, and the route's probability of its source;
- **policy**: ``answer`` / ``not_in_knowledge`` / ``action`` / ``small_talk``, from the turn's n-grams, the route
  probabilities and the ranking's numbers (the best item's score and margin, whether it holds the asked attribute).

Weights are plain JSON (a few hundred kB), trained deterministically by :func:`fit_answer_model` on labelled
conversations (``benchmarks/train_answer_model.py`` writes the packaged ``resources/answer_model.json`` from the
pooled tuning conversations of the demo sets: train, dev and the retired test, test2, test3); the regularisation
of each head is chosen by grouped cross-validation.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ragdial.errors import RagdialError
from ragdial.gbdt import TextTrees, UnsupportedTrees
from ragdial.jsontypes import JSONDict, JSONObject, as_object, as_texts
from ragdial.pipeline.answer_features import ACTS, CANDIDATE_FEATURES, SOURCES, Candidates, source_of

POLICY_CLASSES = ("answer", "not_in_knowledge", "action", "small_talk")
ROUTE_NUMBERS = (
    "unknown",
    "short",
    "guest",
    "question",
    "first_turn",
    *(f"{k}_{s}" for s in SOURCES for k in ("lex", "dense", "cited", "asked", "named")),
    *(f"{k}_{s}" for s in SOURCES for k in ("key_cover", "key_dense", "field_dense")),
    "lex_margin",
    *ACTS,
)
POLICY_NUMBERS = (
    "unknown",
    "short",
    "guest",
    "question",
    "first_turn",
    *ACTS,
    "top_score",
    "top_margin",
    "top_lex",
    "top_dense",
    "top_asked",
    "top_named",
    "top_head_cover",
    "numbers_said",
    "top_number_cover",
    *(f"top_is_{s}" for s in SOURCES),
    *(f"best_{s}" for s in SOURCES),
    *(f"route_{s}" for s in SOURCES),
    *(f"guest_x_route_{s}" for s in SOURCES),
    "no_candidates",
)
RANK_EXTRA = ("route_prob",)
RESOURCE = "answer_model.json"
ANSWER_ENCODER = "use"  # the sentence encoder of the turn vectors and cosines the model is trained with


class AnswerModelError(RagdialError):
    """An answer model file that cannot be read."""


@dataclass
class Head:
    """A linear head: ``weights`` (classes × features) and ``bias``; binary heads have one row (the positive)."""

    classes: tuple[str, ...]
    weights: np.ndarray
    bias: np.ndarray

    def scores(self, x: np.ndarray) -> np.ndarray:
        return x @ self.weights.T + self.bias

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        z = self.scores(np.atleast_2d(x))
        if len(self.classes) == 2 and z.shape[1] == 1:
            return 1.0 / (1.0 + np.exp(-np.clip(z[:, 0], -50, 50)))
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def to_data(self) -> JSONDict:
        return {
            "classes": list(self.classes),
            "weights": [[round(float(v), 5) for v in row] for row in self.weights],
            "bias": [round(float(v), 5) for v in self.bias],
        }

    @classmethod
    def from_data(cls, data: JSONObject) -> Head:
        weights, bias = np.array(data["weights"], dtype=float), np.array(data["bias"], dtype=float)
        return cls(tuple(as_texts(data["classes"])), weights, bias)


class Ranker:
    """The rank head: a LightGBM lambdarank model (small trees over ``rank_input``); its scores of one turn's
    candidates become probabilities by a softmax over the candidates."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.booster: TextTrees | Any  # Any: lightgbm (untyped Booster), only for a model TextTrees cannot evaluate
        try:
            self.booster = TextTrees(text)  # the same scores without importing lightgbm and scikit-learn at start
        except UnsupportedTrees:
            import lightgbm

            self.booster = lightgbm.Booster(model_str=text)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        if isinstance(self.booster, TextTrees):
            z = self.booster.predict(x)
        else:
            z = np.asarray(self.booster.predict(x, num_threads=1), dtype=float)
        e = np.exp(z - z.max())
        return e / e.sum()

    def to_data(self) -> JSONDict:
        return {"kind": "lightgbm-lambdarank", "model": self.text}

    @classmethod
    def fit(cls, x: np.ndarray, y: Sequence[bool], groups: Sequence[int], trees: int, leaves: int) -> Ranker:
        import lightgbm

        model = lightgbm.LGBMRanker(
            n_estimators=trees,
            num_leaves=leaves,
            learning_rate=0.05,
            min_child_samples=10,
            deterministic=True,
            force_row_wise=True,
            n_jobs=1,
            seed=13,
            verbose=-1,
        )
        model.fit(x, np.asarray(y, dtype=int), group=list(groups))
        return cls(model.booster_.model_to_string())


@dataclass
class AnswerModel:
    """The vocabulary of turn n-grams, the three heads, and ``cite_min``: the rank probability an item after the
    first needs to be cited too."""

    vocabulary: dict[str, int]
    route: Head
    rank: Ranker | None  # None only while the heads are being trained
    policy: Head
    cite_min: float = 0.5
    meta: JSONDict = field(default_factory=dict)
    dim: int = 0  # the length of the turn's sentence vector the model was trained with (0: none)
    vector_heads: tuple[str, ...] = ("route",)  # the heads that read the sentence vector

    def _text_block(self, terms: Sequence[str], vector: np.ndarray | None, head: str) -> np.ndarray:
        x = np.zeros(len(self.vocabulary))
        hits = [self.vocabulary[t] for t in terms if t in self.vocabulary]
        if hits:
            x[hits] = 1.0 / math.sqrt(len(hits))
        if head not in self.vector_heads:
            return x
        v = np.zeros(self.dim)
        if vector is not None and self.dim and len(vector) == self.dim:
            v = np.asarray(vector, dtype=float) / max(float(np.linalg.norm(vector)), 1e-9)
        return np.concatenate([x, v])

    def route_input(
        self, terms: Sequence[str], numbers: Mapping[str, float], vector: np.ndarray | None = None
    ) -> np.ndarray:
        return np.concatenate([self._text_block(terms, vector, "route"), [numbers.get(k, 0.0) for k in ROUTE_NUMBERS]])

    def policy_input(
        self, terms: Sequence[str], numbers: Mapping[str, float], vector: np.ndarray | None = None
    ) -> np.ndarray:
        block = self._text_block(terms, vector, "policy")
        return np.concatenate([block, [numbers.get(k, 0.0) for k in POLICY_NUMBERS]])

    def route_probs(
        self, terms: Sequence[str], numbers: Mapping[str, float], vector: np.ndarray | None = None
    ) -> dict[str, float]:
        """P(source answers the turn) for ``profile``, ``product``, ``faq`` (``vector``: the turn's sentence
        vector; without it, or of another length, that block is zero)."""
        p = self.route.probabilities(self.route_input(terms, numbers, vector))[0]
        return {c: float(v) for c, v in zip(self.route.classes, p, strict=True)}

    def rank_probs(self, candidates: Candidates, route: Mapping[str, float]) -> np.ndarray:
        """P(item is the one to cite first) per candidate (a softmax over the turn's candidates)."""
        if not candidates.items or self.rank is None:
            return np.zeros(len(candidates.items))
        return self.rank.probabilities(rank_input(candidates, route))

    def policy_probs(
        self, terms: Sequence[str], numbers: Mapping[str, float], vector: np.ndarray | None = None
    ) -> dict[str, float]:
        """P(policy) for ``answer``, ``not_in_knowledge``, ``action``, ``small_talk`` (``numbers``: see
        :func:`policy_numbers`)."""
        p = self.policy.probabilities(self.policy_input(terms, numbers, vector))[0]
        return {c: float(v) for c, v in zip(self.policy.classes, p, strict=True)}

    def to_data(self) -> JSONDict:
        terms = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
        return {
            "format": "ragdial-answer-model/1",
            "vocabulary": terms,
            "route": self.route.to_data(),
            "rank": self.rank.to_data() if self.rank is not None else None,
            "policy": self.policy.to_data(),
            "cite_min": self.cite_min,
            "vector_dim": self.dim,
            "vector_heads": list(self.vector_heads),
            "features": {
                "route": list(ROUTE_NUMBERS),
                "rank": [*CANDIDATE_FEATURES, *RANK_EXTRA],
                "policy": list(POLICY_NUMBERS),
            },
            "meta": self.meta,
        }

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_data(), ensure_ascii=False, separators=(",", ":")) + "\n", "utf-8")
        return path

    @classmethod
    def from_data(cls, data: JSONObject, where: str = "answer model") -> AnswerModel:
        if data.get("format") != "ragdial-answer-model/1":
            raise AnswerModelError(f"{where}: not a ragdial answer model (format {data.get('format')!r})")
        expected = {
            "route": list(ROUTE_NUMBERS),
            "rank": [*CANDIDATE_FEATURES, *RANK_EXTRA],
            "policy": list(POLICY_NUMBERS),
        }
        if data.get("features") != expected:
            raise AnswerModelError(f"{where}: trained with other features than this ragdial computes; retrain it")
        try:
            vocabulary = {t: i for i, t in enumerate(as_texts(data["vocabulary"]))}
            rank = as_object(data["rank"])
            if rank.get("kind") != "lightgbm-lambdarank" or not isinstance(rank.get("model"), str):
                raise AnswerModelError(f"{where}: unknown rank head {rank.get('kind')!r}")
            cite_min, dim = data["cite_min"], data.get("vector_dim", 0)
            if not isinstance(cite_min, int | float) or not isinstance(dim, int):
                raise AnswerModelError(f"{where}: cite_min and vector_dim must be numbers")
            return cls(
                vocabulary,
                Head.from_data(as_object(data["route"])),
                Ranker(str(rank["model"])),
                Head.from_data(as_object(data["policy"])),
                float(cite_min),
                dict(as_object(data["meta"])),
                dim,
                tuple(as_texts(data.get("vector_heads", []))),
            )
        except (KeyError, TypeError, ValueError) as err:
            raise AnswerModelError(f"{where}: not a readable answer model: {err}") from None

    @classmethod
    def load(cls, path: str | Path) -> AnswerModel:
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise AnswerModelError(f"{path}: cannot read the answer model: {err}") from None
        return cls.from_data(data, str(path))


@lru_cache(maxsize=1)
def default_answer_model() -> AnswerModel:
    """The packaged model (``ragdial/resources/answer_model.json``)."""
    text = resources.files("ragdial.resources").joinpath(RESOURCE).read_text(encoding="utf-8")
    return AnswerModel.from_data(json.loads(text), f"ragdial/resources/{RESOURCE}")


def rank_input(candidates: Candidates, route: Mapping[str, float]) -> np.ndarray:
    """The rank head's rows: the candidate features and the route's probability of each item's source."""
    prob = np.array([route.get(source_of(item), 0.0) for item in candidates.items])
    return np.column_stack([candidates.features, prob])


# ---- training


@dataclass
class Example:
    """One labelled turn: its conversation (``group``, for grouped folds), n-grams, route numbers, candidates,
    the gold item ids, the gold route (source of the first gold item; ``None`` without gold) and the policy."""

    group: str
    terms: list[str]
    numbers: dict[str, float]
    candidates: Candidates
    gold: frozenset[str]
    route: str | None
    policy: str
    vector: np.ndarray | None = None


def policy_numbers(
    numbers: Mapping[str, float], route: Mapping[str, float], ranked: Mapping[str, float]
) -> dict[str, float]:
    """The policy head's numbers: the turn's, the route probabilities and the ranking's."""
    out = {
        k: numbers.get(k, 0.0) for k in ("unknown", "short", "guest", "question", "first_turn", "numbers_said", *ACTS)
    }
    out.update(ranked)
    for source in SOURCES:
        out[f"route_{source}"] = route.get(source, 0.0)
        out[f"guest_x_route_{source}"] = route.get(source, 0.0) * numbers.get("guest", 0.0)
    return out


def _folds(groups: Sequence[str], k: int) -> list[int]:
    order = sorted(set(groups))
    fold_of = {g: i % k for i, g in enumerate(order)}
    return [fold_of[g] for g in groups]


def _fit_head(x: np.ndarray, y: Sequence[object], classes: Sequence[object], c: float, weight: str | None) -> Head:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, max_iter=5000, class_weight=weight)
    model.fit(x, list(y))
    fitted = [str(v) for v in model.classes_]
    weights, bias = np.asarray(model.coef_), np.asarray(model.intercept_)
    if len(fitted) == 2 and len(classes) == 2:  # binary: one row for the positive class
        return Head(tuple(str(v) for v in classes), weights, bias)
    rows = np.full((len(classes), x.shape[1]), 0.0)
    biases = np.full(len(classes), -20.0)  # a class never seen in training is never predicted
    if len(fitted) == 2:  # two of several classes seen: softmax over (0, w·x + b) is the fitted sigmoid
        weights, bias = np.vstack([np.zeros_like(weights[0]), weights[0]]), np.array([0.0, bias[0]])
    for i, name in enumerate(fitted):
        rows[list(classes).index(name)] = weights[i]
        biases[list(classes).index(name)] = bias[i]
    return Head(tuple(str(c) for c in classes), rows, biases)


def _cv_choose(
    x: np.ndarray,
    y: Sequence[object],
    folds: Sequence[int],
    classes: Sequence[object],
    grid: Sequence[float],
    weight: str | None,
) -> tuple[float, dict[float, float]]:
    """The C of ``grid`` with the best out-of-fold accuracy (ties: the smaller C)."""
    y = list(y)
    results = {}
    for c in grid:
        hits = 0
        for fold in sorted(set(folds)):
            train = [i for i, f in enumerate(folds) if f != fold]
            test = [i for i, f in enumerate(folds) if f == fold]
            head = _fit_head(x[train], [y[i] for i in train], classes, c, weight)
            p = head.probabilities(x[test])
            predicted = (
                [classes[1] if v >= 0.5 else classes[0] for v in p]
                if p.ndim == 1
                else [classes[j] for j in p.argmax(1)]
            )
            hits += sum(predicted[n] == y[i] for n, i in enumerate(test))
        results[c] = hits / len(y)
    best = max(grid, key=lambda c: (results[c], -c))
    return best, results


def _vocabulary(examples: Sequence[Example], min_count: int) -> dict[str, int]:
    counts: Counter[str] = Counter(t for e in examples for t in set(e.terms))
    kept = sorted(t for t, n in counts.items() if n >= min_count)
    return {t: i for i, t in enumerate(kept)}


def fit_answer_model(
    examples: Sequence[Example],
    folds: int = 5,
    min_count: int = 2,
    grid: Sequence[float] = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0),
    vector_heads: Sequence[str] = ("route", "policy"),
    rank_grid: Sequence[tuple[int, int]] = ((60, 4), (100, 4), (200, 4), (100, 8)),
    policy_only: Sequence[Example] = (),
) -> AnswerModel:
    """Train the three heads on ``examples``; each head's C is chosen by grouped ``folds``-fold cross-validation,
    and the heads downstream are trained on out-of-fold outputs of the heads upstream (route → rank → policy), as
    they will see unseen turns. ``policy_only`` examples (e.g. questions close to the knowledge that it does not
    answer) train the policy head alone, seen through the final route and rank heads; the vocabulary, route and
    rank come from ``examples`` only. Deterministic for the same examples."""
    vocabulary = _vocabulary(examples, min_count)
    fold = _folds([e.group for e in examples], folds)
    dims = {len(e.vector) for e in examples if e.vector is not None}
    empty = Head((), np.zeros((0, 0)), np.zeros(0))
    dim = dims.pop() if len(dims) == 1 else 0
    base = AnswerModel(vocabulary, empty, None, empty, dim=dim, vector_heads=tuple(vector_heads))
    report: JSONDict = {"examples": len(examples), "vocabulary": len(vocabulary), "folds": folds}
    # route
    routed = [i for i, e in enumerate(examples) if e.route is not None]
    x_route = np.array([base.route_input(e.terms, e.numbers, e.vector) for e in examples])
    y_route = [examples[i].route for i in routed]
    f_route = [fold[i] for i in routed]
    c_route, cv = _cv_choose(x_route[routed], y_route, f_route, SOURCES, grid, None)
    report["route"] = {"C": c_route, "cv_accuracy": {str(c): v for c, v in cv.items()}}
    route_head = _fit_head(x_route[routed], y_route, SOURCES, c_route, None)
    oof_route: list[dict[str, float]] = [{} for _ in examples]
    for k in sorted(set(fold)):
        train = [i for i in routed if fold[i] != k]
        head = _fit_head(x_route[train], [examples[i].route for i in train], SOURCES, c_route, None)
        for i in range(len(examples)):
            if fold[i] == k:
                p = head.probabilities(x_route[i])[0]
                oof_route[i] = dict(zip(SOURCES, map(float, p), strict=True))
    # rank: candidates of turns with gold; trees × leaves chosen by out-of-fold first-item accuracy
    ranked = [i for i in routed if examples[i].candidates.items and examples[i].gold]
    blocks = {i: rank_input(examples[i].candidates, oof_route[i]) for i in ranked}
    labels = {i: [item.id in examples[i].gold for item in examples[i].candidates.items] for i in ranked}

    def fit_rank(turns: Sequence[int], trees: int, leaves: int) -> Ranker:
        x = np.vstack([blocks[i] for i in turns])
        return Ranker.fit(x, [v for i in turns for v in labels[i]], [len(labels[i]) for i in turns], trees, leaves)

    results = {}
    for trees, leaves in rank_grid:
        hits = 0
        for k in sorted(set(fold)):
            ranker = fit_rank([i for i in ranked if fold[i] != k], trees, leaves)
            hits += sum(labels[i][int(np.argmax(ranker.probabilities(blocks[i])))] for i in ranked if fold[i] == k)
        results[f"{trees}x{leaves}"] = hits / len(ranked)
    trees, leaves = max(rank_grid, key=lambda g: (results[f"{g[0]}x{g[1]}"], -g[0] * g[1]))
    report["rank"] = {"trees_leaves": f"{trees}x{leaves}", "cv_first_gold": results}
    rank_head = fit_rank(ranked, trees, leaves)
    oof_rank: dict[int, np.ndarray] = {}
    for k in sorted(set(fold)):
        ranker = fit_rank([i for i in ranked if fold[i] != k], trees, leaves)
        for i, e in enumerate(examples):
            if fold[i] == k and e.candidates.items:
                oof_rank[i] = ranker.probabilities(rank_input(e.candidates, oof_route[i]))
    # policy
    from ragdial.pipeline.answer_features import ranked_numbers

    x_policy = np.array(
        [
            base.policy_input(
                e.terms,
                policy_numbers(e.numbers, oof_route[i], ranked_numbers(e.candidates, oof_rank.get(i, np.zeros(0)))),
                e.vector,
            )
            for i, e in enumerate(examples)
        ]
    )
    y_policy = [e.policy for e in examples]
    policy_folds = list(fold)
    if policy_only:  # unseen by the route and rank heads: their final outputs are out-of-sample already
        extra = []
        for e in policy_only:
            x_route_e = base.route_input(e.terms, e.numbers, e.vector)
            route = dict(zip(SOURCES, map(float, route_head.probabilities(x_route_e)[0]), strict=True))
            scores = rank_head.probabilities(rank_input(e.candidates, route)) if e.candidates.items else np.zeros(0)
            extra.append(
                base.policy_input(
                    e.terms, policy_numbers(e.numbers, route, ranked_numbers(e.candidates, scores)), e.vector
                )
            )
        x_policy = np.vstack([x_policy, np.array(extra)])
        y_policy += [e.policy for e in policy_only]
        policy_folds += _folds([e.group for e in policy_only], folds)
        report["policy_only"] = len(policy_only)
    c_policy, cv = _cv_choose(x_policy, y_policy, policy_folds, POLICY_CLASSES, grid, "balanced")
    report["policy"] = {"C": c_policy, "cv_accuracy": {str(c): v for c, v in cv.items()}}
    policy_head = _fit_head(x_policy, y_policy, POLICY_CLASSES, c_policy, "balanced")
    # cite_min: the lowest probability at which an item after the first is a gold item at least 60% of the time
    seconds = []
    for i in ranked:
        if i in oof_rank and len(oof_rank[i]) > 1:
            second = int(np.argsort(-oof_rank[i], kind="stable")[1])
            seconds.append((float(oof_rank[i][second]), labels[i][second]))
    cite_min = 0.5
    for threshold in (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5):
        kept = [ok for p, ok in seconds if p >= threshold]
        if kept and sum(kept) / len(kept) >= 0.6:
            cite_min = threshold
            break
    report["cite_min"] = cite_min
    return AnswerModel(vocabulary, route_head, rank_head, policy_head, cite_min, report, dim, tuple(vector_heads))
