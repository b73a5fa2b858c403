"""What every session store guarantees, whichever database holds it.

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

import re
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ragdial.errors import RagdialError
from ragdial.pipeline import Session
from ragdial.serve.store import ANY, SessionExistsError, SessionSummary, StoredTurn, UnknownSessionError

__all__ = [
    "ANY",
    "SessionExistsError",
    "SessionStore",
    "SessionSummary",
    "StoreUnavailableError",
    "StoredTurn",
    "UnknownSessionError",
    "redact",
]


class StoreUnavailableError(RagdialError):
    """The session database cannot be reached (at start-up, or still after a retry during a request): the service
    answers 503 and nothing was written."""


@runtime_checkable
class SessionStore(Protocol):
    """Sessions and their turns (see the module docstring for the guarantees)."""

    def create(self, session: Session, turns: Sequence[StoredTurn] = (), owner: str | None = None) -> Session: ...

    def exists(self, session_id: str, owner: str | None = None) -> bool: ...

    def get(self, session_id: str, owner: str | None = None) -> Session: ...

    def turns(self, session_id: str, owner: str | None = None) -> list[StoredTurn]: ...

    def summary(self, session_id: str, owner: str | None = None) -> SessionSummary: ...

    def list(self, limit: int = 100, owner: str | None = None, user: Any = ANY) -> list[SessionSummary]: ...

    def delete(self, session_id: str, owner: str | None = None) -> None: ...

    def append(
        self,
        session_id: str,
        turns: Sequence[StoredTurn],
        state: dict[str, Any] | None = None,
        owner: str | None = None,
    ) -> int: ...

    def health(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages and /healthz)."""
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", url)
