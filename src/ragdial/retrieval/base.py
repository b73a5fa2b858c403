"""The interface every retriever implements: which items a turn may see (``Scope``, ``KnowledgeFilter``), and what
it gets back (``Retrieval``: the full ranking and the selected items, both as the ``Knowledge`` items themselves)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

from ragdial.jsontypes import JSONDict, JSONObject, as_text
from ragdial.schema import GLOBAL_SCOPE, Knowledge, SourceKind, Turn


@dataclass(frozen=True)
class ScoredKnowledge:
    """A knowledge item and its retrieval score (higher is better); what an answer cites."""

    item: Knowledge
    score: float

    @property
    def id(self) -> str:
        return self.item.id

    @property
    def source(self) -> SourceKind:
        return self.item.source

    @property
    def text(self) -> str:
        return self.item.text

    @property
    def scope(self) -> str:
        return self.item.scope

    def to_dict(self) -> JSONDict:
        """The cited form (id, source kind, text, score, scope), as the API returns and the session store keeps."""
        item = self.item
        return {"id": item.id, "source": item.source.value, "text": item.text, "score": self.score, "scope": item.scope}

    @classmethod
    def from_dict(cls, data: JSONObject) -> ScoredKnowledge:
        """Read back :meth:`to_dict` (the item's structured ``fields`` are not part of the cited form)."""
        source = SourceKind(as_text(data["source"]))
        item = Knowledge(as_text(data["id"]), as_text(data["text"]), source, {}, as_text(data.get("scope", "")))
        score = data.get("score", 0.0)
        return cls(item, float(score) if isinstance(score, int | float) else 0.0)


@dataclass(frozen=True)
class Scope:
    """Which items a turn may see: the global knowledge (``include_global``) and the local items of one dialog or
    user (``local``: their scope id, e.g. a MobileCS2 dialog whose ``local_kb`` is the user's profile)."""

    local: str | None = None
    include_global: bool = True

    @classmethod
    def of(cls, scope: Scope | str | None) -> Scope:
        """``None``: global items only; a string: global items plus that scope's local items."""
        if isinstance(scope, Scope):
            return scope
        return cls(local=scope or None)

    def allows(self, item: Knowledge) -> bool:
        if item.is_global:
            return self.include_global
        return self.local is not None and item.scope == self.local


@dataclass(frozen=True)
class KnowledgeFilter:
    """Narrows a scope: ``sources`` limits the global items to those source kinds (empty: every kind);
    ``min_score`` drops ranked items scoring below it."""

    sources: tuple[SourceKind, ...] = ()
    min_score: float | None = None

    def allows(self, item: Knowledge) -> bool:
        return not self.sources or item.scope != GLOBAL_SCOPE or item.source in self.sources


@dataclass(frozen=True)
class Retrieval:
    """What a retriever returns for a turn: ``ranked`` (best first, up to ``k``; for recall@k, MRR, a top-20
    submission) and ``selected`` (the items to ground the reply in and cite: a reranker's cut, else the first few)."""

    ranked: list[ScoredKnowledge] = field(default_factory=list)
    selected: list[ScoredKnowledge] = field(default_factory=list)

    @property
    def items(self) -> list[Knowledge]:
        """The selected knowledge items themselves."""
        return [hit.item for hit in self.selected]


class Retriever(ABC):
    """Answers "which knowledge does this turn need" for a dialog context: ranking and selection.

    A retriever is a component (``warm_up``, ``close``, ``to_config``) and does its own locking: ``retrieve`` may be
    called from several threads.
    """

    @abstractmethod
    def retrieve(
        self,
        context: Sequence[Turn],
        scope: Scope | str | None = None,
        k: int = 20,
        filter: KnowledgeFilter | None = None,
        select: int | None = None,
    ) -> Retrieval:
        """The ``k`` best items within ``scope`` and ``filter`` for the next system turn after ``context``, and the
        selection among them (at most ``select`` items)."""

    def warm_up(self) -> None:
        """Load what loads lazily (a query encoder) before the first turn; a no-op by default."""
        return None

    def close(self) -> None:
        """Release what the retriever holds (a connection); a no-op by default."""
        return None

    def to_config(self) -> JSONDict:
        """The component as plain config data (``{"name": ..., **params}``); the class name by default."""
        return {"name": f"{type(self).__module__}:{type(self).__name__}"}


def take(ranked: Sequence[ScoredKnowledge], filter: KnowledgeFilter | None, k: int) -> list[ScoredKnowledge]:
    """The first ``k`` of ``ranked`` that ``filter`` keeps (its ``min_score`` applied)."""
    out = []
    for hit in ranked:
        if filter is not None and (
            not filter.allows(hit.item) or (filter.min_score is not None and hit.score < filter.min_score)
        ):
            continue
        out.append(hit)
        if len(out) == k:
            break
    return out
