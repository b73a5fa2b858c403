"""Combining score lists: reciprocal-rank fusion and weighted min-max fusion."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def ranks(scores: np.ndarray) -> np.ndarray:
    """1-based rank of each score (ties broken by position)."""
    order = np.argsort(-scores, kind="stable")
    out = np.empty(len(scores), dtype=np.int64)
    out[order] = np.arange(1, len(scores) + 1)
    return out


def minmax(scores: np.ndarray) -> np.ndarray:
    if len(scores) == 0:
        return scores.astype(np.float32)
    low, high = float(scores.min()), float(scores.max())
    if high - low <= 1e-12:
        return np.zeros_like(scores, dtype=np.float32)
    return ((scores - low) / (high - low)).astype(np.float32)


def rrf(score_lists: Sequence[np.ndarray], k: int = 60, weights: Sequence[float] | None = None) -> np.ndarray:
    """Reciprocal-rank fusion: sum of ``w / (k + rank)`` over the lists."""
    weights = weights or [1.0] * len(score_lists)
    total = np.zeros(len(score_lists[0]), dtype=np.float64)
    for scores, weight in zip(score_lists, weights, strict=True):
        total += weight / (k + ranks(scores))
    return total.astype(np.float32)


def weighted(score_lists: Sequence[np.ndarray], weights: Sequence[float]) -> np.ndarray:
    """Weighted sum of min-max-normalised scores."""
    total = np.zeros(len(score_lists[0]), dtype=np.float32)
    for scores, weight in zip(score_lists, weights, strict=True):
        total += weight * minmax(scores)
    return total
