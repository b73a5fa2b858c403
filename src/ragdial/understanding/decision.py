"""What the understanding stage decides for a turn, and the protocol a detector implements."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ragdial.jsontypes import JSONDict
from ragdial.retrieval.base import KnowledgeFilter, Scope
from ragdial.schema import Knowledge, SourceKind, Turn

USER_PROFILE = "user_profile"
GLOBAL = "global"
LOOKUPS = (USER_PROFILE, GLOBAL)


@dataclass(frozen=True)
class Decision:
    """Does the turn need knowledge, and which look-ups: the user's profile, the global knowledge, or both.

    ``sources`` narrows the global look-up to some source kinds (e.g. only FAQ); empty means every kind.
    ``label`` is what the detector predicted (an api_query, an intent), ``confidence`` its probability.
    """

    needs_knowledge: bool
    lookups: tuple[str, ...] = LOOKUPS
    sources: tuple[SourceKind, ...] = ()
    label: str | None = None
    confidence: float | None = None
    detector: str = ""

    def allows(self, item: Knowledge, user_scope: str | None) -> bool:
        """Whether ``item`` is within this decision's look-ups for a session of ``user_scope``."""
        if not self.needs_knowledge:
            return False
        if item.is_global:
            return GLOBAL in self.lookups and (not self.sources or item.source in self.sources)
        return USER_PROFILE in self.lookups and user_scope is not None and item.scope == user_scope

    def scope(self, user: str | None) -> Scope:
        """The retrieval scope of this decision for a session of ``user`` (whose profile is their local scope)."""
        local = user if self.needs_knowledge and USER_PROFILE in self.lookups else None
        return Scope(local=local, include_global=self.needs_knowledge and GLOBAL in self.lookups)

    def knowledge_filter(self, min_score: float | None = None) -> KnowledgeFilter:
        """The retrieval filter of this decision: its source kinds, and ``min_score``."""
        return KnowledgeFilter(tuple(self.sources), min_score)

    def to_dict(self) -> JSONDict:
        return {
            "needs_knowledge": self.needs_knowledge,
            "lookups": list(self.lookups) if self.needs_knowledge else [],
            "sources": [s.value for s in self.sources],
            "label": self.label,
            "confidence": self.confidence,
            "detector": self.detector,
        }


@runtime_checkable
class Detector(Protocol):
    """Decides, from the dialog so far (ending with the user's turn), what the next system turn needs."""

    def decide(self, context: Sequence[Turn], language: str) -> Decision: ...


@dataclass
class AlwaysRetrieve:
    """The policy without a model: every turn looks up the user's profile and the global knowledge."""

    lookups: tuple[str, ...] = field(default=LOOKUPS)

    def decide(self, context: Sequence[Turn], language: str) -> Decision:
        return Decision(True, tuple(self.lookups), detector="always")

    def warm_up(self) -> None:
        return None

    def close(self) -> None:
        return None

    def to_config(self) -> JSONDict:
        return {"name": "always", "lookups": list(self.lookups)}
