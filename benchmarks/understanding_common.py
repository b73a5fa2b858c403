"""Helpers shared by the understanding benchmarks: a detector fitted and scored by ``ragdial.evaluation``
(detection P/R/F1 from ``ragdial.metrics``, one-turn latency as numpy percentiles), markdown tables."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, cast

from ragdial.evaluation import DetectionEvaluator, detection_prf, time_calls
from ragdial.evaluation.detection import Detector

__all__ = ["detection_prf", "fit_detector", "latency_ms", "table"]


def latency_ms(predict_one: Callable[[Any], Any], inputs: Sequence[Any], n: int = 200) -> tuple[float, float]:
    """(p50, p95) milliseconds of one-at-a-time prediction over the first ``n`` inputs (after one warm-up)."""
    summary = time_calls(predict_one, inputs, n)
    return summary.p50, summary.p95


def fit_detector(
    options: dict[str, Any], x: Sequence[Any], y: Sequence[bool], xd: Sequence[Any], yd: Sequence[bool]
) -> tuple[float, float, float, float, float, float]:
    """Train ``turn_detector(**options)`` on (x, y) and score it on (xd, yd): P, R, F1, fit seconds, p50/p95 ms."""
    from ragdial.understanding import turn_detector

    started = time.perf_counter()
    model = turn_detector(**options).fit(x, y)
    fit_s = time.perf_counter() - started
    result = DetectionEvaluator(xd, yd)(cast("Detector[Any]", model))  # a binary classifier predicts bools
    latency = result.latency["turn"]
    return result.scores["P"], result.scores["R"], result.scores["F1"], fit_s, latency.p50, latency.p95


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A markdown table; floats with 4 decimals."""

    def cell(value: Any) -> str:
        return f"{value:.4f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
