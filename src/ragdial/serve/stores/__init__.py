"""Session stores: SQLite (an embedded file, the default) and PostgreSQL (shared by several replicas).

``open_store("postgresql://user:password@host/db")`` or ``open_store("sessions.sqlite")``; both keep the guarantees in
``stores.base``.
"""

from __future__ import annotations

from pathlib import Path

from ragdial.serve.stores.base import (
    ANY,
    SessionExistsError,
    SessionStore,
    SessionSummary,
    StoredTurn,
    StoreUnavailableError,
    UnknownSessionError,
    record_turns,
    redact,
)
from ragdial.serve.stores.sqlite import SQLiteSessionStore

POSTGRES_SCHEMES = ("postgresql://", "postgres://")

__all__ = [
    "ANY",
    "SQLiteSessionStore",
    "SessionExistsError",
    "SessionStore",
    "SessionSummary",
    "StoreUnavailableError",
    "StoredTurn",
    "UnknownSessionError",
    "is_postgres",
    "open_store",
    "record_turns",
    "redact",
]


def is_postgres(target: str | Path) -> bool:
    """Whether ``target`` names a PostgreSQL database (a ``postgresql://`` URI) rather than a SQLite file."""
    return str(target).startswith(POSTGRES_SCHEMES)


def open_store(target: str | Path) -> SessionStore:
    """The session store at ``target``: a ``postgresql://`` URI, a ``sqlite:///`` URL, or a SQLite file path.
    An unreachable database raises ``StoreUnavailableError`` naming it (password hidden)."""
    text = str(target)
    if is_postgres(text):
        from ragdial.serve.stores.postgres import PostgresSessionStore

        return PostgresSessionStore(text)
    return SQLiteSessionStore(text.removeprefix("sqlite:///") if text.startswith("sqlite:///") else text)
