"""One latency summary for every figure: numpy percentiles (linear interpolation) over milliseconds."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import TypeVar

import numpy as np

T = TypeVar("T")


@dataclass(frozen=True)
class Latency:
    """Percentiles of per-call milliseconds: ``p50``, ``p95``, ``mean`` and ``max`` over ``n`` calls."""

    n: int
    p50: float
    p95: float
    mean: float
    max: float

    @classmethod
    def of(cls, milliseconds: Iterable[float]) -> Latency:
        """The summary of ``milliseconds`` (all zeros for no values)."""
        values = np.asarray(list(milliseconds), dtype=float)
        if values.size == 0:
            return cls(0, 0.0, 0.0, 0.0, 0.0)
        p50, p95 = np.percentile(values, [50, 95])
        return cls(int(values.size), float(p50), float(p95), float(values.mean()), float(values.max()))

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def time_calls(call: Callable[[T], object], inputs: Sequence[T], n: int = 200, warm_up: int = 1) -> Latency:
    """The latency of ``call`` one input at a time over the first ``n`` inputs, after ``warm_up`` untimed calls."""
    for item in inputs[:warm_up]:
        call(item)
    times = []
    for item in inputs[:n]:
        started = time.perf_counter()
        call(item)
        times.append((time.perf_counter() - started) * 1000.0)
    return Latency.of(times)
