"""A learned word-interaction scorer: logistic regression over hashed (query word, item word) pairs.

It learns which words in a question go with which words in the knowledge that answers it ("sanitized" with
"clean", "几点" with "开放时间"), the part plain BM25 and a general-purpose encoder miss. Its score is one feature
of the reranker. Weights are saved as a float32 ``.npy`` (no pickle).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

N_FEATURES = 2**18
MAX_ITEM_TOKENS = 48


def pair_features(query_tokens: Iterable[str], item_tokens: Iterable[str], source: str) -> list[str]:
    """The hashed-feature names of one (query, item) pair."""
    query = sorted(set(query_tokens))
    item = sorted(set(item_tokens))[:MAX_ITEM_TOKENS]
    out = [f"{q}|{d}" for q in query for d in item]
    out.extend(f"{q}|@{source}" for q in query)
    return out


def _hasher():
    from sklearn.feature_extraction import FeatureHasher

    return FeatureHasher(n_features=N_FEATURES, input_type="string", alternate_sign=False)


class InteractionModel:
    """Linear weights over hashed word pairs; ``score`` gives a logit per pair."""

    def __init__(self, weights: np.ndarray, bias: float = 0.0) -> None:
        self.weights = np.asarray(weights, dtype=np.float32)
        self.bias = float(bias)

    def score(self, rows: Sequence[list[str]]) -> np.ndarray:
        if not rows:
            return np.zeros(0, dtype=np.float32)
        matrix = _hasher().transform(rows)
        return (matrix @ self.weights + self.bias).astype(np.float32)

    @classmethod
    def fit(cls, rows: Sequence[list[str]], labels: np.ndarray, seed: int = 0) -> InteractionModel:
        from sklearn.linear_model import SGDClassifier

        matrix = _hasher().transform(rows)
        model = SGDClassifier(loss="log_loss", alpha=2e-6, max_iter=8, tol=None, random_state=seed)
        model.fit(matrix, labels)
        return cls(model.coef_[0], float(model.intercept_[0]))

    def save(self, path: Path) -> None:
        np.save(path, np.append(self.weights, np.float32(self.bias)), allow_pickle=False)

    @classmethod
    def load(cls, path: Path) -> InteractionModel:
        data = np.load(path, allow_pickle=False)
        return cls(data[:-1], float(data[-1]))
