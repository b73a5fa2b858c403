"""A learned reranker over the retriever's candidates: LightGBM on lexical, dense, entity, attribute and overlap
features, with a probability threshold that selects several items where a format has several gold ones.

Saved as a LightGBM text model (``reranker.txt``) plus ``reranker.json`` (feature names, cut, training summary);
no pickle.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict
from ragdial.retrieval import saved_meta
from ragdial.retrieval.base import ScoredKnowledge
from ragdial.retrieval.fusion import ranks
from ragdial.retrieval.interaction import InteractionModel, pair_features
from ragdial.schema import Example, SourceKind, Turn

if TYPE_CHECKING:
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.retrieval.pool import CandidateScores, KnowledgePool

SOURCES = list(SourceKind)
FEATURES = [
    "bm25",
    "bm25_last",
    "bm25_rel",
    "bm25_log_rank",
    "dense",
    "dense_last",
    "dense_gap",
    "dense_log_rank",
    "fused_log_rank",
    "log_candidates",
    *[f"source_{s.value}" for s in SOURCES],
    "has_entity",
    "entity_in_focus",
    "entity_age",
    "entity_in_last_turn",
    "attribute_in_query",
    "attribute_char_overlap",
    "value_in_context",
    "value_in_query",
    "overlap_item",
    "overlap_query",
    "title_overlap",
    "used_before",
    "entity_used_before",
    "log_length",
    "interaction",
]
INTERACTION_FILE = "interaction.npy"
MODEL_FILE = "reranker.txt"
META_FILE = "reranker.json"


class RerankerModel(Protocol):
    """What ``HybridRetriever`` needs of a trained reranker: this module's ``Reranker``, a
    ``ragdial.retrieval.transfer.TransferReranker`` or a ``ragdial.retrieval.precedent.PrecedentReranker``."""

    def predict(self, retriever: KnowledgePool, context: Sequence[Turn], scores: CandidateScores) -> np.ndarray: ...

    def cut(self, ranked: Sequence[ScoredKnowledge], k: int | None = None) -> list[ScoredKnowledge]: ...

    def save(self, directory: str | Path) -> Path: ...


def load_reranker(directory: str | Path) -> RerankerModel:
    """The reranker saved in ``directory``, of any kind: a transfer reranker (``transfer.json`` whose ``format``
    is ``ragdial-transfer-reranker``), a triple reranker (``triples.json``, :mod:`ragdial.retrieval.triples`), a
    ``Reranker`` (``reranker.json``), or either wrapped with precedents (``precedent.json``,
    :mod:`ragdial.retrieval.precedent`) or with fine-tuned encoders (``tuned.json``,
    :mod:`ragdial.retrieval.tuned`)."""
    from ragdial.retrieval import precedent, transfer, triples, tuned

    directory = Path(directory)
    if (directory / tuned.META_FILE).is_file():
        return tuned.TunedReranker.load(directory)
    if (directory / precedent.META_FILE).is_file():
        return precedent.PrecedentReranker.load(directory)
    if (directory / triples.META_FILE).is_file():
        return triples.TripleReranker.load(directory)
    meta_path = directory / transfer.META_FILE
    if meta_path.is_file() and not (directory / META_FILE).exists():
        return transfer.TransferReranker.load(directory)
    return Reranker.load(directory)


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(b) if b else 0.0


def pair_rows(retriever: KnowledgePool, scores: CandidateScores) -> list[list[str]]:
    """The word-pair features of each candidate, for the interaction model."""
    query_tokens = retriever.config.analyzer(scores.query)
    return [
        pair_features(query_tokens, retriever.item_tokens(int(i)), retriever.items[int(i)].source.value)
        for i in scores.indices
    ]


def features(
    retriever: KnowledgePool,
    context: Sequence[Turn],
    scores: CandidateScores,
    interaction: InteractionModel | None = None,
) -> np.ndarray:
    """One feature row per candidate, columns in ``FEATURES`` order (``interaction`` 0 without a model)."""
    n = len(scores.indices)
    out = np.zeros((n, len(FEATURES)), dtype=np.float32)
    if n == 0:
        return out
    analyzer = retriever.config.analyzer
    query = scores.query
    query_lower = query.lower()
    query_tokens = set(analyzer(query))
    context_lower = " ".join(t.text for t in context).lower()
    last_turn_entities = set(retriever.tracker.find(context[-1].text)) if context else set()
    used = {i for t in context for i in t.knowledge_ids}
    used_entities = {retriever.kb.get(i).fields.get("entity") for i in used if i in retriever.kb}
    focus = set(scores.focus)
    bm25_max = float(scores.bm25.max()) or 1.0
    dense_max = float(scores.dense.max())
    cols = {name: i for i, name in enumerate(FEATURES)}
    out[:, cols["bm25"]] = scores.bm25
    out[:, cols["bm25_last"]] = scores.bm25_last
    out[:, cols["bm25_rel"]] = scores.bm25 / bm25_max
    out[:, cols["bm25_log_rank"]] = np.log(ranks(scores.bm25))
    out[:, cols["dense"]] = scores.dense
    out[:, cols["dense_last"]] = scores.dense_last
    out[:, cols["dense_gap"]] = dense_max - scores.dense
    out[:, cols["dense_log_rank"]] = np.log(ranks(scores.dense))
    out[:, cols["fused_log_rank"]] = np.log(ranks(scores.fused))
    out[:, cols["log_candidates"]] = math.log(n)
    for row, index in enumerate(scores.indices):
        item = retriever.items[int(index)]
        tokens = retriever.item_tokens(int(index))
        out[row, cols[f"source_{item.source.value}"]] = 1.0
        entity = item.fields.get("entity")
        if isinstance(entity, str) and entity:
            out[row, cols["has_entity"]] = 1.0
            out[row, cols["entity_in_focus"]] = entity in focus
            out[row, cols["entity_age"]] = scores.mention_age.get(entity, 20)
            out[row, cols["entity_in_last_turn"]] = entity in last_turn_entities
            out[row, cols["entity_used_before"]] = entity in used_entities
        else:
            out[row, cols["entity_age"]] = 20
        attribute = str(item.fields.get("attribute") or "")
        if attribute:
            out[row, cols["attribute_in_query"]] = attribute.lower() in query_lower
            chars = set(attribute)
            out[row, cols["attribute_char_overlap"]] = len(chars & set(query)) / len(chars)
        value = str(item.fields.get("value") or "")
        if value:
            out[row, cols["value_in_context"]] = value.lower() in context_lower
            out[row, cols["value_in_query"]] = value.lower() in query_lower
        out[row, cols["overlap_item"]] = _overlap(query_tokens, tokens)
        out[row, cols["overlap_query"]] = _overlap(tokens, query_tokens)
        title = item.fields.get("title")
        if isinstance(title, str) and title:
            out[row, cols["title_overlap"]] = _overlap(set(analyzer(title)), query_tokens)
        out[row, cols["used_before"]] = item.id in used
        out[row, cols["log_length"]] = math.log1p(len(tokens))
    if interaction is not None:
        out[:, cols["interaction"]] = interaction.score(pair_rows(retriever, scores))
    return out


@dataclass
class Reranker:
    """A LightGBM model scoring candidates, and the cut that turns scores into a selection."""

    booster: Any  # Any: lightgbm (untyped Booster)
    interaction: InteractionModel | None = None
    threshold: float = 0.5
    max_select: int = 10
    depth: int = 100
    info: JSONDict = field(default_factory=dict)
    relative: float = 0.0

    def predict(self, retriever: KnowledgePool, context: Sequence[Turn], scores: CandidateScores) -> np.ndarray:
        """A score per candidate: the model's probability for the ``depth`` best fused ones, below 0 for the rest."""
        n = len(scores.indices)
        final = -1.0 - ranks(scores.fused).astype(np.float32) / max(n, 1)
        if n == 0:
            return final
        top = np.argsort(-scores.fused, kind="stable")[: self.depth]
        sub = subset_scores(scores, top)
        final[top] = self.booster.predict(features(retriever, context, sub, self.interaction))
        return final

    def cut(self, ranked: Sequence[ScoredKnowledge], k: int | None = None) -> list[ScoredKnowledge]:
        """The items scoring at least ``threshold`` and ``relative`` x the best score (at least the best one, at
        most ``max_select`` or ``k``)."""
        return cut_by_score(ranked, self.threshold, self.relative, min(self.max_select, k or self.max_select))

    def save(self, directory: str | Path) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.booster.save_model(str(directory / MODEL_FILE))
        if self.interaction is not None:
            self.interaction.save(directory / INTERACTION_FILE)
        saved_meta.write_meta(directory / META_FILE, {"features": FEATURES, **saved_meta.cut_fields(self)})
        return directory

    @classmethod
    def load(cls, directory: str | Path) -> Reranker:
        import lightgbm

        directory = Path(directory)
        meta_path = directory / META_FILE
        if not meta_path.exists() or not (directory / MODEL_FILE).exists():
            raise RagdialError(f"{directory}: not a reranker directory (needs {MODEL_FILE} and {META_FILE})")
        meta = saved_meta.read_meta(meta_path, "reranker file")
        saved_meta.check_features(meta, meta_path, FEATURES, retrain="with `ragdial train retriever`")
        booster = lightgbm.Booster(model_file=str(directory / MODEL_FILE))
        path = directory / INTERACTION_FILE
        interaction = InteractionModel.load(path) if path.exists() else None
        cut = saved_meta.read_cut(meta, meta_path, relative=0.0)
        return cls(booster, interaction, **cut._asdict(), info=saved_meta.info(meta, meta_path))


def cut_by_score(
    ranked: Sequence[ScoredKnowledge], threshold: float, relative: float, limit: int
) -> list[ScoredKnowledge]:
    """The items of ``ranked[:limit]`` scoring at least ``threshold`` and ``relative`` x the best score; the best one
    alone when none does (empty only for an empty ranking). The selection rule of every reranker."""
    if not ranked:
        return []
    floor = max(threshold, relative * ranked[0].score)
    return [r for r in ranked[:limit] if r.score >= floor] or list(ranked[:1])


def subset_scores(scores: CandidateScores, rows: np.ndarray) -> CandidateScores:
    """The candidate scores of ``rows`` only."""
    from ragdial.retrieval.pool import CandidateScores

    return CandidateScores(
        scores.indices[rows],
        scores.bm25[rows],
        scores.dense[rows],
        scores.fused[rows],
        scores.bm25_last[rows],
        scores.dense_last[rows],
        scores.focus,
        scores.mention_age,
        scores.query,
    )


@dataclass
class TrainingRows:
    """Feature rows of many queries: labels, group sizes, candidate and gold ids, word-pair rows, query dialogs."""

    x: np.ndarray
    y: np.ndarray
    groups: np.ndarray
    cand_ids: list[list[str]]
    golds: list[list[str]]
    pairs: list[list[str]]
    dialogs: list[str]


def training_rows(retriever: HybridRetriever, examples: Iterable[Example], depth: int = 100) -> TrainingRows:
    """Feature rows (interaction column left 0) for the knowledge-seeking examples with gold."""
    xs, ys, groups, cand_ids, golds, pairs, dialogs = [], [], [], [], [], [], []
    for example in examples:
        if not example.needs_knowledge or not example.knowledge_ids:
            continue
        scores = retriever.score(example.context, example.dialog_id)
        if len(scores.indices) == 0:
            continue
        top = np.argsort(-scores.fused, kind="stable")[:depth]
        sub = subset_scores(scores, top)
        gold = set(example.knowledge_ids)
        ids = [retriever.items[int(i)].id for i in sub.indices]
        xs.append(features(retriever, example.context, sub))
        ys.append(np.array([i in gold for i in ids], dtype=np.float32))
        groups.append(len(ids))
        cand_ids.append(ids)
        golds.append(list(example.knowledge_ids))
        pairs.extend(pair_rows(retriever, sub))
        dialogs.append(example.dialog_id)
    if not xs:
        raise RagdialError("no knowledge-seeking examples with gold knowledge to train the reranker on")
    return TrainingRows(np.concatenate(xs), np.concatenate(ys), np.array(groups), cand_ids, golds, pairs, dialogs)


def _fit(x: np.ndarray, y: np.ndarray, seed: int, rounds: int):
    import lightgbm

    params = {
        "objective": "binary",
        "learning_rate": 0.05,
        "num_leaves": 31,
        "min_data_in_leaf": 20,
        "feature_fraction": 0.9,
        "bagging_fraction": 0.9,
        "bagging_freq": 1,
        "seed": seed,
        "num_threads": 1,
        "verbosity": -1,
    }
    return lightgbm.train(params, lightgbm.Dataset(x, y, feature_name=FEATURES), num_boost_round=rounds)


RELATIVE_CUTS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)


def best_threshold(
    probs: list[np.ndarray],
    cand_ids: list[list[str]],
    golds: list[list[str]],
    max_select: int,
    relative_cuts: Sequence[float] = (0.0,),
) -> tuple[float, float]:
    """The (absolute, relative-to-best) probability cut maximising micro selection F1 (the DSTC11 formula; at least
    one item chosen); ``relative_cuts`` are the relative thresholds tried (``RELATIVE_CUTS`` for the full grid)."""
    threshold, relative, _ = best_threshold_f1(probs, cand_ids, golds, max_select, relative_cuts)
    return threshold, relative


def best_threshold_f1(
    probs: Sequence[np.ndarray],
    cand_ids: Sequence[Sequence[str]],
    golds: Sequence[Sequence[str]],
    max_select: int,
    relative_cuts: Sequence[float] = (0.0,),
) -> tuple[float, float, float]:
    """``best_threshold``'s cut and the micro selection F1 it reaches."""
    best, best_f1 = (0.5, 0.0), -1.0
    ranked = []
    for p, ids, gold in zip(probs, cand_ids, golds, strict=True):
        order = np.argsort(-p, kind="stable")[:max_select]
        ranked.append((p[order], [ids[i] in set(gold) for i in order], len(set(gold))))
    gold_total = sum(n for _, _, n in ranked)
    for threshold in np.arange(0.05, 0.96, 0.025):
        for relative in relative_cuts:
            tp = chosen_total = 0
            for p, hits, _ in ranked:
                keep = p >= max(threshold, relative * p[0])
                keep[0] = True
                tp += sum(h for h, k in zip(hits, keep, strict=True) if k)
                chosen_total += int(keep.sum())
            f1 = 2 * tp / (chosen_total + gold_total) if chosen_total + gold_total else 0.0
            if f1 > best_f1 + 1e-12:
                best, best_f1 = (float(threshold), relative), f1
    return best[0], best[1], max(best_f1, 0.0)


def dialog_folds(dialogs: Sequence[str], folds: int, seed: int) -> np.ndarray:
    """A fold per query, grouped by dialog (the dialogs shuffled with ``seed``, then dealt round the folds)."""
    names = sorted(set(dialogs))
    random.Random(seed).shuffle(names)
    fold_of = {name: i % folds for i, name in enumerate(names)}
    return np.array([fold_of[d] for d in dialogs])


def train(
    retriever: HybridRetriever,
    examples: Sequence[Example],
    depth: int = 100,
    max_select: int = 10,
    rounds: int = 300,
    seed: int = 0,
    folds: int = 5,
    interaction: bool = True,
    relative_cut: bool = False,
) -> Reranker:
    """Fit the reranker on ``examples`` (knowledge-seeking ones with gold).

    The interaction model's feature is filled out-of-fold (dialog-grouped ``folds``) so LightGBM sees honest
    values; the threshold (with ``relative_cut``, also a relative-to-best threshold) is tuned on one held-out fold,
    then both models are refit on everything.
    """
    data = training_rows(retriever, examples, depth)
    query_fold = dialog_folds(data.dialogs, folds, seed) if len(set(data.dialogs)) >= folds else None
    row_query = np.repeat(np.arange(len(data.groups)), data.groups)
    column = FEATURES.index("interaction")
    model = None
    if interaction:
        if query_fold is not None:
            row_fold = query_fold[row_query]
            for fold in range(folds):
                train_rows = np.flatnonzero(row_fold != fold)
                held_rows = np.flatnonzero(row_fold == fold)
                part = InteractionModel.fit([data.pairs[i] for i in train_rows], data.y[train_rows], seed)
                data.x[held_rows, column] = part.score([data.pairs[i] for i in held_rows])
        model = InteractionModel.fit(data.pairs, data.y, seed)
        if query_fold is None:
            data.x[:, column] = model.score(data.pairs)
    threshold, relative = 0.5, 0.0
    if query_fold is not None:
        held_query = query_fold == 0
        held_rows = held_query[row_query]
        probe = _fit(data.x[~held_rows], data.y[~held_rows], seed, rounds)
        flat = probe.predict(data.x[held_rows])
        probs = np.split(flat, np.cumsum(data.groups[held_query])[:-1])
        cand = [c for c, h in zip(data.cand_ids, held_query, strict=True) if h]
        gold = [g for g, h in zip(data.golds, held_query, strict=True) if h]
        cuts = RELATIVE_CUTS if relative_cut else (0.0,)
        threshold, relative = best_threshold(probs, cand, gold, max_select, cuts)
    booster = _fit(data.x, data.y, seed, rounds)
    info: JSONDict = {
        "queries": len(data.groups),
        "rows": len(data.y),
        "positives": int(data.y.sum()),
        "rounds": rounds,
    }
    return Reranker(booster, model, threshold, max_select, depth, info, relative)
