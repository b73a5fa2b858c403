"""The in-process retriever: candidate scope -> BM25 (+ dense) over weighted context turns -> fusion (-> reranker)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ragdial.jsontypes import JSONDict
from ragdial.retrieval import fusion
from ragdial.retrieval.base import KnowledgeFilter, Retrieval, Retriever, Scope, ScoredKnowledge, take
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.entities import EntityTracker
from ragdial.retrieval.lexical import LexicalIndex
from ragdial.retrieval.query import query_texts
from ragdial.schema import Knowledge, KnowledgeBase, Turn
from ragdial.text.encoders import QueryCache, blas_threads, encode_cached, get_encoder

if TYPE_CHECKING:
    from ragdial.retrieval.rerank import RerankerModel


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` highest scores, best first (ties by position)."""
    if len(scores) > 4 * k:
        kth = -np.partition(-scores, k - 1)[k - 1]
        above = np.flatnonzero(scores > kth)
        part = np.concatenate([above, np.flatnonzero(scores == kth)[: k - len(above)]])
        return part[np.lexsort((part, -scores[part]))]
    return np.argsort(-scores, kind="stable")[:k]


@dataclass
class CandidateScores:
    """Scores of one query over its candidates (parallel arrays, indices into the retriever's items)."""

    indices: np.ndarray
    bm25: np.ndarray
    dense: np.ndarray
    fused: np.ndarray
    bm25_last: np.ndarray
    dense_last: np.ndarray
    focus: list[str] = field(default_factory=list)
    mention_age: dict[str, int] = field(default_factory=dict)
    query: str = ""


class HybridRetriever(Retriever):
    """BM25 + dense retrieval over a knowledge base, with entity-scoped candidates and an optional reranker."""

    def __init__(
        self,
        kb: KnowledgeBase,
        config: RetrieverConfig | None = None,
        lexical: LexicalIndex | None = None,
        vectors: np.ndarray | None = None,
        reranker: RerankerModel | None = None,
    ) -> None:
        self.kb = kb
        self.config = config or RetrieverConfig()
        self.items: list[Knowledge] = list(kb)
        texts = [item.text or "" for item in self.items]
        self.lexical = lexical or LexicalIndex.build(texts, self.config.analyzer)
        self.encoder = get_encoder(self.config.encoder) if self.config.encoder and self.config.uses_dense else None
        if self.encoder is not None and vectors is None:
            vectors = encode_cached(self.encoder, texts) if texts else np.zeros((0, self.encoder.dim), np.float32)
        self.vectors = vectors
        self._queries = QueryCache.shared(self.encoder) if self.encoder is not None else None
        self.reranker = reranker
        self.spec: dict[str, Any] | None = None  # how a registry built it (``to_config``)
        self._lock = threading.Lock()
        self.tracker = EntityTracker(self.items, pinyin=self.config.analyzer.pinyin)
        self._tokens: dict[int, set[str]] = {}
        self._position = {item.id: i for i, item in enumerate(self.items)}
        self._global = np.array([i for i, it in enumerate(self.items) if it.is_global], dtype=np.int64)
        self._sources = np.array([item.source.value for item in self.items], dtype=object)
        self._local: dict[str, list[int]] = {}
        self._by_entity: dict[str, list[int]] = {}
        no_entity = []
        for i, item in enumerate(self.items):
            if not item.is_global:
                self._local.setdefault(item.scope, []).append(i)
            name = item.fields.get("entity")
            if isinstance(name, str) and name:
                self._by_entity.setdefault(name, []).append(i)
            else:
                no_entity.append(i)
        self._no_entity = np.array(no_entity, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.items)

    def item_tokens(self, index: int) -> set[str]:
        """The analyzer tokens of one item (computed once)."""
        tokens = self._tokens.get(index)
        if tokens is None:
            tokens = self._tokens[index] = set(self.config.analyzer(self.items[index].text or ""))
        return tokens

    def position(self, item_id: str) -> int:
        return self._position[item_id]

    def candidates(
        self, context: Sequence[Turn], scope: Scope | str | None = None, filter: KnowledgeFilter | None = None
    ) -> tuple[np.ndarray, list[str]]:
        """Candidate item indices for a context within ``scope`` and ``filter``, and the entities in focus that
        narrowed them."""
        scope = Scope.of(scope)
        local = np.array(self._local.get(scope.local, []) if scope.local is not None else [], dtype=np.int64)
        focus = self.tracker.focus(context, self.config.carry_turns) if len(self.tracker) else []
        if not scope.include_global:
            return local, focus
        pool = self._global
        if self.config.entity_scope and focus:
            scoped = [i for name in focus for i in self._by_entity.get(name, [])]
            pool = np.unique(np.concatenate([np.array(scoped, dtype=np.int64), self._no_entity]))
            pool = pool[np.isin(pool, self._global)] if len(self._local) else pool
        if filter is not None and filter.sources and len(pool):
            pool = pool[np.isin(self._sources[pool], [s.value for s in filter.sources])]
        return np.concatenate([local, pool]), focus

    def score(
        self, context: Sequence[Turn], scope: Scope | str | None = None, filter: KnowledgeFilter | None = None
    ) -> CandidateScores:
        """Every candidate's lexical, dense and fused scores for the context."""
        indices, focus = self.candidates(context, scope, filter)
        pairs = query_texts(context, self.config, focus, scoped=self.config.entity_scope and bool(focus))
        n = len(indices)
        bm25 = np.zeros(n, np.float32)
        bm25_last = np.zeros(n, np.float32)
        dense = np.zeros(n, np.float32)
        dense_last = np.zeros(n, np.float32)
        if n and pairs:
            for rank, (text, weight) in enumerate(pairs):
                row = self.lexical.scores(text)[indices]
                bm25 += weight * row
                if rank == 0:
                    bm25_last = row
            if self._queries is not None and self.vectors is not None:
                queries = self._queries([t for t, _ in pairs])
                with blas_threads():
                    if n * 4 >= len(self.items):  # most items: one matrix product beats gathering rows
                        sims = np.asarray(self.vectors @ queries.T, dtype=np.float32)[indices]
                    else:
                        sims = np.asarray(self.vectors[indices] @ queries.T, dtype=np.float32)
                weights = np.array([w for _, w in pairs], dtype=np.float32)
                dense = sims @ weights / weights.sum()
                dense_last = sims[:, 0]
        fused = self._fuse(bm25, dense)
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

    def _fuse(self, bm25: np.ndarray, dense: np.ndarray) -> np.ndarray:
        config = self.config
        if len(bm25) == 0 or config.fusion == "bm25":
            return bm25
        if config.fusion == "dense":
            return dense
        if config.fusion == "rrf":
            return fusion.rrf([bm25, dense], config.rrf_k)
        return fusion.weighted([bm25, dense], [config.lexical_weight, 1.0 - config.lexical_weight])

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
            final = self.reranker.predict(self, context, scores) if self.reranker is not None else scores.fused
        ranked = [ScoredKnowledge(self.items[int(scores.indices[i])], float(final[i])) for i in top_k(final, k)]
        if filter is not None and filter.min_score is not None:
            ranked = take(ranked, filter, k)
        return Retrieval(ranked, self.selection(ranked, select))

    def selection(self, ranked: Sequence[ScoredKnowledge], select: int | None = None) -> list[ScoredKnowledge]:
        """The items to use from ``ranked``: the reranker's cut (several where its threshold keeps them), or the
        first ``select``."""
        if self.reranker is not None:
            return self.reranker.cut(ranked, select) if ranked else []
        return list(ranked[: self.config.select if select is None else select])

    def warm_up(self) -> None:
        if self.encoder is not None and self._queries is not None:
            self._queries(["warm up"])

    def to_config(self) -> JSONDict:
        if self.spec is not None:
            return dict(self.spec)
        return {"name": "hybrid" if self.config.uses_dense else "bm25", **self.config.to_dict()}
