"""The interface every retriever implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from ragdial.schema import Knowledge, Turn


@dataclass(frozen=True)
class ScoredKnowledge:
    """A knowledge item and its retrieval score (higher is better)."""

    item: Knowledge
    score: float


class Retriever(ABC):
    """Answers "which knowledge does this turn need" for a dialog context."""

    @abstractmethod
    def retrieve(self, context: Sequence[Turn], dialog_id: str | None = None, k: int = 20) -> list[ScoredKnowledge]:
        """The ``k`` best items for the next system turn after ``context``, among the dialog's candidates."""
