"""Knowledge retrieval: which knowledge does this turn need (ranking and selection).

``HybridRetriever(kb, RetrieverConfig(...))`` is the in-process retriever (entity-scoped candidates, BM25 + dense,
fusion, optional learned ``Reranker`` whose cut selects); ``save_index``/``load_index`` persist it and
``write_index`` writes one from a stream of items; above ``prune_above`` candidates it shortlists (exact BM25 top-k,
a faiss dense index) before fusing;
``MilvusRetriever`` (in ``ragdial.retrieval.milvus``, needs the ``milvus`` extra) answers the same interface from
Milvus. ``retrieve(context, scope, k, filter)`` returns a ``Retrieval`` (``ranked`` and ``selected`` items);
``RETRIEVERS`` builds them from a config.
"""

from ragdial.retrieval.base import KnowledgeFilter, Retrieval, Retriever, Scope, ScoredKnowledge
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.retrieval.index import load_index, save_index, write_index
from ragdial.retrieval.registry import RETRIEVERS
from ragdial.retrieval.rerank import Reranker

__all__ = [
    "RETRIEVERS",
    "HybridRetriever",
    "KnowledgeFilter",
    "Reranker",
    "Retrieval",
    "Retriever",
    "RetrieverConfig",
    "Scope",
    "ScoredKnowledge",
    "load_index",
    "save_index",
    "write_index",
]
