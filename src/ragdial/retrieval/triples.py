"""Selecting knowledge-graph triples in a domain never trained on (KdConv / Huawei format, issue 20).

A KdConv turn cites one or a few triples of the entity under discussion; the hard part is the *attribute*: the
user asks "知道这是在哪里制片的吗？" and the reply cites ``制片地区``, not ``制片人``. Attribute names change from
domain to domain (film ``上映时间``, music ``发行时间``, travel ``开放时间``) but the way a question points at a name
does not: "哪年" goes with a name containing "时间", "哪里" with one containing "地". :class:`AttributeMatcher` learns
that from the training domains as a logistic regression over hashed pairs (a character or character bigram of the
last user turn x one of the attribute name), never over whole domain words.

:class:`TripleReranker` is LightGBM over the transfer reranker's columns (``transfer.features``) plus
:data:`TRIPLE_FEATURES`: the matcher's score and its gap to the best candidate, how many of the knowledge base's
entities have the attribute, and how many values the entity has for it (a list such as ``主演`` or ``主要成就``).
Every column is computed from the turn and the knowledge base itself. With a sentence ``encoder`` (e.g. ``e5``,
multilingual-e5-small) :data:`ENCODER_FEATURES` add how close the last user turn is, under that encoder, to each
candidate's "entity attribute value" and to its attribute name alone (only the ``depth`` candidates are
encoded). During training the matcher's column on a training turn comes from a matcher fitted without that turn's
group (its domain, when the caller names one), so the second stage sees the matcher as it will be on a new domain.
The selection cut is fitted out of fold on the training dialogs, as for the transfer reranker; the object has the
same interface (``predict``, ``cut``, ``save``/``load``).
"""

from __future__ import annotations

import math
import random
import re
import threading
import weakref
import zlib
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict
from ragdial.retrieval import saved_meta, transfer
from ragdial.retrieval.base import ScoredKnowledge
from ragdial.retrieval.fusion import ranks
from ragdial.retrieval.rerank import best_threshold, cut_by_score, subset_scores
from ragdial.schema import Example, Knowledge, KnowledgeBase, SourceKind, Speaker, Turn

if TYPE_CHECKING:
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.retrieval.pool import CandidateScores, KnowledgePool
    from ragdial.retrieval.store import ItemStore

    Items = KnowledgeBase | ItemStore

DESCRIPTION = "Information"
"""The attribute KdConv and the Huawei data give an entity's free-text description."""
HASH_DIM = 2**18
TRIPLE_FEATURES = ["attribute_matcher", "attribute_matcher_gap", "attribute_kb_share", "entity_attribute_log_values"]
ENCODER_FEATURES = [
    "encoder_triple_cos",
    "encoder_triple_gap",
    "encoder_triple_log_rank",
    "encoder_attribute_cos",
    "encoder_attribute_gap",
]
VALUE_CHARS = 100
"""How much of a triple's value the encoder reads (a description runs to hundreds of characters)."""
MODEL_FILE = "triples.txt"
MATCHER_FILE = "matcher.npz"
META_FILE = "triples.json"
FORMAT = "ragdial-triple-reranker"
_NOT_CONTENT = re.compile(r"[\s\W_]+", re.UNICODE)


def units(text: str) -> set[str]:
    """The characters and character bigrams of ``text`` without spaces and punctuation ("哪年?" -> 哪, 年, 哪年)."""
    compact = _NOT_CONTENT.sub("", text.lower())
    return set(compact) | {compact[i : i + 2] for i in range(len(compact) - 1)}


def _attribute_units(attribute: str) -> set[str]:
    return {"<description>"} if attribute == DESCRIPTION else units(attribute)


def _pair_columns(question: str, attribute: str) -> list[int]:
    turn = units(question)
    return sorted({zlib.crc32(f"{a}|{u}".encode()) % HASH_DIM for a in _attribute_units(attribute) for u in turn})


def _matrix(rows: Sequence[list[int]]):
    from scipy import sparse

    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(r) for r in rows])
    indices = np.fromiter((c for r in rows for c in r), dtype=np.int64, count=int(indptr[-1]))
    return sparse.csr_matrix((np.ones(len(indices), np.float32), indices, indptr), shape=(len(rows), HASH_DIM))


@dataclass
class AttributeMatcher:
    """How well a turn asks for an attribute name: a linear model over (turn unit, attribute-name unit) pairs."""

    weights: np.ndarray
    bias: float = 0.0

    @classmethod
    def fit(
        cls, questions: Sequence[str], attributes: Sequence[str], labels: Sequence[bool], c: float = 0.3
    ) -> AttributeMatcher:
        """Fit on parallel lists: a turn, an attribute name it could be answered with, whether the reply used it."""
        from sklearn.linear_model import LogisticRegression

        if len(set(labels)) < 2:
            raise RagdialError("the attribute matcher needs both used and unused attributes to learn from")
        x = _matrix([_pair_columns(q, a) for q, a in zip(questions, attributes, strict=True)])
        model = LogisticRegression(C=c, max_iter=300).fit(x, np.asarray(labels, dtype=bool))
        return cls(model.coef_[0].astype(np.float32), float(model.intercept_[0]))

    def score(self, question: str, attributes: Sequence[str]) -> np.ndarray:
        """The log-odds that the reply to ``question`` uses each attribute name."""
        distinct = sorted(set(attributes))
        if not distinct:
            return np.zeros(0, dtype=np.float32)
        x = _matrix([_pair_columns(question, a) for a in distinct])
        found = dict(zip(distinct, np.asarray(x @ self.weights).ravel() + self.bias, strict=True))
        return np.array([found[a] for a in attributes], dtype=np.float32)

    def save(self, path: Path) -> None:
        nonzero = np.flatnonzero(self.weights)
        np.savez_compressed(path, index=nonzero, value=self.weights[nonzero], bias=np.array([self.bias]))

    @classmethod
    def load(cls, path: Path) -> AttributeMatcher:
        with np.load(path) as data:
            weights = np.zeros(HASH_DIM, dtype=np.float32)
            weights[data["index"]] = data["value"]
            return cls(weights, float(data["bias"][0]))


def _last_user(context: Sequence[Turn]) -> str:
    return next((t.text for t in reversed(context) if t.speaker == Speaker.USER), "")


def _field(item: Knowledge, name: str) -> str:
    value = item.fields.get(name) if item.source == SourceKind.KG_TRIPLE else None
    return value if isinstance(value, str) else ""


class KbStats:
    """What the features need of a knowledge base: the share of entities having each attribute and the number of
    values of each (entity, attribute)."""

    def __init__(self, kb: Items) -> None:
        holders: dict[str, set[str]] = defaultdict(set)
        self.values: Counter[tuple[str, str]] = Counter()
        entities: set[str] = set()
        for item in kb:
            entity, attribute = _field(item, "entity"), _field(item, "attribute")
            if entity and attribute:
                holders[attribute].add(entity)
                self.values[(entity, attribute)] += 1
                entities.add(entity)
        self.share = {a: len(e) / max(len(entities), 1) for a, e in holders.items()}


def triple_features(stats: KbStats, items: Sequence[Knowledge], matched: np.ndarray) -> np.ndarray:
    """The :data:`TRIPLE_FEATURES` columns of ``items`` (the candidates of one turn); ``matched`` is the
    attribute matcher's score of each."""
    out = np.zeros((len(items), len(TRIPLE_FEATURES)), dtype=np.float32)
    if not items:
        return out
    best = float(matched.max())
    for row, item in enumerate(items):
        entity, attribute = _field(item, "entity"), _field(item, "attribute")
        out[row] = (
            matched[row],
            best - matched[row],
            stats.share.get(attribute, 0.0),
            math.log(max(stats.values[(entity, attribute)], 1)),
        )
    return out


def feature_names(encoder: str | None = None) -> list[str]:
    """The columns of a model with (or without) a sentence encoder."""
    return transfer.FEATURES + TRIPLE_FEATURES + (ENCODER_FEATURES if encoder else [])


_PASSAGES: dict[str, OrderedDict[str, np.ndarray]] = {}
_PASSAGE_CACHE = 50_000
_PASSAGE_LOCK = threading.Lock()


def _passage_vectors(name: str, texts: Sequence[str]) -> np.ndarray:
    """The encoder's passage vectors of ``texts``, kept in a per-encoder LRU (turns share most candidates); one
    caller at a time (the service may rerank in several threads)."""
    from ragdial.text.encoders import get_encoder

    with _PASSAGE_LOCK:
        cache = _PASSAGES.setdefault(name, OrderedDict())
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            cache.update(zip(missing, get_encoder(name).encode(missing, is_query=False), strict=True))
        for text in texts:
            cache.move_to_end(text)
        out = np.stack([cache[t] for t in texts])
        while len(cache) > _PASSAGE_CACHE:
            cache.popitem(last=False)
        return out


def encoder_features(name: str, question: str, items: Sequence[Knowledge]) -> np.ndarray:
    """The :data:`ENCODER_FEATURES` columns of ``items`` for the last user turn ``question`` under encoder
    ``name``: its cosine to "entity attribute value" (the value cut to :data:`VALUE_CHARS`), the gap to the best,
    the log rank, and its cosine to the attribute name and that gap."""
    from ragdial.text.encoders import QueryCache, get_encoder

    out = np.zeros((len(items), len(ENCODER_FEATURES)), dtype=np.float32)
    if not items or not question.strip():
        return out
    query = QueryCache.shared(get_encoder(name))([question])[0]
    whole = [
        f"{_field(i, 'entity')} {_field(i, 'attribute')} {_field(i, 'value')[:VALUE_CHARS]}"
        if _field(i, "attribute")
        else i.text[: 2 * VALUE_CHARS]
        for i in items
    ]
    triple_cos = _passage_vectors(name, whole) @ query
    attribute_cos = _passage_vectors(name, [_field(i, "attribute") or i.text for i in items]) @ query
    out[:, 0] = triple_cos
    out[:, 1] = float(triple_cos.max()) - triple_cos
    out[:, 2] = np.log(ranks(triple_cos))
    out[:, 3] = attribute_cos
    out[:, 4] = float(attribute_cos.max()) - attribute_cos
    return out


@dataclass
class TripleReranker:
    """LightGBM over the transfer reranker's columns and :data:`TRIPLE_FEATURES`, with a selection cut."""

    booster: Any  # Any: lightgbm (untyped Booster)
    matcher: AttributeMatcher
    threshold: float = 0.5
    relative: float = 0.0
    max_select: int = 10
    depth: int = 50
    info: JSONDict = field(default_factory=dict)
    encoder: str | None = None

    def features(self, retriever: KnowledgePool, context: Sequence[Turn], scores: CandidateScores) -> np.ndarray:
        items = [retriever.items[int(i)] for i in scores.indices]
        matched = self.matcher.score(_last_user(context), [_field(i, "attribute") for i in items])
        return _columns(retriever, context, scores, matched, self.encoder)

    def probabilities(self, retriever: KnowledgePool, context: Sequence[Turn], scores: CandidateScores):
        """(indices of the ``depth`` best fused candidates, the model's probability for each)."""
        top = transfer.reranker_input(retriever, context, scores, self.depth)
        sub = subset_scores(scores, top)
        return top, self.booster.predict(self.features(retriever, context, sub))

    def predict(self, retriever: KnowledgePool, context: Sequence[Turn], scores: CandidateScores) -> np.ndarray:
        """The model's probability for the ``depth`` best fused candidates, below 0 for the rest."""
        n = len(scores.indices)
        final = -1.0 - ranks(scores.fused).astype(np.float32) / max(n, 1)
        if n:
            top, probs = self.probabilities(retriever, context, scores)
            final[top] = probs
        return final

    def cut(self, ranked: Sequence[ScoredKnowledge], k: int | None = None) -> list[ScoredKnowledge]:
        """The items scoring at least ``threshold`` and ``relative`` x the best (at least one)."""
        return cut_by_score(ranked, self.threshold, self.relative, min(self.max_select, k or self.max_select))

    def save(self, directory: str | Path) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.booster.save_model(str(directory / MODEL_FILE))
        self.matcher.save(directory / MATCHER_FILE)
        meta = {
            "format": FORMAT,
            "features": feature_names(self.encoder),
            "encoder": self.encoder,
            **saved_meta.cut_fields(self),
        }
        saved_meta.write_meta(directory / META_FILE, meta)
        return directory

    @classmethod
    def load(cls, directory: str | Path) -> TripleReranker:
        import lightgbm

        directory = Path(directory)
        meta_path = directory / META_FILE
        if not all((directory / name).is_file() for name in (META_FILE, MODEL_FILE, MATCHER_FILE)):
            raise RagdialError(f"{directory}: not a triple reranker ({META_FILE}, {MODEL_FILE}, {MATCHER_FILE})")
        meta = saved_meta.read_meta(meta_path, "triple reranker file", FORMAT)
        from ragdial.text.encoders import ENCODERS

        encoder = meta.get("encoder")
        if encoder is not None and (not isinstance(encoder, str) or encoder not in ENCODERS):
            raise RagdialError(
                f"{meta_path}: field 'encoder' must be an encoder name ({', '.join(ENCODERS)}) or null, got {encoder!r}"
            )
        saved_meta.check_features(meta, meta_path, feature_names(encoder))
        booster = lightgbm.Booster(model_file=str(directory / MODEL_FILE))
        matcher = AttributeMatcher.load(directory / MATCHER_FILE)
        cut = saved_meta.read_cut(meta, meta_path)
        return cls(booster, matcher, **cut._asdict(), info=saved_meta.info(meta, meta_path), encoder=encoder)


_STATS: weakref.WeakKeyDictionary[KnowledgePool, KbStats] = weakref.WeakKeyDictionary()


def _kb_stats(retriever: KnowledgePool) -> KbStats:
    found = _STATS.get(retriever)
    if found is None:
        found = _STATS[retriever] = KbStats(retriever.kb)
    return found


def _columns(
    retriever: KnowledgePool,
    context: Sequence[Turn],
    scores: CandidateScores,
    matched: np.ndarray,
    encoder: str | None = None,
) -> np.ndarray:
    items = [retriever.items[int(i)] for i in scores.indices]
    parts = [transfer.features(retriever, context, scores), triple_features(_kb_stats(retriever), items, matched)]
    if encoder:
        parts.append(encoder_features(encoder, _last_user(context), items))
    return np.concatenate(parts, axis=1)


def _fit(x: np.ndarray, y: np.ndarray, seed: int, rounds: int, encoder: str | None = None):
    """The transfer reranker's LightGBM settings, over these columns."""
    return transfer._fit(x, y, seed, rounds, feature_names(encoder))


def _matcher(questions: list[str], attributes: list[str], labels: list[bool]) -> AttributeMatcher:
    """The matcher fitted on these pairs, or one scoring every pair 0 where they do not hold both labels (one
    attribute per entity: nothing to tell apart)."""
    if len(set(labels)) < 2:
        return AttributeMatcher(np.zeros(HASH_DIM, dtype=np.float32))
    return AttributeMatcher.fit(questions, attributes, labels)


def _by_dialog(example: Example) -> str:
    return example.context[0].text if example.context else example.dialog_id


def train(
    retriever: HybridRetriever,
    examples: Sequence[Example],
    group_of: Callable[[Example], str] | None = None,
    depth: int = 50,
    max_select: int = 10,
    rounds: int = 200,
    seed: int = 0,
    folds: int = 5,
    encoder: str | None = None,
) -> TripleReranker:
    """Fit on ``examples`` (turns citing triples of ``retriever``'s knowledge base). ``group_of`` names each
    example's group, e.g. its domain: the matcher's column of a training turn comes from a matcher fitted on the
    other groups (default: ``folds`` folds of the dialogs; with a single group that column is 0 in training, so the
    model learns to ignore it). The cut is chosen out of fold by dialog. ``encoder`` (a name of
    ``text.encoders.ENCODERS``, e.g. ``e5``) adds :data:`ENCODER_FEATURES`."""
    seeking = [e for e in examples if e.needs_knowledge and e.knowledge_ids]
    candidates: list[tuple[Example, CandidateScores, list[Knowledge]]] = []
    for example in seeking:
        scores = retriever.score(example.context, example.dialog_id)
        if len(scores.indices) == 0:
            continue
        sub = subset_scores(scores, transfer.reranker_input(retriever, example.context, scores, depth))
        candidates.append((example, sub, [retriever.items[int(i)] for i in sub.indices]))
    if not candidates:
        raise RagdialError("no turns citing triples of the knowledge base to train the triple reranker on")
    dialogs = sorted({_by_dialog(e) for e, _, _ in candidates})
    random.Random(seed).shuffle(dialogs)
    dialog_fold = {name: str(i % folds) for i, name in enumerate(dialogs)}
    groups = [group_of(e) if group_of else dialog_fold[_by_dialog(e)] for e, _, _ in candidates]

    def pairs(rows: Sequence[int]) -> tuple[list[str], list[str], list[bool]]:
        questions, attributes, labels = [], [], []
        for row in rows:
            example, _, items = candidates[row]
            gold = {_field(retriever.kb.get(i), "attribute") for i in example.knowledge_ids if i in retriever.kb}
            question = _last_user(example.context)
            for attribute in sorted({_field(i, "attribute") for i in items} - {""}):
                questions.append(question)
                attributes.append(attribute)
                labels.append(attribute in gold)
        return questions, attributes, labels

    matched: list[np.ndarray] = [np.zeros(0)] * len(candidates)
    for group in sorted(set(groups)):
        inside = [r for r, g in enumerate(groups) if g == group]
        outside = [r for r, g in enumerate(groups) if g != group]
        held_out = _matcher(*pairs(outside))
        for row in inside:
            example, _, items = candidates[row]
            matched[row] = held_out.score(_last_user(example.context), [_field(i, "attribute") for i in items])
    xs = [_columns(retriever, e.context, s, m, encoder) for (e, s, _), m in zip(candidates, matched, strict=True)]
    ys = [np.array([i.id in set(e.knowledge_ids) for i in items], np.float32) for e, _, items in candidates]
    fold = [dialog_fold[_by_dialog(e)] for e, _, _ in candidates]
    oof: list[np.ndarray] = [np.zeros(0)] * len(candidates)
    for name in sorted(set(fold)):
        held = [r for r, f in enumerate(fold) if f == name]
        kept = [r for r, f in enumerate(fold) if f != name]
        if not kept:
            continue
        model = _fit(
            np.concatenate([xs[r] for r in kept]), np.concatenate([ys[r] for r in kept]), seed, rounds, encoder
        )
        for row in held:
            oof[row] = model.predict(xs[row])
    if any(len(p) == 0 for p in oof):  # a single fold: the cut from in-sample predictions
        model = _fit(np.concatenate(xs), np.concatenate(ys), seed, rounds, encoder)
        oof = [model.predict(x) for x in xs]
    ids = [[i.id for i in items] for _, _, items in candidates]
    golds = [list(e.knowledge_ids) for e, _, _ in candidates]
    threshold, relative = best_threshold(oof, ids, golds, max_select, (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7))
    booster = _fit(np.concatenate(xs), np.concatenate(ys), seed, rounds, encoder)
    matcher = _matcher(*pairs(range(len(candidates))))
    info: JSONDict = {
        "queries": len(candidates),
        "groups": len(set(groups)),
        "grouped_by": "caller" if group_of else "dialog folds",
        "rounds": rounds,
    }
    return TripleReranker(booster, matcher, threshold, relative, max_select, depth, info, encoder)
