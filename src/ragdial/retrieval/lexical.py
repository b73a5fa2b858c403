"""BM25 over analyzer tokens with ``bm25s``: full score vectors, scores of a candidate subset, and an exact top-k
that skips most postings (MaxScore) for large indexes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragdial.retrieval.analyzer import Analyzer
from ragdial.retrieval.fusion import top_k


class LexicalIndex:
    """A ``bm25s`` index over a fixed list of texts; ``scores(text)`` gives one score per text."""

    def __init__(self, model, analyzer: Analyzer, size: int) -> None:
        self.model = model
        self.analyzer = analyzer
        self.size = size
        self._term_max: np.ndarray | None = None

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

    def query_terms(self, pairs: Sequence[tuple[str, float]]) -> dict[int, float]:
        """Token id -> weight for weighted query texts (a token counts once per occurrence, as in ``scores``)."""
        terms: dict[int, float] = {}
        if self.size == 0:
            return terms
        for text, weight in pairs:
            for token in self.model.get_tokens_ids(self.analyzer(text)):
                terms[token] = terms.get(token, 0.0) + weight
        return terms

    def _postings(self, token: int) -> tuple[np.ndarray, np.ndarray]:
        """The documents containing ``token`` (ascending) and their BM25 impacts."""
        matrix = self.model.scores
        start, stop = int(matrix["indptr"][token]), int(matrix["indptr"][token + 1])
        return matrix["indices"][start:stop], matrix["data"][start:stop]

    def scores_of(self, text: str, docs: np.ndarray) -> np.ndarray:
        """``scores(text)[docs]``, by looking ``docs`` up in the query tokens' postings when they are few."""
        if self.size == 0 or len(docs) * 8 >= self.size:
            return self.scores(text)[docs] if self.size else np.zeros(len(docs), np.float32)
        out = np.zeros(len(docs), np.float32)  # float32, token by token: the very sums ``scores`` makes
        for token in self.model.get_tokens_ids(self.analyzer(text)):
            _add_lookup(out, docs, *self._postings(token), 1.0)
        return out

    @property
    def term_max(self) -> np.ndarray:
        """The highest BM25 impact of each token (computed once: the bound MaxScore prunes with)."""
        if self._term_max is None:
            matrix = self.model.scores
            data, indptr = np.asarray(matrix["data"]), np.asarray(matrix["indptr"], dtype=np.int64)
            tops = np.zeros(len(indptr) - 1, np.float32)
            filled = np.flatnonzero(indptr[1:] > indptr[:-1])
            if len(filled):
                tops[filled] = np.maximum.reduceat(data, indptr[filled])
            self._term_max = tops
        return self._term_max

    def top(self, terms: dict[int, float], k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` documents with the highest weighted BM25 score (``terms`` from :meth:`query_terms`) among those
        where the boolean mask ``allowed`` is set (all without one), best first, and their scores; documents
        matching no term are left out. Exact, but reads only some postings (MaxScore): terms are taken in order of
        their highest possible contribution, and once the ``k``-th best partial score reaches what the terms not
        yet read could add at most, no unseen document can enter; the shortlist's scores are then completed by
        looking its documents up in the remaining terms' postings."""
        if self.size == 0 or not terms or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        tokens = np.fromiter(terms, dtype=np.int64, count=len(terms))
        weights = np.fromiter(terms.values(), dtype=np.float64, count=len(terms))
        bounds = weights * self.term_max[tokens]
        order = np.argsort(-bounds, kind="stable")
        tokens, weights, bounds = tokens[order], weights[order], bounds[order]
        rest = np.concatenate([np.cumsum(bounds[::-1])[::-1][1:], [0.0]])  # most the terms after each can add
        docs_parts: list[np.ndarray] = []
        score_parts: list[np.ndarray] = []
        read = 0
        docs, partial = np.zeros(0, np.int64), np.zeros(0, np.float64)
        for j, (token, weight) in enumerate(zip(tokens, weights, strict=True)):
            postings, impacts = self._postings(int(token))
            docs_parts.append(np.asarray(postings, dtype=np.int64))
            score_parts.append(weight * np.asarray(impacts, dtype=np.float64))
            read = j + 1
            if read < len(tokens) and sum(len(d) for d in docs_parts) < k:
                continue
            docs, partial = self._accumulate(docs_parts, score_parts, allowed)
            if read == len(tokens) or (len(docs) >= k and -np.partition(-partial, k - 1)[k - 1] >= rest[j]):
                break
        for token, weight in zip(tokens[read:], weights[read:], strict=True):
            _add_lookup(partial, docs, *self._postings(int(token)), float(weight))
        best = top_k(partial, k)
        return docs[best], partial[best].astype(np.float32)

    def _accumulate(
        self, docs_parts: list[np.ndarray], score_parts: list[np.ndarray], allowed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Summed partial scores of the documents in the postings read so far (within ``allowed``)."""
        every = np.concatenate(docs_parts)
        weights = np.concatenate(score_parts)
        if len(every) * 8 >= self.size:  # many postings: one dense accumulator beats sorting them
            dense = np.bincount(every, weights, minlength=self.size)
            hit = np.bincount(every, minlength=self.size) > 0
            if allowed is not None:
                hit &= allowed
            docs = np.flatnonzero(hit)
            return docs, dense[docs]
        docs, inverse = np.unique(every, return_inverse=True)
        partial = np.bincount(inverse, weights, minlength=len(docs))
        if allowed is not None:
            keep = allowed[docs]
            docs, partial = docs[keep], partial[keep]
        return docs, partial

    def save(self, directory: Path) -> None:
        if self.size:
            self.model.save(str(directory))

    @classmethod
    def load(cls, directory: Path, analyzer: Analyzer, size: int, mmap: bool = True) -> LexicalIndex:
        import bm25s

        model = bm25s.BM25.load(str(directory), mmap=mmap) if size else bm25s.BM25()
        return cls(model, analyzer, size)


def _add_lookup(out: np.ndarray, docs: np.ndarray, postings: np.ndarray, impacts: np.ndarray, weight: float) -> None:
    """``out[i] += weight * impact`` for each ``docs[i]`` found in ``postings`` (ascending)."""
    if len(postings) == 0 or len(docs) == 0:
        return
    at = np.minimum(np.searchsorted(postings, docs), len(postings) - 1)
    found = postings[at] == docs
    values = np.asarray(impacts[at[found]], dtype=out.dtype)
    out[found] += values if weight == 1.0 else weight * values
