"""Selection by precedent: a labelled training turn that asked the same of the same entity lends its gold set.

In a deployment that keeps its knowledge base, users ask the same things of the same entities again and again (on
DSTC11 val, 86.6 % of fold 0's knowledge-seeking turns have a gold set that some turn of folds 1-4 has exactly).
A ranking then a cut rebuilds such a set item by item and rarely gets all of it; the precedent gives it whole.
:class:`PrecedentReranker` wraps a trained reranker (either kind) with a memory of the training turns: their last
user turn's vector (the retriever's encoder) and gold ids. For a new turn, the precedents whose gold items are all
of entities in the dialog's focus (and all among this turn's candidates) compete by cosine to the last user turn;
when the best reaches ``threshold``, its gold items are ranked first and are the selection. Otherwise the wrapped
reranker ranks and cuts as before. ``threshold`` is chosen out of fold on the training turns (precedents from
other dialogs only): the lowest cosine at which a precedent still beats ``floor`` F1 on average, so it is used where
it does better than the reranker it wraps. A knowledge base or domain never trained on has no precedent and is
left to the wrapped reranker unchanged.

With a ``refit`` at training time the precedents are *voted* instead of copied: a small LightGBM model (the
stacker, :data:`STACK_FEATURES`) rescores the wrapped reranker's best candidates from its probability and how the
closest precedents treat each item (cosine of the closest precedent whose gold has it, its gap to the closest
precedent at all, the weighted share of the five closest that have it, whether the closest usable one has it), and
a cut tuned on the stacker's out-of-fold scores selects. Its training rows are honest: the wrapped reranker's
probabilities come from ``refit`` models trained without the turn's dialog-group fold, and a turn never sees a
precedent of its own dialog group. This keeps the gain of a close precedent and adds the turns whose precedents
are near but not close enough to copy (DSTC11 val fold 0: selection F1 0.870 copied, 0.890 voted; see
docs/benchmarks/zero_shot.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict
from ragdial.retrieval import saved_meta
from ragdial.retrieval.base import ScoredKnowledge
from ragdial.retrieval.rerank import RELATIVE_CUTS, cut_by_score
from ragdial.retrieval.rerank import best_threshold as best_cut
from ragdial.schema import Example, Speaker, Turn

if TYPE_CHECKING:
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.retrieval.pool import CandidateScores, KnowledgePool
    from ragdial.retrieval.rerank import RerankerModel

META_FILE = "precedent.json"
VECTORS_FILE = "precedent.npy"
STACKER_FILE = "stacker.txt"
STACK_FEATURES = [
    "probability",
    "probability_to_best",
    "log_rank",
    "best_probability",
    "precedent_cosine",
    "precedent_gap",
    "precedent_share",
    "closest_cosine",
    "in_closest_usable",
]
STACK_DEPTH = 30
"""The stacker rescores the wrapped reranker's ``STACK_DEPTH`` best candidates (those it scored as probabilities)."""
NEAREST = 50  # precedents looked at for an item's closest precedent
VOTERS = 5  # the closest precedents whose gold sets share their weight
BASE_DIR = "base"
FORMAT = "ragdial-precedent-reranker"
PRECEDENT_SCORE = 2.0
"""A precedent's items score ``PRECEDENT_SCORE`` + the wrapped reranker's probability: above any probability, so
they rank first, in the wrapped reranker's order. With a stacker, the rescored candidates score ``PRECEDENT_SCORE``
+ the stacker's probability."""


def _last_user(context: Sequence[Turn]) -> str:
    return next((t.text for t in reversed(context) if t.speaker == Speaker.USER), "")


def _turn_vectors(retriever: KnowledgePool, texts: Sequence[str]) -> np.ndarray:
    from ragdial.text.encoders import QueryCache

    if retriever.encoder is None:
        raise RagdialError("selection by precedent compares turns with the retriever's encoder; it has none")
    return np.asarray(QueryCache.shared(retriever.encoder)(list(texts)), dtype=np.float32)


def _entities(retriever: KnowledgePool, ids: Sequence[str]) -> frozenset[str]:
    names = set()
    for item_id in ids:
        entity = retriever.kb.get(item_id).fields.get("entity") if item_id in retriever.kb else None
        if not isinstance(entity, str) or not entity:
            return frozenset()  # an item without an entity (or unknown) is never in a focus
        names.add(entity)
    return frozenset(names)


@dataclass
class Stacker:
    """The vote of the precedents: a LightGBM model over :data:`STACK_FEATURES` and its selection cut."""

    booster: Any  # Any: lightgbm (untyped Booster)
    threshold: float
    relative: float
    max_select: int = 10


def _usable(entities: Sequence[frozenset[str]], focus: set[str]) -> np.ndarray:
    return np.array([bool(e) and e <= focus for e in entities], dtype=bool)


def stack_features(
    ids: Sequence[str],
    probabilities: np.ndarray,
    cosines: np.ndarray,
    usable: np.ndarray,
    golds: Sequence[Sequence[str]],
) -> tuple[np.ndarray, np.ndarray]:
    """(the rows of the candidates the stacker rescores, their :data:`STACK_FEATURES`): the wrapped reranker's
    ``STACK_DEPTH`` best candidates it scored as probabilities (``ids`` / ``probabilities`` per candidate), read
    against the precedents' ``cosines`` to the turn, of which only the ``usable`` ones count (entities in focus)."""
    order = np.argsort(-probabilities, kind="stable")[:STACK_DEPTH]
    kept = order[probabilities[order] >= 0.0]
    order = kept if len(kept) else order[:1]
    allowed = np.flatnonzero(usable)
    allowed = allowed[np.argsort(-cosines[allowed], kind="stable")][:NEAREST]
    closest = float(cosines[allowed[0]]) if len(allowed) else 0.0
    present = set(ids)
    first: dict[str, float] = {}
    for index in allowed:
        for item in golds[int(index)]:
            first.setdefault(item, float(cosines[index]))
    voters = allowed[:VOTERS]
    weight = float(cosines[voters].sum()) if len(voters) else 0.0
    share: dict[str, float] = {}
    for index in voters:
        for item in golds[int(index)]:
            share[item] = share.get(item, 0.0) + float(cosines[index]) / (weight or 1.0)
    usable_set = next((set(golds[int(i)]) for i in allowed if all(x in present for x in golds[int(i)])), set())
    best = float(probabilities[order[0]])
    rows = []
    for rank, row in enumerate(order):
        item = ids[int(row)]
        near = first.get(item, 0.0)
        rows.append(
            [
                probabilities[row],
                probabilities[row] / max(best, 1e-6),
                np.log1p(rank),
                best,
                near,
                near - closest if near else -1.0,
                share.get(item, 0.0),
                closest,
                float(item in usable_set),
            ]
        )
    return order, np.asarray(rows, dtype=np.float32).reshape(len(order), len(STACK_FEATURES))


@dataclass
class PrecedentReranker:
    """A trained reranker and the training turns it may copy a gold set from (or, with a stacker, vote with)."""

    base: RerankerModel
    vectors: np.ndarray  # one row per precedent: its last user turn under ``encoder``
    golds: list[list[str]]
    encoder: str
    threshold: float = 1.1  # above any cosine: never used until fitted
    info: JSONDict = field(default_factory=dict)
    stacker: Stacker | None = None
    # the golds' entity sets under the last knowledge base asked about, with that KB and its size when they were
    # computed (the KB object is kept, so its id cannot be reused; a KB that grew is read again)
    _entities_of: tuple[object, int, list[frozenset[str]]] | None = field(default=None, repr=False, compare=False)

    def _gold_entities(self, retriever: KnowledgePool) -> list[frozenset[str]]:
        """Each precedent's entity set in ``retriever``'s knowledge base, computed once per knowledge base (they were
        recomputed for every turn)."""
        kb = retriever.kb
        if self._entities_of is None or self._entities_of[0] is not kb or self._entities_of[1] != len(kb):
            self._entities_of = (kb, len(kb), [_entities(retriever, g) for g in self.golds])
        return self._entities_of[2]

    def _cosines(self, retriever: KnowledgePool, context: Sequence[Turn]) -> np.ndarray | None:
        text = _last_user(context)
        if not text.strip() or not self.golds:
            return None
        if retriever.encoder is None or retriever.encoder.name != self.encoder:
            raise RagdialError(f"precedents were encoded with {self.encoder!r}; the retriever's encoder differs")
        return self.vectors @ _turn_vectors(retriever, [text])[0]

    def _stacked(self, retriever: KnowledgePool, context: Sequence[Turn], scores: CandidateScores) -> np.ndarray:
        """The stacker's probabilities + ``PRECEDENT_SCORE`` for the wrapped reranker's best candidates (the rest keep
        the wrapped scores, below them); the wrapped scores alone when no precedent is usable (no entity in focus
        has one: a knowledge base or domain never trained on)."""
        assert self.stacker is not None
        final = np.asarray(self.base.predict(retriever, context, scores), dtype=np.float32).copy()
        if not len(final) or not scores.focus:
            return final
        usable = _usable(self._gold_entities(retriever), set(scores.focus))  # of this retriever's KB
        cosines = self._cosines(retriever, context) if usable.any() else None
        if cosines is None:
            return final
        ids = [retriever.items[int(i)].id for i in scores.indices]
        rows, x = stack_features(ids, final, cosines, usable, self.golds)
        final[rows] = PRECEDENT_SCORE + self.stacker.booster.predict(x)
        return final

    def find(
        self, retriever: KnowledgePool, context: Sequence[Turn], scores: CandidateScores
    ) -> tuple[float, list[int]] | None:
        """(the cosine, the rows of ``scores`` holding its gold items) of the closest precedent reaching the
        threshold, or None."""
        focus = set(scores.focus)
        cosines = self._cosines(retriever, context) if focus else None
        if cosines is None:
            return None
        row_of = {retriever.items[int(index)].id: row for row, index in enumerate(scores.indices)}
        for best in np.argsort(-cosines, kind="stable"):
            if cosines[best] < self.threshold:
                return None
            gold = self.golds[int(best)]
            if self._gold_entities(retriever)[int(best)] <= focus and all(i in row_of for i in gold):
                return float(cosines[best]), [row_of[i] for i in gold]
        return None

    def predict(self, retriever: KnowledgePool, context: Sequence[Turn], scores: CandidateScores) -> np.ndarray:
        """The wrapped reranker's scores, with a precedent's items (when one applies) moved above all of them; with a
        stacker, its probabilities for the wrapped reranker's best candidates (the rest below, in that order)."""
        if self.stacker is not None:
            return self._stacked(retriever, context, scores)
        final = np.asarray(self.base.predict(retriever, context, scores), dtype=np.float32).copy()
        found = self.find(retriever, context, scores) if len(scores.indices) else None
        if found is not None:  # first, in the wrapped reranker's order
            final[found[1]] = PRECEDENT_SCORE + np.clip(final[found[1]], 0.0, 0.999)
        return final

    def cut(self, ranked: Sequence[ScoredKnowledge], k: int | None = None) -> list[ScoredKnowledge]:
        """A precedent's items when the ranking starts with them, else the wrapped reranker's cut; with a stacker,
        its cut of the rescored candidates (the wrapped reranker's when the turn had no usable precedent)."""
        if self.stacker is not None:
            if not ranked or ranked[0].score < PRECEDENT_SCORE:  # no usable precedent: the wrapped reranker's cut
                return self.base.cut(ranked, k)
            limit = min(self.stacker.max_select, k or self.stacker.max_select)
            shifted = [ScoredKnowledge(r.item, r.score - PRECEDENT_SCORE) for r in ranked]
            kept = {id(s.item) for s in cut_by_score(shifted, self.stacker.threshold, self.stacker.relative, limit)}
            return [r for r in ranked if id(r.item) in kept]
        chosen = [r for r in ranked if r.score >= PRECEDENT_SCORE]
        if chosen:
            return chosen[:k] if k else chosen
        return self.base.cut(ranked, k)

    def save(self, directory: str | Path) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.base.save(directory / BASE_DIR)
        np.save(directory / VECTORS_FILE, self.vectors.astype(np.float32))
        meta = {
            "format": FORMAT,
            "encoder": self.encoder,
            "threshold": self.threshold,
            "golds": self.golds,
            "info": self.info,
        }
        if self.stacker is not None:
            self.stacker.booster.save_model(str(directory / STACKER_FILE))
            meta["stacker"] = {
                "features": STACK_FEATURES,
                "threshold": self.stacker.threshold,
                "relative": self.stacker.relative,
                "max_select": self.stacker.max_select,
            }
        saved_meta.write_meta(directory / META_FILE, meta)
        return directory

    @classmethod
    def load(cls, directory: str | Path) -> PrecedentReranker:
        from ragdial.retrieval.rerank import load_reranker

        directory = Path(directory)
        meta_path = directory / META_FILE
        meta = saved_meta.read_meta(meta_path, "precedent reranker directory", FORMAT)
        try:
            vectors = np.load(directory / VECTORS_FILE)
        except (OSError, ValueError) as error:
            raise RagdialError(f"{directory}: not a precedent reranker directory ({error})") from None
        golds = meta.get("golds")
        if not isinstance(golds, list) or not all(isinstance(g, list) for g in golds) or len(golds) != len(vectors):
            raise RagdialError(f"{meta_path}: field 'golds' must list one id list per row of {VECTORS_FILE}")
        stacker = None
        if meta.get("stacker") is not None:
            stacker = _load_stacker(directory, meta["stacker"], meta_path)
        return cls(
            load_reranker(directory / BASE_DIR),
            vectors.astype(np.float32),
            [[str(i) for i in g] for g in golds],
            str(meta.get("encoder")),
            saved_meta.number(meta, "threshold", meta_path, default=1.1),
            saved_meta.info(meta, meta_path),
            stacker,
        )


def _load_stacker(directory: Path, spec: object, meta_path: Path) -> Stacker:
    import lightgbm

    if not isinstance(spec, dict):
        raise RagdialError(f"{meta_path}: field 'stacker' must be a JSON object, got {type(spec).__name__}")
    if spec.get("features") != STACK_FEATURES:
        raise RagdialError(f"{meta_path}: field 'stacker' was trained on other features; retrain the reranker")
    values = (
        saved_meta.number(spec, "threshold", meta_path),
        saved_meta.number(spec, "relative", meta_path),
        saved_meta.count(spec, "max_select", meta_path, default=10, minimum=1),
    )
    path = directory / STACKER_FILE
    try:
        booster = lightgbm.Booster(model_file=str(path))
    except lightgbm.basic.LightGBMError as error:
        raise RagdialError(f"{path}: not a stacker model for {meta_path} ({error})") from None
    return Stacker(booster, *values)


def _f1(gold: Sequence[str], picked: Sequence[str]) -> float:
    both = len(set(gold) & set(picked))
    return 2 * both / (len(set(gold)) + len(set(picked))) if both else 0.0


def best_threshold(cosines: Sequence[float], f1s: Sequence[float], floor: float) -> float:
    """The lowest cosine from which on the precedents' mean F1 stays above ``floor`` (the threshold maximising
    the summed gain ``F1 - floor`` over the turns at or above it); above any cosine when none gains."""
    order = np.argsort(-np.asarray(cosines, dtype=np.float64), kind="stable")
    gains = np.cumsum(np.asarray(f1s, dtype=np.float64)[order] - floor)
    if not len(gains) or gains.max() <= 0:
        return 1.1
    return float(np.asarray(cosines)[order][int(np.argmax(gains))])


def train(
    retriever: HybridRetriever,
    examples: Sequence[Example],
    base: RerankerModel,
    floor: float = 0.85,
    refit: Callable[[Sequence[Example]], RerankerModel] | None = None,
    folds: int = 4,
    seed: int = 0,
) -> PrecedentReranker:
    """Wrap ``base`` with the knowledge-seeking ``examples`` as precedents. The threshold: each training turn looks
    up the closest precedent of *another* dialog (grouped by first turn) its focus allows, as at run time; the
    lowest cosine above which those borrowed sets reach ``floor`` F1 on average (:func:`best_threshold`).
    With ``refit`` (trains a reranker like ``base`` on some examples), the precedents vote through a stacker
    (:func:`train_stacker`, ``folds`` dialog-group folds) instead of being copied."""
    seeking = [e for e in examples if e.needs_knowledge and e.knowledge_ids]
    if retriever.encoder is None:
        raise RagdialError("selection by precedent compares turns with the retriever's encoder; it has none")
    vectors = _turn_vectors(retriever, [_last_user(e.context) for e in seeking]) if seeking else np.zeros((0, 1))
    golds = [list(dict.fromkeys(e.knowledge_ids)) for e in seeking]
    groups = np.array([e.context[0].text if e.context else e.dialog_id for e in seeking])
    entities = [_entities(retriever, g) for g in golds]
    cosines, f1s = [], []
    for index, example in enumerate(seeking):
        focus = set(retriever.score(example.context, example.dialog_id).focus)
        if not focus:
            continue
        similar = vectors @ vectors[index]
        allowed = (groups != groups[index]) & np.array([bool(e) and e <= focus for e in entities])
        if not allowed.any():
            continue
        best = int(np.flatnonzero(allowed)[np.argmax(similar[allowed])])
        cosines.append(float(similar[best]))
        f1s.append(_f1(golds[index], golds[best]))
    threshold = best_threshold(cosines, f1s, floor)
    covered = [f for c, f in zip(cosines, f1s, strict=True) if c >= threshold]
    info: JSONDict = {
        "precedents": len(seeking),
        "floor": floor,
        "held_out_turns": len(cosines),
        "held_out_covered": len(covered),
        "held_out_f1_covered": round(float(np.mean(covered)), 4) if covered else 0.0,
    }
    name = retriever.encoder.name
    stacker = None
    if refit is not None and seeking:
        stacker, stack_info = train_stacker(retriever, seeking, vectors, golds, groups, refit, folds, seed)
        info.update(stack_info)
    return PrecedentReranker(base, vectors, golds, name, threshold, info, stacker)


def _fit_stacker(x: np.ndarray, y: np.ndarray, seed: int):
    import lightgbm

    params = {
        "objective": "binary",
        "learning_rate": 0.05,
        "num_leaves": 15,
        "min_data_in_leaf": 20,
        "seed": seed,
        "num_threads": 1,
        "verbosity": -1,
    }
    return lightgbm.train(params, lightgbm.Dataset(x, y, feature_name=STACK_FEATURES), num_boost_round=200)


def train_stacker(
    retriever: HybridRetriever,
    seeking: Sequence[Example],
    vectors: np.ndarray,
    golds: Sequence[Sequence[str]],
    groups: np.ndarray,
    refit: Callable[[Sequence[Example]], RerankerModel],
    folds: int = 4,
    seed: int = 0,
) -> tuple[Stacker | None, JSONDict]:
    """The stacker over the precedents' vote, on honest rows: ``seeking`` is split into ``folds`` dialog-group
    folds (fewer when there are fewer groups); each fold's turns are scored by a ``refit`` model trained on the
    other folds and read against the precedents of other dialog groups only. The cut is tuned on the stacker's own
    out-of-fold scores (same folds). None (the copy rule stays) when there are fewer than two folds, or no
    candidate is gold (or every one is)."""
    from ragdial.retrieval.rerank import dialog_folds

    folds = min(folds, len(set(groups.tolist())))
    fold_of = dialog_folds(list(groups), folds, seed) if folds >= 2 else np.zeros(len(groups), int)
    entities = [_entities(retriever, g) for g in golds]
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    ids_of: list[list[str]] = []
    turn_golds: list[list[str]] = []
    turn_fold: list[int] = []
    for fold in sorted(set(fold_of.tolist())):
        held = np.flatnonzero(fold_of == fold)
        rest = [seeking[int(i)] for i in np.flatnonzero(fold_of != fold)]
        model = refit(rest) if rest else None
        for index in held:
            example = seeking[int(index)]
            scores = retriever.score(example.context, example.dialog_id)
            if model is None or not len(scores.indices):
                continue
            probabilities = np.asarray(model.predict(retriever, example.context, scores), dtype=np.float32)
            ids = [retriever.items[int(i)].id for i in scores.indices]
            usable = _usable(entities, set(scores.focus)) & (groups != groups[index])
            if not usable.any():  # left to the wrapped reranker at run time too
                continue
            rows, x = stack_features(ids, probabilities, vectors @ vectors[index], usable, golds)
            gold = set(golds[int(index)])
            xs.append(x)
            ys.append(np.array([ids[int(r)] in gold for r in rows], dtype=np.float32))
            ids_of.append([ids[int(r)] for r in rows])
            turn_golds.append(list(gold))  # the whole gold set: what the stacker did not see counts as missed
            turn_fold.append(fold)
    if len(set(turn_fold)) < 2 or len({float(v) for y in ys for v in y}) < 2:
        return None, {"stacker": "not trained: too few training turns with gold and other candidates to vote"}
    folds_seen = np.array(turn_fold)
    probs: list[np.ndarray] = [np.zeros(0)] * len(xs)
    for fold in sorted(set(turn_fold)):
        inside = np.flatnonzero(folds_seen != fold)
        if len({float(v) for i in inside for v in ys[i]}) < 2:  # one class outside: tune on in-sample scores
            inside = np.arange(len(xs))
        booster = _fit_stacker(np.concatenate([xs[i] for i in inside]), np.concatenate([ys[i] for i in inside]), seed)
        for i in np.flatnonzero(folds_seen == fold):
            probs[i] = booster.predict(xs[i])
    threshold, relative = best_cut(probs, ids_of, turn_golds, 10, RELATIVE_CUTS)
    booster = _fit_stacker(np.concatenate(xs), np.concatenate(ys), seed)
    info: JSONDict = {"stacker_turns": len(xs), "stacker_rows": int(sum(len(y) for y in ys)), "stacker_folds": folds}
    return Stacker(booster, threshold, relative), info
