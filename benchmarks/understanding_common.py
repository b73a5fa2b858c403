"""Helpers shared by the understanding benchmarks: detection P/R/F1 (ragdial.metrics), latency, markdown tables."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from ragdial.metrics.challenges.detection import DetectionCounts


def detection_prf(gold: Sequence[bool], predicted: Sequence[bool]) -> tuple[float, float, float]:
    """Precision, recall and F1 of knowledge-seeking detection, counted per instance as the DSTC scorers do."""
    counts = DetectionCounts()
    for g, p in zip(gold, predicted, strict=True):
        counts.add(g, p)
    return counts.weighted(counts.tp)


def latency_ms(predict_one: Callable[[Any], Any], inputs: Sequence[Any], n: int = 200) -> tuple[float, float]:
    """(p50, p95) milliseconds of one-at-a-time prediction over the first ``n`` inputs (after one warm-up)."""
    predict_one(inputs[0])
    times = []
    for item in inputs[:n]:
        started = time.perf_counter()
        predict_one(item)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def fit_detector(
    options: dict[str, Any], x: Sequence[Any], y: Sequence[bool], xd: Sequence[Any], yd: Sequence[bool]
) -> tuple[float, float, float, float, float, float]:
    """Train ``turn_detector(**options)`` on (x, y) and score it on (xd, yd): P, R, F1, fit seconds, p50/p95 ms."""
    from ragdial.understanding import turn_detector

    started = time.perf_counter()
    model = turn_detector(**options).fit(x, y)
    fit_s = time.perf_counter() - started
    p, r, f = detection_prf(yd, model.predict(xd))
    p50, p95 = latency_ms(model.predict_one, xd)
    return p, r, f, fit_s, p50, p95


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A markdown table; floats with 4 decimals."""

    def cell(value: Any) -> str:
        return f"{value:.4f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
