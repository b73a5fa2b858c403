"""Sessions persisted in SQLite (WAL): history survives a restart and is shared by several worker processes.

Each turn is a row keyed by (session, index); a reply is appended together with the user's turn in one
``BEGIN IMMEDIATE`` transaction, so concurrent writers (threads or processes) never interleave half a turn and a
crash never leaves a user turn without its reply.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdial.pipeline.turn import Session, TurnRecord
from ragdial.retrieval.base import ScoredKnowledge
from ragdial.schema import Speaker, Turn

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    user TEXT,
    language TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL DEFAULT '{}',
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS turns (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    speaker TEXT NOT NULL,
    text TEXT NOT NULL,
    knowledge TEXT NOT NULL DEFAULT '[]',
    meta TEXT NOT NULL DEFAULT '{}',
    created REAL NOT NULL,
    PRIMARY KEY (session_id, idx)
);
CREATE INDEX IF NOT EXISTS sessions_by_update ON sessions(updated DESC);
"""
TITLE_CHARS = 40


class UnknownSessionError(KeyError):
    """A session id the store does not hold (never created, or deleted)."""


@dataclass
class StoredTurn:
    """A turn as stored: the schema turn plus the knowledge cited and per-turn metadata (decision, timings)."""

    turn: Turn
    knowledge: list[ScoredKnowledge] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    created: float = 0.0

    def to_message(self) -> dict[str, Any]:
        role = "user" if self.turn.speaker == Speaker.USER else "assistant"
        return {
            "role": role,
            "content": self.turn.text,
            "knowledge": [c.to_dict() for c in self.knowledge],
            "meta": self.meta,
            "created": self.created,
        }


@dataclass(frozen=True)
class SessionSummary:
    id: str
    user: str | None
    language: str
    title: str
    turns: int
    created: float
    updated: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user": self.user,
            "language": self.language,
            "title": self.title,
            "turns": self.turns,
            "created": self.created,
            "updated": self.updated,
        }


class SessionStore:
    """SQLite session store; one connection per thread, WAL journal, a busy timeout for concurrent writers."""

    def __init__(self, path: str | Path, busy_timeout_ms: int = 30_000) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.busy_timeout_ms = busy_timeout_ms
        self._local = threading.local()
        if self.path == ":memory:":  # one shared connection: each :memory: connection is a separate database
            self._shared: sqlite3.Connection | None = self._connect(check_same_thread=False)
            self._shared_lock = threading.RLock()
        else:
            self._shared = None
        db = self._shared or self._db()
        db.executescript(SCHEMA)
        columns = {row[1] for row in db.execute("PRAGMA table_info(sessions)")}
        if "state" not in columns:  # a store written by an earlier version
            db.execute("ALTER TABLE sessions ADD COLUMN state TEXT NOT NULL DEFAULT '{}'")

    def _connect(self, check_same_thread: bool = True) -> sqlite3.Connection:
        db = sqlite3.connect(
            self.path, timeout=self.busy_timeout_ms / 1000, isolation_level=None, check_same_thread=check_same_thread
        )
        db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
        if self.path != ":memory:":
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA foreign_keys = ON")
        return db

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = self._connect()
        return db

    @contextmanager
    def _transaction(self, write: bool = True) -> Iterator[sqlite3.Connection]:
        if self._shared is not None:
            with self._shared_lock:
                yield from self._run(self._shared, write)
        else:
            yield from self._run(self._db(), write)

    @staticmethod
    def _run(db: sqlite3.Connection, write: bool) -> Iterator[sqlite3.Connection]:
        db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def journal_mode(self) -> str:
        with self._transaction(write=False) as db:
            return str(db.execute("PRAGMA journal_mode").fetchone()[0])

    # ---- sessions

    def create(self, session: Session, turns: Sequence[StoredTurn] = ()) -> Session:
        """Store a new session (and any turns it starts with, e.g. the history an OpenAI client sent)."""
        now = time.time()
        with self._transaction() as db:
            db.execute(
                "INSERT INTO sessions (id, user, language, title, state, created, updated) "
                "VALUES (?, ?, ?, '', ?, ?, ?)",
                (session.id, session.user, session.language, json.dumps(session.state, ensure_ascii=False), now, now),
            )
            if turns:
                self._append(db, session.id, turns, now)
        return session

    def exists(self, session_id: str) -> bool:
        with self._transaction(write=False) as db:
            return db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is not None

    def get(self, session_id: str) -> Session:
        """The session with its whole history; ``UnknownSessionError`` if there is none."""
        with self._transaction(write=False) as db:
            row = db.execute("SELECT user, language, state FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise UnknownSessionError(session_id)
            turns = [t.turn for t in self._turns(db, session_id)]
        return Session(session_id, row[0], row[1], turns, json.loads(row[2]))

    def turns(self, session_id: str) -> builtins.list[StoredTurn]:
        with self._transaction(write=False) as db:
            if db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
                raise UnknownSessionError(session_id)
            return self._turns(db, session_id)

    def summary(self, session_id: str) -> SessionSummary:
        with self._transaction(write=False) as db:
            rows = self._summaries(db, "WHERE s.id = ?", (session_id,))
        if not rows:
            raise UnknownSessionError(session_id)
        return rows[0]

    def list(self, limit: int = 100) -> builtins.list[SessionSummary]:
        """The most recently updated sessions first."""
        with self._transaction(write=False) as db:
            return self._summaries(db, "", (), limit)

    def delete(self, session_id: str) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM turns WHERE session_id = ?", (session_id,))
            if db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount == 0:
                raise UnknownSessionError(session_id)

    def append(self, session_id: str, turns: Sequence[StoredTurn], state: dict[str, Any] | None = None) -> int:
        """Append ``turns`` after the session's last turn in one transaction (with the session's new ``state``,
        if given); returns the new number of turns."""
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
                raise UnknownSessionError(session_id)
            if state is not None:
                db.execute(
                    "UPDATE sessions SET state = ? WHERE id = ?", (json.dumps(state, ensure_ascii=False), session_id)
                )
            return self._append(db, session_id, turns, time.time())

    def append_record(self, session_id: str, record: TurnRecord) -> int:
        """Persist one finished turn (the user's turn, the system's turn with its citations and metadata, and the
        session's new state) in one transaction; returns the new number of turns."""
        turns = [StoredTurn(record.user), StoredTurn(record.system, list(record.citations), record.meta())]
        return self.append(session_id, turns, record.state)

    # ---- helpers

    @staticmethod
    def _append(db: sqlite3.Connection, session_id: str, turns: Sequence[StoredTurn], now: float) -> int:
        start = db.execute("SELECT COALESCE(MAX(idx) + 1, 0) FROM turns WHERE session_id = ?", (session_id,)).fetchone()
        index = int(start[0])
        for offset, stored in enumerate(turns):
            db.execute(
                "INSERT INTO turns (session_id, idx, speaker, text, knowledge, meta, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    index + offset,
                    stored.turn.speaker.value,
                    stored.turn.text,
                    json.dumps([c.to_dict() for c in stored.knowledge], ensure_ascii=False),
                    json.dumps(stored.meta, ensure_ascii=False),
                    now,
                ),
            )
        first_user = next((s.turn.text for s in turns if s.turn.speaker == Speaker.USER), "")
        db.execute(
            "UPDATE sessions SET updated = ?, title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?",
            (now, first_user.strip()[:TITLE_CHARS], session_id),
        )
        return index + len(turns)

    @staticmethod
    def _turns(db: sqlite3.Connection, session_id: str) -> builtins.list[StoredTurn]:
        rows = db.execute(
            "SELECT speaker, text, knowledge, meta, created FROM turns WHERE session_id = ? ORDER BY idx", (session_id,)
        ).fetchall()
        result = []
        for speaker, text, knowledge, meta, created in rows:
            citations = [ScoredKnowledge.from_dict(c) for c in json.loads(knowledge)]
            turn = Turn(Speaker(speaker), text, knowledge_ids=[c.id for c in citations])
            result.append(StoredTurn(turn, citations, json.loads(meta), created))
        return result

    @staticmethod
    def _summaries(
        db: sqlite3.Connection, where: str, args: tuple[Any, ...], limit: int = 1
    ) -> builtins.list[SessionSummary]:
        rows = db.execute(
            "SELECT s.id, s.user, s.language, s.title, "
            "(SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id), s.created, s.updated "
            f"FROM sessions s {where} ORDER BY s.updated DESC LIMIT ?",
            (*args, limit),
        ).fetchall()
        return [SessionSummary(*row) for row in rows]
