"""What every session store guarantees, whichever database holds it, and the types they share.

- A turn is stored atomically: ``append`` writes the user's turn, the reply (with its citations and metadata) and
  the session's new state in one transaction, so a crash or a lost connection never leaves half a turn.
- Concurrent appends to one session (threads or processes, any worker) are serialised: each gets the next indices,
  whole turns never interleave.
- A completed ``append`` survives ``kill -9`` of the process that made it.
- Sessions are private to their owner: when a call names an ``owner``, a session of another owner is unknown to it.
- The schema is created and migrated by the store itself: an ordered list of idempotent SQL steps and a version
  table (``ragdial_schema``), applied under a lock so several workers can start at once.
"""

from __future__ import annotations

import builtins
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict, JSONObject, as_object
from ragdial.pipeline.turn import Session, TurnRecord
from ragdial.retrieval.base import ScoredKnowledge
from ragdial.schema import Speaker, Turn

TITLE_CHARS = 40

__all__ = [
    "ANY",
    "TITLE_CHARS",
    "SessionExistsError",
    "SessionStore",
    "SessionSummary",
    "StoreUnavailableError",
    "StoredTurn",
    "UnknownSessionError",
    "record_turns",
    "redact",
    "session_filter",
]


class _Any:
    """The type of ``ANY``: "do not filter on this column"."""

    def __repr__(self) -> str:
        return "ANY"


ANY = _Any()


def session_filter(
    mark: str,
    user_column: str,
    session_id: str | None = None,
    owner: str | None = None,
    user: str | _Any | None = ANY,
) -> tuple[str, list[str]]:
    """The ``WHERE`` clause ("" when nothing is filtered) and its arguments selecting sessions (table alias ``s``):
    the one ``session_id``, only ``owner``'s when given, only profile ``user``'s when given (``None``: sessions
    without a profile). ``mark`` is the driver's placeholder, ``user_column`` the (quoted) name of the user column.
    Both stores build their privacy filter here, so the rule is written once."""
    conditions: list[str] = []
    args: list[str] = []
    if session_id is not None:
        conditions.append(f"s.id = {mark}")
        args.append(session_id)
    if owner is not None:
        conditions.append(f"s.owner = {mark}")
        args.append(owner)
    if user is None:
        conditions.append(f"s.{user_column} IS NULL")
    elif not isinstance(user, _Any):
        conditions.append(f"s.{user_column} = {mark}")
        args.append(user)
    return ("WHERE " + " AND ".join(conditions) if conditions else ""), args


class UnknownSessionError(KeyError):
    """A session id the store does not hold (never created, deleted, or another owner's)."""


class SessionExistsError(RagdialError):
    """A session id the store already holds."""


@dataclass
class StoredTurn:
    """A turn as stored: the schema turn plus the knowledge cited and per-turn metadata (decision, timings)."""

    turn: Turn
    knowledge: list[ScoredKnowledge] = field(default_factory=list)
    meta: JSONDict = field(default_factory=dict)
    created: float = 0.0

    def to_message(self) -> JSONDict:
        role = "user" if self.turn.speaker == Speaker.USER else "assistant"
        return {
            "role": role,
            "content": self.turn.text,
            "knowledge": [c.to_dict() for c in self.knowledge],
            "meta": self.meta,
            "created": self.created,
        }

    @classmethod
    def from_row(
        cls, speaker: str, text: str, knowledge: str | list[JSONObject], meta: str | JSONObject, created: float
    ) -> StoredTurn:
        """A stored row back (``knowledge`` and ``meta`` as JSON text or already decoded)."""
        cited = json.loads(knowledge) if isinstance(knowledge, str) else knowledge
        citations = [ScoredKnowledge.from_dict(as_object(c)) for c in cited]
        turn = Turn(Speaker(speaker), text, knowledge_ids=[c.id for c in citations])
        return cls(turn, citations, json.loads(meta) if isinstance(meta, str) else dict(meta), float(created))


def record_turns(record: TurnRecord) -> list[StoredTurn]:
    """The two stored turns of a finished exchange: the user's, and the system's with its citations and metadata."""
    return [StoredTurn(record.user), StoredTurn(record.system, list(record.citations), record.meta())]


@dataclass(frozen=True)
class SessionSummary:
    id: str
    user: str | None
    language: str
    title: str
    turns: int
    created: float
    updated: float

    def to_dict(self) -> JSONDict:
        return {
            "id": self.id,
            "user": self.user,
            "language": self.language,
            "title": self.title,
            "turns": self.turns,
            "created": self.created,
            "updated": self.updated,
        }


class StoreUnavailableError(RagdialError):
    """The session database cannot be reached (at start-up, or still after a retry during a request): the service
    answers 503 and nothing was written."""


@runtime_checkable
class SessionStore(Protocol):
    """Sessions and their turns (see the module docstring for the guarantees)."""

    def create(self, session: Session, turns: Sequence[StoredTurn] = (), owner: str | None = None) -> Session: ...

    def exists(self, session_id: str, owner: str | None = None) -> bool: ...

    def get(self, session_id: str, owner: str | None = None) -> Session: ...

    def turns(self, session_id: str, owner: str | None = None) -> builtins.list[StoredTurn]: ...

    def summary(self, session_id: str, owner: str | None = None) -> SessionSummary: ...

    def list(
        self, limit: int = 100, owner: str | None = None, user: str | _Any | None = ANY
    ) -> builtins.list[SessionSummary]: ...

    def delete(self, session_id: str, owner: str | None = None) -> None: ...

    def append(
        self,
        session_id: str,
        turns: Sequence[StoredTurn],
        state: JSONObject | None = None,
        owner: str | None = None,
    ) -> int: ...

    def health(self) -> JSONDict: ...

    def close(self) -> None: ...


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages and /healthz)."""
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", url)
