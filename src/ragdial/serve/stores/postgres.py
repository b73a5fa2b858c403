"""Sessions in PostgreSQL (psycopg 3 with a connection pool), for several service replicas sharing one database.

Same tables and guarantees as the SQLite store (see ``stores.base``): ``append`` locks the session's row
(``SELECT … FOR UPDATE``) and writes the whole turn in one transaction, so appends to one session from any worker are
serialised and a lost connection rolls the transaction back on the server. A request whose connection breaks before
its commit is retried once on a fresh connection from the pool (the pool checks connections when they are taken);
if the commit itself was cut, the outcome is unknown, so it is not retried and the caller gets
``StoreUnavailableError`` (503).
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict, JSONObject
from ragdial.pipeline import Session
from ragdial.schema import Speaker
from ragdial.serve.stores.base import (
    ANY,
    TITLE_CHARS,
    SessionExistsError,
    SessionSummary,
    StoredTurn,
    StoreUnavailableError,
    UnknownSessionError,
    _Any,
    redact,
    session_filter,
)

T = TypeVar("T")

if TYPE_CHECKING:
    from psycopg import Cursor

SQLValue = str | int | float | None  # a query parameter
LOCK_KEY = 0x7261_6764  # pg_advisory_xact_lock key taken while migrating ("ragd")

# The schema, as an ordered list of idempotent steps: (version, what it does, SQL). Never edit a released step;
# add a new one. Every step runs once per database, in order, recorded in ragdial_schema.
MIGRATIONS: list[tuple[int, str, str]] = [
    (
        1,
        "sessions and turns",
        """
        CREATE TABLE IF NOT EXISTS ragdial_sessions (
            id TEXT PRIMARY KEY,
            "user" TEXT,
            language TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            state JSONB NOT NULL DEFAULT '{}'::jsonb,
            created DOUBLE PRECISION NOT NULL,
            updated DOUBLE PRECISION NOT NULL
        );
        CREATE TABLE IF NOT EXISTS ragdial_turns (
            session_id TEXT NOT NULL REFERENCES ragdial_sessions(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            speaker TEXT NOT NULL,
            text TEXT NOT NULL,
            knowledge JSONB NOT NULL DEFAULT '[]'::jsonb,
            meta JSONB NOT NULL DEFAULT '{}'::jsonb,
            created DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (session_id, idx)
        );
        CREATE INDEX IF NOT EXISTS ragdial_sessions_by_update ON ragdial_sessions (updated DESC);
        """,
    ),
    (
        2,
        "session owners (who may see a session)",
        """
        ALTER TABLE ragdial_sessions ADD COLUMN IF NOT EXISTS owner TEXT;
        CREATE INDEX IF NOT EXISTS ragdial_sessions_by_owner ON ragdial_sessions (owner, updated DESC);
        """,
    ),
]


class PostgresSessionStore:
    """The session store on a PostgreSQL server at ``url`` (``postgresql://user:password@host:port/database``)."""

    def __init__(self, url: str, max_connections: int = 10, connect_timeout: float = 5.0, wait: float = 10.0) -> None:
        import psycopg
        from psycopg_pool import ConnectionPool

        self.url = url
        self.shown = redact(url)
        self._errors = (psycopg.OperationalError, psycopg.InterfaceError)
        try:  # one direct connection first: its error says why (refused, unknown host, bad password, no database)
            psycopg.connect(url, connect_timeout=max(1, round(connect_timeout))).close()
        except (psycopg.Error, ValueError) as err:
            raise StoreUnavailableError(f"cannot reach PostgreSQL at {self.shown}: {_first_line(err)}") from None
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            kwargs={"connect_timeout": max(1, round(connect_timeout))},
            check=ConnectionPool.check_connection,
            timeout=wait,
            name="ragdial-sessions",
            open=False,
        )
        try:
            self.pool.open(wait=True, timeout=max(connect_timeout, 1.0))
        except Exception as err:
            self.pool.close()
            raise StoreUnavailableError(f"cannot reach PostgreSQL at {self.shown}: {_first_line(err)}") from None
        self.version = self._migrate()

    # ---- transactions

    def _run(self, work: Callable[[Cursor], T], write: bool = True) -> T:
        """Run ``work(cursor)`` in one transaction; retried once on a fresh connection if the connection broke
        before the commit was sent."""
        from psycopg_pool import PoolTimeout

        for attempt in (1, 2):
            committing = False
            try:
                with self.pool.connection() as conn:
                    with conn.cursor() as cursor:
                        result = work(cursor)
                    committing = True
                    conn.commit()
                    return result
            except PoolTimeout as err:
                raise StoreUnavailableError(f"PostgreSQL at {self.shown}: {_first_line(err)}") from None
            except self._errors as err:
                if attempt == 2 or (committing and write):
                    raise StoreUnavailableError(f"PostgreSQL at {self.shown}: {_first_line(err)}") from None
        raise AssertionError("unreachable")

    def _migrate(self) -> int:
        def work(cursor: Cursor) -> int:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            cursor.execute(
                "CREATE TABLE IF NOT EXISTS ragdial_schema "
                "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied DOUBLE PRECISION NOT NULL)"
            )
            done = {row[0] for row in cursor.execute("SELECT version FROM ragdial_schema").fetchall()}
            newest = MIGRATIONS[-1][0]
            if done and max(done) > newest:
                raise RagdialError(
                    f"PostgreSQL at {self.shown}: session schema version {max(done)} is newer than this ragdial "
                    f"({newest}); upgrade ragdial"
                )
            for version, name, sql in MIGRATIONS:
                if version not in done:
                    cursor.execute(sql)
                    cursor.execute(
                        "INSERT INTO ragdial_schema (version, name, applied) VALUES (%s, %s, %s)",
                        (version, name, time.time()),
                    )
            return newest

        return self._run(work)

    # ---- sessions

    def create(self, session: Session, turns: Sequence[StoredTurn] = (), owner: str | None = None) -> Session:
        """Store a new session (and any turns it starts with, e.g. the history an OpenAI client sent)."""
        from psycopg.types.json import Jsonb

        now = time.time()

        def work(cursor: Cursor) -> None:
            exists = cursor.execute("SELECT 1 FROM ragdial_sessions WHERE id = %s", (session.id,)).fetchone()
            if exists is not None:
                raise SessionExistsError(f"session {session.id!r} exists already")
            cursor.execute(
                'INSERT INTO ragdial_sessions (id, "user", language, title, state, created, updated, owner) '
                "VALUES (%s, %s, %s, '', %s, %s, %s, %s)",
                (session.id, session.user, session.language, Jsonb(session.state), now, now, owner),
            )
            if turns:
                _append(cursor, session.id, turns, now)

        self._run(work)
        return session

    def exists(self, session_id: str, owner: str | None = None) -> bool:
        return self._run(lambda cursor: _owned(cursor, session_id, owner, lock=False), write=False)

    def get(self, session_id: str, owner: str | None = None) -> Session:
        """The session with its whole history; ``UnknownSessionError`` if there is none (for this owner)."""

        def work(cursor: Cursor) -> Session:
            row = cursor.execute(
                'SELECT "user", language, state, owner FROM ragdial_sessions WHERE id = %s', (session_id,)
            ).fetchone()
            if row is None or (owner is not None and row[3] != owner):
                raise UnknownSessionError(session_id)
            turns = [t.turn for t in _turns(cursor, session_id)]
            return Session(session_id, row[0], row[1], turns, dict(row[2]))

        return self._run(work, write=False)

    def turns(self, session_id: str, owner: str | None = None) -> builtins.list[StoredTurn]:
        def work(cursor: Cursor) -> builtins.list[StoredTurn]:
            if not _owned(cursor, session_id, owner, lock=False):
                raise UnknownSessionError(session_id)
            return _turns(cursor, session_id)

        return self._run(work, write=False)

    def summary(self, session_id: str, owner: str | None = None) -> SessionSummary:
        where, args = session_filter("%s", '"user"', session_id, owner)
        rows = self._run(lambda cursor: _summaries(cursor, where, args, 1), write=False)
        if not rows:
            raise UnknownSessionError(session_id)
        return rows[0]

    def list(
        self, limit: int = 100, owner: str | None = None, user: str | _Any | None = ANY
    ) -> builtins.list[SessionSummary]:
        """The most recently updated sessions first; only ``owner``'s when given, only those of profile ``user``
        when given (``None``: sessions without a profile)."""
        where, args = session_filter("%s", '"user"', owner=owner, user=user)
        return self._run(lambda cursor: _summaries(cursor, where, args, limit), write=False)

    def delete(self, session_id: str, owner: str | None = None) -> None:
        def work(cursor: Cursor) -> None:
            if not _owned(cursor, session_id, owner, lock=True):
                raise UnknownSessionError(session_id)
            cursor.execute("DELETE FROM ragdial_sessions WHERE id = %s", (session_id,))  # turns: ON DELETE CASCADE

        self._run(work)

    def append(
        self,
        session_id: str,
        turns: Sequence[StoredTurn],
        state: JSONObject | None = None,
        owner: str | None = None,
    ) -> int:
        """Append ``turns`` after the session's last turn in one transaction (with the session's new ``state``,
        if given); returns the new number of turns."""
        from psycopg.types.json import Jsonb

        def work(cursor: Cursor) -> int:
            if not _owned(cursor, session_id, owner, lock=True):  # the row lock serialises appends to this session
                raise UnknownSessionError(session_id)
            if state is not None:
                cursor.execute("UPDATE ragdial_sessions SET state = %s WHERE id = %s", (Jsonb(state), session_id))
            return _append(cursor, session_id, turns, time.time())

        return self._run(work)

    # ---- service

    def health(self) -> JSONDict:
        stats = self.pool.get_stats()
        ok = self._run(lambda cursor: cursor.execute("SELECT 1").fetchone() == (1,), write=False)
        return {
            "backend": "postgresql",
            "url": self.shown,
            "schema_version": self.version,
            "ok": ok,
            "pool": {key: stats.get(key, 0) for key in ("pool_size", "pool_available", "requests_waiting")},
        }

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> PostgresSessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---- SQL helpers (one cursor, inside a transaction)


def _owned(cursor: Cursor, session_id: str, owner: str | None, lock: bool) -> bool:
    sql = "SELECT owner FROM ragdial_sessions WHERE id = %s" + (" FOR UPDATE" if lock else "")
    row = cursor.execute(sql, (session_id,)).fetchone()
    return row is not None and (owner is None or row[0] == owner)


def _append(cursor: Cursor, session_id: str, turns: Sequence[StoredTurn], now: float) -> int:
    from psycopg.types.json import Jsonb

    start = cursor.execute(
        "SELECT COALESCE(MAX(idx) + 1, 0) FROM ragdial_turns WHERE session_id = %s", (session_id,)
    ).fetchone()
    index = int(start[0]) if start is not None else 0
    cursor.executemany(
        "INSERT INTO ragdial_turns (session_id, idx, speaker, text, knowledge, meta, created) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s)",
        [
            (
                session_id,
                index + offset,
                stored.turn.speaker.value,
                stored.turn.text,
                Jsonb([c.to_dict() for c in stored.knowledge]),
                Jsonb(stored.meta),
                now,
            )
            for offset, stored in enumerate(turns)
        ],
    )
    first_user = next((s.turn.text for s in turns if s.turn.speaker == Speaker.USER), "")
    cursor.execute(
        "UPDATE ragdial_sessions SET updated = %s, title = CASE WHEN title = '' THEN %s ELSE title END WHERE id = %s",
        (now, first_user.strip()[:TITLE_CHARS], session_id),
    )
    return index + len(turns)


def _turns(cursor: Cursor, session_id: str) -> list[StoredTurn]:
    rows = cursor.execute(
        "SELECT speaker, text, knowledge, meta, created FROM ragdial_turns WHERE session_id = %s ORDER BY idx",
        (session_id,),
    ).fetchall()
    return [StoredTurn.from_row(*row) for row in rows]


def _summaries(cursor: Cursor, where: str, args: Sequence[SQLValue], limit: int) -> list[SessionSummary]:
    rows = cursor.execute(
        'SELECT s.id, s."user", s.language, s.title, '
        "(SELECT COUNT(*) FROM ragdial_turns t WHERE t.session_id = s.id), s.created, s.updated "
        f"FROM ragdial_sessions s {where} ORDER BY s.updated DESC LIMIT %s",
        (*args, limit),
    ).fetchall()
    return [SessionSummary(*row) for row in rows]


def _first_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[0]
