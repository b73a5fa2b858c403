"""Knowledge retrieval: which knowledge does this turn need.

``HybridRetriever(kb, RetrieverConfig(...))`` is the in-process retriever (entity-scoped candidates, BM25 + dense,
fusion, optional learned ``Reranker``); ``save_index``/``load_index`` persist it; ``MilvusRetriever`` (in
``ragdial.retrieval.milvus``, needs the ``milvus`` extra) answers the same interface from Milvus.
"""

from ragdial.retrieval.base import Retriever, ScoredKnowledge
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.encoders import get_encoder
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.retrieval.index import load_index, save_index
from ragdial.retrieval.rerank import Reranker

__all__ = [
    "HybridRetriever",
    "Reranker",
    "Retriever",
    "RetrieverConfig",
    "ScoredKnowledge",
    "get_encoder",
    "load_index",
    "save_index",
]
