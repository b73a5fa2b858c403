"""Knowledge-seeking turn detection: P/R/F1 counted per instance as the DSTC scorers do, and per-turn latency."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol, TypeVar

from ragdial.evaluation.base import EvaluationResult, Evaluator
from ragdial.evaluation.latency import time_calls
from ragdial.metrics.challenges.detection import DetectionCounts

InputT = TypeVar("InputT")
InputT_contra = TypeVar("InputT_contra", contravariant=True)


class Detector(Protocol[InputT_contra]):
    """A fitted detector over inputs of one kind (texts, contexts): a batch ``predict`` and a one-turn
    ``predict_one``."""

    def predict(self, inputs: Sequence[InputT_contra]) -> Sequence[bool]: ...

    def predict_one(self, item: InputT_contra) -> bool: ...


def detection_prf(gold: Sequence[bool], predicted: Sequence[bool]) -> tuple[float, float, float]:
    """Precision, recall and F1 of knowledge-seeking detection (``ragdial.metrics`` detection counts)."""
    counts = DetectionCounts()
    for g, p in zip(gold, predicted, strict=True):
        counts.add(g, p)
    return counts.weighted(counts.tp)


class DetectionEvaluator(Evaluator[Detector[InputT]]):
    """P/R/F1 of ``model.predict(inputs)`` against ``gold``; latency of ``predict_one`` over the first
    ``latency_n`` inputs (one at a time, after one warm-up call)."""

    primary = "F1"

    def __init__(self, inputs: Sequence[InputT], gold: Sequence[bool], latency_n: int = 200, name: str = "detection"):
        self.inputs = list(inputs)
        self.gold = [bool(g) for g in gold]
        self.latency_n = latency_n
        self.name = name

    def __call__(self, model: Detector[InputT]) -> EvaluationResult:
        started = time.perf_counter()
        predicted = [bool(p) for p in model.predict(self.inputs)]
        p, r, f = detection_prf(self.gold, predicted)
        latency = {"turn": time_calls(model.predict_one, self.inputs, self.latency_n)} if self.latency_n else {}
        return EvaluationResult(
            self.name,
            {"P": p, "R": r, "F1": f},
            self.primary,
            latency,
            {"examples": len(self.inputs), "positive": sum(self.gold)},
            predictions={str(i): p for i, p in enumerate(predicted)},
            seconds=time.perf_counter() - started,
        )
