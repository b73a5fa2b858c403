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
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict
from ragdial.retrieval.base import ScoredKnowledge
from ragdial.schema import Example, Speaker, Turn

if TYPE_CHECKING:
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.retrieval.pool import CandidateScores, KnowledgePool
    from ragdial.retrieval.rerank import RerankerModel

META_FILE = "precedent.json"
VECTORS_FILE = "precedent.npy"
BASE_DIR = "base"
FORMAT = "ragdial-precedent-reranker"
PRECEDENT_SCORE = 2.0
"""A precedent's items score ``PRECEDENT_SCORE`` + the wrapped reranker's probability: above any probability, so
they rank first, in the wrapped reranker's order."""


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
class PrecedentReranker:
    """A trained reranker and the training turns it may copy a gold set from."""

    base: RerankerModel
    vectors: np.ndarray  # one row per precedent: its last user turn under ``encoder``
    golds: list[list[str]]
    encoder: str
    threshold: float = 1.1  # above any cosine: never used until fitted
    info: JSONDict = field(default_factory=dict)

    def find(
        self, retriever: KnowledgePool, context: Sequence[Turn], scores: CandidateScores
    ) -> tuple[float, list[int]] | None:
        """(the cosine, the rows of ``scores`` holding its gold items) of the closest precedent reaching the
        threshold, or None."""
        focus = set(scores.focus)
        text = _last_user(context)
        if not focus or not text.strip() or not self.golds:
            return None
        if retriever.encoder is None or retriever.encoder.name != self.encoder:
            raise RagdialError(f"precedents were encoded with {self.encoder!r}; the retriever's encoder differs")
        row_of = {retriever.items[int(index)].id: row for row, index in enumerate(scores.indices)}
        cosines = self.vectors @ _turn_vectors(retriever, [text])[0]
        for best in np.argsort(-cosines, kind="stable"):
            if cosines[best] < self.threshold:
                return None
            gold = self.golds[int(best)]
            if _entities(retriever, gold) <= focus and all(i in row_of for i in gold):
                return float(cosines[best]), [row_of[i] for i in gold]
        return None

    def predict(self, retriever: KnowledgePool, context: Sequence[Turn], scores: CandidateScores) -> np.ndarray:
        """The wrapped reranker's scores, with a precedent's items (when one applies) moved above all of them."""
        final = np.asarray(self.base.predict(retriever, context, scores), dtype=np.float32).copy()
        found = self.find(retriever, context, scores) if len(scores.indices) else None
        if found is not None:  # first, in the wrapped reranker's order
            final[found[1]] = PRECEDENT_SCORE + np.clip(final[found[1]], 0.0, 0.999)
        return final

    def cut(self, ranked: Sequence[ScoredKnowledge], k: int | None = None) -> list[ScoredKnowledge]:
        """A precedent's items when the ranking starts with them, else the wrapped reranker's cut."""
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
        (directory / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
        return directory

    @classmethod
    def load(cls, directory: str | Path) -> PrecedentReranker:
        from ragdial.retrieval.rerank import load_reranker

        directory = Path(directory)
        meta_path = directory / META_FILE
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            vectors = np.load(directory / VECTORS_FILE)
        except (OSError, ValueError) as error:
            raise RagdialError(f"{directory}: not a precedent reranker directory ({error})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise RagdialError(f"{meta_path}: field 'format' must be {FORMAT!r}")
        golds = meta.get("golds")
        if not isinstance(golds, list) or not all(isinstance(g, list) for g in golds) or len(golds) != len(vectors):
            raise RagdialError(f"{meta_path}: field 'golds' must list one id list per row of {VECTORS_FILE}")
        return cls(
            load_reranker(directory / BASE_DIR),
            vectors.astype(np.float32),
            [[str(i) for i in g] for g in golds],
            str(meta.get("encoder")),
            float(meta.get("threshold", 1.1)),
            meta.get("info", {}),
        )


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
    retriever: HybridRetriever, examples: Sequence[Example], base: RerankerModel, floor: float = 0.85
) -> PrecedentReranker:
    """Wrap ``base`` with the knowledge-seeking ``examples`` as precedents. The threshold: each training turn looks
    up the closest precedent of *another* dialog (grouped by first turn) its focus allows, as at run time; the
    lowest cosine above which those borrowed sets reach ``floor`` F1 on average (:func:`best_threshold`)."""
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
    return PrecedentReranker(base, vectors, golds, name, threshold, info)
