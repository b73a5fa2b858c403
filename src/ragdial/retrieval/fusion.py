"""Combining score lists: reciprocal-rank fusion and weighted min-max fusion."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` highest scores, best first (ties by position)."""
    if len(scores) > 4 * k:
        kth = -np.partition(-scores, k - 1)[k - 1]
        above = np.flatnonzero(scores > kth)
        part = np.concatenate([above, np.flatnonzero(scores == kth)[: k - len(above)]])
        return part[np.lexsort((part, -scores[part]))]
    return np.argsort(-scores, kind="stable")[:k]


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


def rrf(
    score_lists: Sequence[np.ndarray], k: int = 60, weights: Sequence[float] | None = None, depth: int | None = None
) -> np.ndarray:
    """Reciprocal-rank fusion: sum of ``w / (k + rank)`` over the lists; with ``depth``, a list adds nothing for
    items below its first ``depth`` (fusing top-``depth`` lists, where the lower ranks are not known)."""
    weights = weights or [1.0] * len(score_lists)
    total = np.zeros(len(score_lists[0]), dtype=np.float64)
    for scores, weight in zip(score_lists, weights, strict=True):
        rank = ranks(scores)
        total += np.where(rank <= depth, weight / (k + rank), 0.0) if depth is not None else weight / (k + rank)
    return total.astype(np.float32)


def weighted(score_lists: Sequence[np.ndarray], weights: Sequence[float]) -> np.ndarray:
    """Weighted sum of min-max-normalised scores."""
    total = np.zeros(len(score_lists[0]), dtype=np.float32)
    for scores, weight in zip(score_lists, weights, strict=True):
        total += weight * minmax(scores)
    return total
