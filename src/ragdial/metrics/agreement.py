"""Inter-rater agreement: Krippendorff's alpha (nominal, ordinal, interval), any number of raters, missing
ratings allowed. Units rated by fewer than two raters do not count."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

LEVELS = ("nominal", "ordinal", "interval")


K = TypeVar("K", bound=Hashable)


def krippendorff_alpha(
    units: Mapping[K, Sequence[float]] | Iterable[Sequence[float]], level: str = "interval"
) -> float | None:
    """Alpha over ``units`` (each: the values the raters gave that unit). None when it is undefined
    (no unit with two ratings, or every rating the same value)."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, not {level!r}")
    groups = list(units.values()) if isinstance(units, Mapping) else list(units)
    coincidence: dict[tuple[float, float], float] = defaultdict(float)
    for values in groups:
        values = [v for v in values if v is not None]
        m = len(values)
        if m < 2:
            continue
        for i, a in enumerate(values):
            for j, b in enumerate(values):
                if i != j:
                    coincidence[a, b] += 1.0 / (m - 1)
    totals: dict[float, float] = defaultdict(float)
    for (a, _b), weight in coincidence.items():
        totals[a] += weight
    n = sum(totals.values())
    if n <= 1:
        return None
    ordered = sorted(totals)

    def delta(a: float, b: float) -> float:
        if level == "nominal":
            return 0.0 if a == b else 1.0
        if level == "interval":
            return (a - b) ** 2
        lo, hi = sorted((a, b))
        between = sum(totals[g] for g in ordered if lo <= g <= hi)
        return (between - (totals[a] + totals[b]) / 2) ** 2

    observed = sum(w * delta(a, b) for (a, b), w in coincidence.items())
    expected = sum(totals[a] * totals[b] * delta(a, b) for a in ordered for b in ordered) / (n - 1)
    if expected == 0:
        return None
    return 1.0 - observed / expected
