"""Retrieval evaluation: recall@k of a ranking and selection P/R/F1/EM of a cut (``ragdial.metrics.retrieval``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ragdial.evaluation.base import EvaluationResult, Evaluator
from ragdial.evaluation.latency import Latency
from ragdial.metrics.retrieval import recall_at_k, set_prf
from ragdial.schema import Example

KS = (1, 2, 3, 5, 10, 20)


@dataclass(frozen=True)
class RetrievalModel:
    """What retrieval evaluation calls: ``rank`` gives an example's ranked knowledge ids (best first); ``select``,
    if given, the ids the system would use (otherwise the top ``cut`` of the ranking)."""

    rank: Callable[[Example], Sequence[str]]
    select: Callable[[Example], Sequence[str]] | None = None


def selection_scores(golds: Sequence[Sequence[str]], preds: Sequence[Sequence[str]]) -> dict[str, float]:
    """DSTC11 selection: micro P/R/F1 over deduplicated items and exact match per instance."""
    scores = set_prf(golds, preds)
    return {
        "P": scores["precision"].value,
        "R": scores["recall"].value,
        "F1": scores["f1"].value,
        "EM": scores["exact_match"].value,
    }


def recall_at(
    golds: Sequence[Sequence[str]], rankings: Sequence[Sequence[str]], ks: Iterable[int] = KS
) -> dict[int, float]:
    """Mean share of an instance's gold items found in its top k (recall, unit "fraction")."""
    return {k: recall_at_k(golds, rankings, k, unit="fraction").value for k in ks}


def best_cut(golds: Sequence[Sequence[str]], rankings: Sequence[Sequence[str]], limit: int = 10) -> int:
    """The fixed cut k maximising selection F1 (tune it on training data, never on the evaluated examples)."""
    return max(range(1, limit + 1), key=lambda k: selection_scores(golds, [r[:k] for r in rankings])["F1"])


class RetrievalEvaluator(Evaluator[RetrievalModel]):
    """Recall@k for ``ks`` and selection scores over ``examples`` (gold: their ``knowledge_ids``).

    Scores: ``R@k`` per k, and ``P``/``R``/``F1``/``EM`` of the model's selection (or of the top ``cut``);
    latency: ``rank`` (and ``select``) per example; predictions: each example's ranking.
    """

    primary = "F1"

    def __init__(self, examples: Sequence[Example], ks: Iterable[int] = KS, cut: int = 1, name: str = "retrieval"):
        self.examples = list(examples)
        self.ks = tuple(ks)
        self.cut = cut
        self.name = name

    def __call__(self, model: RetrievalModel) -> EvaluationResult:
        started = time.perf_counter()
        rankings, selections, rank_ms, select_ms = [], [], [], []
        for example in self.examples:
            t0 = time.perf_counter()
            ranking = list(model.rank(example))
            t1 = time.perf_counter()
            rankings.append(ranking)
            rank_ms.append((t1 - t0) * 1000.0)
            if model.select is not None:
                selections.append(list(model.select(example)))
                select_ms.append((time.perf_counter() - t1) * 1000.0)
            else:
                selections.append(ranking[: self.cut])
        golds = [e.knowledge_ids for e in self.examples]
        recall = recall_at(golds, rankings, self.ks)
        scores = {**selection_scores(golds, selections), **{f"R@{k}": v for k, v in recall.items()}}
        latency = {"rank": Latency.of(rank_ms)}
        if select_ms:
            latency["select"] = Latency.of(select_ms)
        predictions = {e.id: r for e, r in zip(self.examples, rankings, strict=True)}
        return EvaluationResult(
            self.name,
            scores,
            self.primary,
            latency,
            {"examples": len(self.examples)},
            predictions=predictions,
            seconds=time.perf_counter() - started,
        )
