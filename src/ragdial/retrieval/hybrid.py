"""The in-process retriever: candidate scope -> BM25 (+ dense) over weighted context turns -> fusion (-> reranker)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict
from ragdial.retrieval.base import KnowledgeFilter, Retrieval, Retriever, Scope
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.dense import DenseIndex
from ragdial.retrieval.entities import EntityTracker
from ragdial.retrieval.fusion import top_k
from ragdial.retrieval.lexical import LexicalIndex
from ragdial.retrieval.pool import CandidateScores, KnowledgePool
from ragdial.retrieval.query import query_texts
from ragdial.retrieval.store import ItemColumns, ItemStore
from ragdial.schema import KnowledgeBase, Turn
from ragdial.text.encoders import QueryCache, blas_threads, encode_cached, get_encoder

if TYPE_CHECKING:
    from ragdial.retrieval.rerank import RerankerModel


class HybridRetriever(KnowledgePool, Retriever):
    """BM25 + dense retrieval over a knowledge base, with entity-scoped candidates and an optional reranker."""

    def __init__(
        self,
        kb: KnowledgeBase | ItemStore,
        config: RetrieverConfig | None = None,
        lexical: LexicalIndex | None = None,
        vectors: np.ndarray | None = None,
        reranker: RerankerModel | None = None,
        ann: DenseIndex | None = None,
        tracker: EntityTracker | None = None,
        columns: ItemColumns | None = None,
    ) -> None:
        """``tracker`` and ``columns`` (a saved index's) spare reading every item; without them they are built."""
        config = config or RetrieverConfig()
        encoder = get_encoder(config.encoder) if config.encoder and config.uses_dense else None
        if lexical is None or (encoder is not None and vectors is None):
            texts = [item.text or "" for item in kb]
            if encoder is not None and vectors is None:
                vectors = encode_cached(encoder, texts) if texts else np.zeros((0, encoder.dim), np.float32)
            lexical = lexical or LexicalIndex.build(texts, config.analyzer)
        super().__init__(kb, config, encoder, vectors, reranker, tracker)
        self.lexical = lexical
        self._queries = QueryCache.shared(encoder) if encoder is not None else None
        if ann is None and self.wants_ann():
            ann = DenseIndex.build(self.vectors, config.ann_nprobe)  # type: ignore[arg-type]
        self.ann = ann
        self.spec: JSONDict | None = None  # how a registry built it (``to_config``)
        self._lock = threading.Lock()
        self.columns = columns if columns is not None else ItemColumns.of(self.items)
        if len(self.columns) != len(self.items):
            raise RagdialError(f"{len(self.columns)} item columns for {len(self.items)} knowledge items")
        scope, entity = np.asarray(self.columns.scope), np.asarray(self.columns.entity)
        self._global = np.flatnonzero(scope == 0)
        local = np.flatnonzero(scope != 0)
        local = local[np.argsort(scope[local], kind="stable")]  # by scope, in item order within one
        cuts = np.flatnonzero(np.diff(scope[local])) + 1
        self._local = {self.columns.scopes[int(scope[part[0]])]: part for part in np.split(local, cuts) if len(part)}
        named = np.flatnonzero(entity >= 0)
        self._by_entity_order = named[np.argsort(entity[named], kind="stable")]
        self._by_entity_start = np.concatenate(
            [[0], np.cumsum(np.bincount(entity[named], minlength=len(self.columns.entities)))]
        ).astype(np.int64)
        self._entity_code = {name: code for code, name in enumerate(self.columns.entities)}
        self._no_entity = np.flatnonzero(entity < 0)

    def entity_items(self, name: str) -> np.ndarray:
        """The positions of the items about entity ``name``, ascending."""
        code = self._entity_code.get(name)
        if code is None:
            return np.zeros(0, np.int64)
        return self._by_entity_order[self._by_entity_start[code] : self._by_entity_start[code + 1]]

    def wants_ann(self) -> bool:
        """Whether this retriever shortlists dense candidates with an approximate index (a large knowledge base)."""
        config = self.config
        return self.vectors is not None and bool(config.shortlist) and len(self.items) > config.prune_above

    def candidates(
        self, context: Sequence[Turn], scope: Scope | str | None = None, filter: KnowledgeFilter | None = None
    ) -> tuple[np.ndarray, list[str]]:
        """Candidate item indices for a context within ``scope`` and ``filter``, and the entities in focus that
        narrowed them."""
        scope = Scope.of(scope)
        empty = np.zeros(0, np.int64)
        local = self._local.get(scope.local, empty) if scope.local is not None else empty
        focus = self.tracker.focus(context, self.config.carry_turns) if len(self.tracker) else []
        if not scope.include_global:
            return local, focus
        pool = self._global
        if self.config.entity_scope and focus:
            pool = np.unique(np.concatenate([*(self.entity_items(name) for name in focus), self._no_entity]))
            pool = pool[np.isin(pool, self._global)] if len(self._local) else pool
        if filter is not None and filter.sources and len(pool):
            pool = pool[np.isin(self.columns.source[pool], self.columns.source_codes(filter.sources))]
        return np.concatenate([local, pool]), focus

    def score(
        self, context: Sequence[Turn], scope: Scope | str | None = None, filter: KnowledgeFilter | None = None
    ) -> CandidateScores:
        """Every candidate's lexical, dense and fused scores for the context."""
        indices, focus = self.candidates(context, scope, filter)
        pairs = query_texts(context, self.config, focus, scoped=self.config.entity_scope and bool(focus))
        queries = None
        if pairs and self._queries is not None and self.vectors is not None:
            queries = self._queries([t for t, _ in pairs])
        depth = None
        if pairs and self.config.shortlist and len(indices) > max(self.config.prune_above, self.config.shortlist):
            indices = self.shortlist(indices, pairs, queries)
            depth = self.config.shortlist
        n = len(indices)
        bm25 = np.zeros(n, np.float32)
        bm25_last = np.zeros(n, np.float32)
        dense = np.zeros(n, np.float32)
        dense_last = np.zeros(n, np.float32)
        if n and pairs:
            for rank, (text, weight) in enumerate(pairs):
                row = self.lexical.scores_of(text, indices)
                bm25 += weight * row
                if rank == 0:
                    bm25_last = row
            if queries is not None and self.vectors is not None:
                with blas_threads():
                    if n * 4 >= len(self.items):  # most items: one matrix product beats gathering rows
                        sims = np.asarray(self.vectors @ queries.T, dtype=np.float32)[indices]
                    else:
                        sims = np.asarray(self.vectors[indices] @ queries.T, dtype=np.float32)
                weights = np.array([w for _, w in pairs], dtype=np.float32)
                dense = sims @ weights / weights.sum()
                dense_last = sims[:, 0]
        fused = self.fuse(bm25, dense, depth)
        return CandidateScores(
            indices,
            bm25,
            dense,
            fused,
            bm25_last,
            dense_last,
            focus,
            self.tracker.last_mention(context) if len(self.tracker) else {},
            pairs[0][0] if pairs else "",
        )

    def shortlist(
        self, indices: np.ndarray, pairs: Sequence[tuple[str, float]], queries: np.ndarray | None
    ) -> np.ndarray:
        """The candidates among ``indices`` worth scoring: the union of the ``config.shortlist`` best by BM25 (exact)
        and by dense similarity to the weighted query (the approximate index when there is one), ascending."""
        size = self.config.shortlist
        allowed = None
        if len(indices) < len(self.items):
            allowed = np.zeros(len(self.items), bool)
            allowed[indices] = True
        lexical, _ = self.lexical.top(self.lexical.query_terms(pairs), size, allowed)
        parts = [lexical]
        if queries is not None and self.vectors is not None:
            weights = np.array([w for _, w in pairs], dtype=np.float32)
            query = weights @ queries / weights.sum()
            if self.ann is not None and len(indices) * 2 > len(self.items):
                found = self.ann.search(query, size if allowed is None else 2 * size)
                parts.append(found if allowed is None else found[allowed[found]][:size])
            else:
                with blas_threads():
                    sims = np.asarray(self.vectors[indices] @ query, dtype=np.float32)
                parts.append(indices[top_k(sims, size)])
        return np.unique(np.concatenate(parts))

    def retrieve(
        self,
        context: Sequence[Turn],
        scope: Scope | str | None = None,
        k: int = 20,
        filter: KnowledgeFilter | None = None,
        select: int | None = None,
    ) -> Retrieval:
        """The ``k`` best candidates, best first, and the selection: the reranker's cut (at most ``select``, default
        its ``max_select``) or the first ``select`` (default ``config.select``). Empty for an empty KB or a
        context without text."""
        if not self.items or k <= 0 or not any(t.text.strip() for t in context):
            return Retrieval()
        with self._lock:
            scores = self.score(context, scope, filter)
            return self.rank(context, scores, k, filter, select)

    def warm_up(self) -> None:
        if self.encoder is not None and self._queries is not None:
            self._queries(["warm up"])

    def to_config(self) -> JSONDict:
        if self.spec is not None:
            return dict(self.spec)
        return {"name": "hybrid" if self.config.uses_dense else "bm25", **self.config.to_dict()}
