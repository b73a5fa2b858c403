"""BM25 over analyzer tokens with ``bm25s``: full score vectors, so any candidate subset can be ranked."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragdial.retrieval.analyzer import Analyzer


class LexicalIndex:
    """A ``bm25s`` index over a fixed list of texts; ``scores(text)`` gives one score per text."""

    def __init__(self, model, analyzer: Analyzer, size: int) -> None:
        self.model = model
        self.analyzer = analyzer
        self.size = size

    @classmethod
    def build(cls, texts: Sequence[str], analyzer: Analyzer, method: str = "lucene") -> LexicalIndex:
        import bm25s

        model = bm25s.BM25(method=method)
        if texts:
            corpus = [analyzer(t) for t in texts]
            model.index(corpus, show_progress=False)
        return cls(model, analyzer, len(texts))

    def scores(self, text: str) -> np.ndarray:
        """BM25 score of every indexed text for the query ``text`` (zeros when nothing matches)."""
        if self.size == 0:
            return np.zeros(0, dtype=np.float32)
        ids = self.model.get_tokens_ids(self.analyzer(text))
        if not ids:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self.model.get_scores_from_ids(ids), dtype=np.float32)

    def save(self, directory: Path) -> None:
        if self.size:
            self.model.save(str(directory))

    @classmethod
    def load(cls, directory: Path, analyzer: Analyzer, size: int, mmap: bool = True) -> LexicalIndex:
        import bm25s

        model = bm25s.BM25.load(str(directory), mmap=mmap) if size else bm25s.BM25()
        return cls(model, analyzer, size)
