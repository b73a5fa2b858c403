"""Knowledge retrieval: which knowledge does this turn need."""

from ragdial.retrieval.base import Retriever, ScoredKnowledge

__all__ = ["Retriever", "ScoredKnowledge"]
