"""The knowledge a retriever ranks, by position, and the one step every retriever ends with: candidate scores ->
(learned reranker) -> ranking and selection.

``KnowledgePool`` is what the rerankers' features read (items, their tokens, the entity tracker, the knowledge base,
encoder and vectors); its items are a list, or an ``ItemStore`` that reads each from disk. ``HybridRetriever`` is
one; ``MilvusRetriever`` keeps one over the system's knowledge base when it has a reranker, so both retrievers
rerank through ``KnowledgePool.rank``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ragdial.retrieval.base import KnowledgeFilter, Retrieval, ScoredKnowledge, take
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.entities import EntityTracker
from ragdial.retrieval.fusion import top_k
from ragdial.retrieval.store import ItemStore
from ragdial.schema import Knowledge, KnowledgeBase, Turn
from ragdial.text.encoders import Encoder

if TYPE_CHECKING:
    from ragdial.retrieval.rerank import RerankerModel


def fuse(config: RetrieverConfig, bm25: np.ndarray, dense: np.ndarray, depth: int | None = None) -> np.ndarray:
    """``config``'s fusion of lexical and dense scores over the same candidates (``depth``: they are the union of
    each list's top ``depth``, and reciprocal-rank fusion counts a list's top ``depth`` only)."""
    from ragdial.retrieval import fusion

    if len(bm25) == 0 or config.fusion == "bm25":
        return bm25
    if config.fusion == "dense":
        return dense
    if config.fusion == "rrf":
        return fusion.rrf([bm25, dense], config.rrf_k, depth=depth)
    return fusion.weighted([bm25, dense], [config.lexical_weight, 1.0 - config.lexical_weight])


@dataclass
class CandidateScores:
    """Scores of one query over its candidates (parallel arrays, indices into the pool's items)."""

    indices: np.ndarray
    bm25: np.ndarray
    dense: np.ndarray
    fused: np.ndarray
    bm25_last: np.ndarray
    dense_last: np.ndarray
    focus: list[str] = field(default_factory=list)
    mention_age: dict[str, int] = field(default_factory=dict)
    query: str = ""


class KnowledgePool:
    """A knowledge base's items by position, with what scoring and reranking read about them."""

    def __init__(
        self,
        kb: KnowledgeBase | ItemStore,
        config: RetrieverConfig,
        encoder: Encoder | None = None,
        vectors: np.ndarray | None = None,
        reranker: RerankerModel | None = None,
        tracker: EntityTracker | None = None,
    ) -> None:
        self.kb = kb
        self.config = config
        # an item store reads each item from disk when asked: the items of a saved index are never all in memory
        self.items: Sequence[Knowledge] = kb if isinstance(kb, ItemStore) else list(kb)
        self.encoder = encoder
        self.vectors = vectors
        self.reranker = reranker
        self.tracker = tracker or EntityTracker(self.items, pinyin=config.analyzer.pinyin)
        self._tokens: dict[int, set[str]] = {}
        self._position: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self.items)

    def item_tokens(self, index: int) -> set[str]:
        """The analyzer tokens of one item (computed once)."""
        tokens = self._tokens.get(index)
        if tokens is None:
            tokens = self._tokens[index] = set(self.config.analyzer(self.items[index].text or ""))
        return tokens

    def position(self, item_id: str) -> int:
        """The position of the item with this id (``KeyError`` when there is none)."""
        if isinstance(self.items, ItemStore):
            return self.items.position(item_id)
        if self._position is None:
            self._position = {item.id: i for i, item in enumerate(self.items)}
        return self._position[item_id]

    def fuse(self, bm25: np.ndarray, dense: np.ndarray, depth: int | None = None) -> np.ndarray:
        """The configured fusion of lexical and dense scores over the same candidates (:func:`fuse`)."""
        return fuse(self.config, bm25, dense, depth)

    def rank(
        self,
        context: Sequence[Turn],
        scores: CandidateScores,
        k: int,
        filter: KnowledgeFilter | None = None,
        select: int | None = None,
    ) -> Retrieval:
        """The ``k`` best candidates by the reranker's score (the fused score without one), best first, and the
        selection (:meth:`selection`)."""
        final = self.reranker.predict(self, context, scores) if self.reranker is not None else scores.fused
        ranked = [ScoredKnowledge(self.items[int(scores.indices[i])], float(final[i])) for i in top_k(final, k)]
        if filter is not None and filter.min_score is not None:
            ranked = take(ranked, filter, k)
        return Retrieval(ranked, self.selection(ranked, select))

    def selection(self, ranked: Sequence[ScoredKnowledge], select: int | None = None) -> list[ScoredKnowledge]:
        """The items to use from ``ranked``: the reranker's cut (several where its threshold keeps them), or the
        first ``select`` (default ``config.select``)."""
        if self.reranker is not None:
            return self.reranker.cut(ranked, select) if ranked else []
        return list(ranked[: self.config.select if select is None else select])
