"""Helpers shared by the understanding benchmarks: detection P/R/F1, latency, markdown tables.

ragdial.metrics was not on main when these were written, so scores come from this file (detection, the official
DSTC formula) and scikit-learn (classification); switch to ragdial.metrics once it lands.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any


def detection_prf(gold: Sequence[bool], predicted: Sequence[bool]) -> tuple[float, float, float]:
    """Precision, recall and F1 of the positive class, as the DSTC9/DSTC11 ``scores.py`` counts them per instance."""
    tp = sum(1 for g, p in zip(gold, predicted, strict=True) if g and p)
    fp = sum(1 for g, p in zip(gold, predicted, strict=True) if p and not g)
    fn = sum(1 for g, p in zip(gold, predicted, strict=True) if g and not p)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


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


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A markdown table; floats with 4 decimals."""

    def cell(value: Any) -> str:
        return f"{value:.4f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
