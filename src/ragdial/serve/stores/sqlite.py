"""Sessions in SQLite (WAL), the embedded default: history survives a restart and is shared by the worker processes
of one machine.

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
from pathlib import Path

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict, JSONObject
from ragdial.pipeline.turn import Session
from ragdial.schema import Speaker
from ragdial.serve.stores.base import (
    ANY,
    TITLE_CHARS,
    SessionExistsError,
    SessionSummary,
    StoredTurn,
    UnknownSessionError,
    _Any,
    session_filter,
)

# The schema, as an ordered list of idempotent steps (version, what it does, SQL or an added column). Never edit a
# released step; add a new one. Each runs once per database, in order, recorded in ragdial_schema. A file written
# before the version table existed already has step 1's tables: the steps still apply (IF NOT EXISTS, added columns
# only when missing).
MIGRATIONS: list[tuple[int, str, str | tuple[str, str, str]]] = [
    (
        1,
        "sessions and turns",
        """
        CREATE TABLE IF NOT EXISTS sessions (
            id TEXT PRIMARY KEY,
            user TEXT,
            language TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '',
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
        """,
    ),
    (2, "session state", ("sessions", "state", "TEXT NOT NULL DEFAULT '{}'")),
    (3, "session owners (who may see a session)", ("sessions", "owner", "TEXT")),
    (4, "sessions by owner", "CREATE INDEX IF NOT EXISTS sessions_by_owner ON sessions(owner, updated DESC);"),
]


class SQLiteSessionStore:
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
        self.version = self._migrate()

    def _connect(self, check_same_thread: bool = True) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(
                self.path,
                timeout=self.busy_timeout_ms / 1000,
                isolation_level=None,
                check_same_thread=check_same_thread,
            )
            db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
            if self.path != ":memory:":
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA foreign_keys = ON")
        except sqlite3.DatabaseError as err:
            raise RagdialError(f"session database {self.path}: {err}") from None
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

    def _migrate(self) -> int:
        """Apply the schema steps this file has not seen yet (``BEGIN IMMEDIATE``: one process at a time)."""
        with self._transaction() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS ragdial_schema (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "applied REAL NOT NULL)"
            )
            done = {row[0] for row in db.execute("SELECT version FROM ragdial_schema")}
            newest = MIGRATIONS[-1][0]
            if done and max(done) > newest:
                raise RagdialError(
                    f"session database {self.path}: schema version {max(done)} is newer than this ragdial ({newest})"
                )
            for version, name, step in MIGRATIONS:
                if version in done:
                    continue
                if isinstance(step, tuple):  # an added column, only where missing
                    table, column, declaration = step
                    if column not in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
                        db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
                else:
                    for statement in step.split(";"):  # executescript would commit: run the statements one by one
                        if statement.strip():
                            db.execute(statement)
                db.execute(
                    "INSERT INTO ragdial_schema (version, name, applied) VALUES (?, ?, ?)", (version, name, time.time())
                )
            return newest

    def journal_mode(self) -> str:
        with self._transaction(write=False) as db:
            return str(db.execute("PRAGMA journal_mode").fetchone()[0])

    def health(self) -> JSONDict:
        return {
            "backend": "sqlite",
            "path": self.path,
            "schema_version": self.version,
            "journal_mode": self.journal_mode(),
        }

    def close(self) -> None:
        """Close this thread's connection (others close when their thread ends)."""
        db = self._shared or getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    # ---- sessions

    def create(self, session: Session, turns: Sequence[StoredTurn] = (), owner: str | None = None) -> Session:
        """Store a new session (and any turns it starts with, e.g. the history an OpenAI client sent)."""
        now = time.time()
        with self._transaction() as db:
            try:
                db.execute(
                    "INSERT INTO sessions (id, user, language, title, state, created, updated, owner) "
                    "VALUES (?, ?, ?, '', ?, ?, ?, ?)",
                    (
                        session.id,
                        session.user,
                        session.language,
                        json.dumps(session.state, ensure_ascii=False),
                        now,
                        now,
                        owner,
                    ),
                )
            except sqlite3.IntegrityError:
                raise SessionExistsError(f"session {session.id!r} exists already") from None
            if turns:
                self._append(db, session.id, turns, now)
        return session

    def exists(self, session_id: str, owner: str | None = None) -> bool:
        with self._transaction(write=False) as db:
            return self._owned(db, session_id, owner)

    def get(self, session_id: str, owner: str | None = None) -> Session:
        """The session with its whole history; ``UnknownSessionError`` if there is none (for this owner)."""
        with self._transaction(write=False) as db:
            row = db.execute("SELECT user, language, state, owner FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None or (owner is not None and row[3] != owner):
                raise UnknownSessionError(session_id)
            turns = [t.turn for t in self._turns(db, session_id)]
        return Session(session_id, row[0], row[1], turns, json.loads(row[2]))

    def turns(self, session_id: str, owner: str | None = None) -> builtins.list[StoredTurn]:
        with self._transaction(write=False) as db:
            if not self._owned(db, session_id, owner):
                raise UnknownSessionError(session_id)
            return self._turns(db, session_id)

    def summary(self, session_id: str, owner: str | None = None) -> SessionSummary:
        where, args = session_filter("?", "user", session_id, owner)
        with self._transaction(write=False) as db:
            rows = self._summaries(db, where, tuple(args))
        if not rows:
            raise UnknownSessionError(session_id)
        return rows[0]

    def list(
        self, limit: int = 100, owner: str | None = None, user: str | _Any | None = ANY
    ) -> builtins.list[SessionSummary]:
        """The most recently updated sessions first; only ``owner``'s when given, only those of profile ``user``
        when given (``None``: sessions without a profile)."""
        where, args = session_filter("?", "user", owner=owner, user=user)
        with self._transaction(write=False) as db:
            return self._summaries(db, where, tuple(args), limit)

    def delete(self, session_id: str, owner: str | None = None) -> None:
        with self._transaction() as db:
            if not self._owned(db, session_id, owner):
                raise UnknownSessionError(session_id)
            db.execute("DELETE FROM turns WHERE session_id = ?", (session_id,))
            db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def append(
        self,
        session_id: str,
        turns: Sequence[StoredTurn],
        state: JSONObject | None = None,
        owner: str | None = None,
    ) -> int:
        """Append ``turns`` after the session's last turn in one transaction (with the session's new ``state``,
        if given); returns the new number of turns."""
        with self._transaction() as db:
            if not self._owned(db, session_id, owner):
                raise UnknownSessionError(session_id)
            if state is not None:
                db.execute(
                    "UPDATE sessions SET state = ? WHERE id = ?", (json.dumps(state, ensure_ascii=False), session_id)
                )
            return self._append(db, session_id, turns, time.time())

    # ---- helpers

    @staticmethod
    def _owned(db: sqlite3.Connection, session_id: str, owner: str | None) -> bool:
        row = db.execute("SELECT owner FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return row is not None and (owner is None or row[0] == owner)

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
        return [StoredTurn.from_row(*row) for row in rows]

    @staticmethod
    def _summaries(
        db: sqlite3.Connection, where: str, args: tuple[str | int | float | None, ...], limit: int = 1
    ) -> builtins.list[SessionSummary]:
        rows = db.execute(
            "SELECT s.id, s.user, s.language, s.title, "
            "(SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id), s.created, s.updated "
            f"FROM sessions s {where} ORDER BY s.updated DESC LIMIT ?",
            (*args, limit),
        ).fetchall()
        return [SessionSummary(*row) for row in rows]
