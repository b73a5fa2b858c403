"""The session stores, SQLite and PostgreSQL, against the same guarantees: whole turns appended in order, concurrent
writers (threads and processes) serialised, kill -9 of a writer loses no completed turn, sessions private to their
owner, the schema migrated by versioned idempotent steps. PostgreSQL runs on the server named by
``$RAGDIAL_TEST_POSTGRES`` (one new database per test); skipped where none is reachable, failed under CI."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ragdial.pipeline import Citation, Session
from ragdial.schema import Knowledge, SourceKind, Speaker, Turn
from ragdial.serve.stores import (
    SessionExistsError,
    SessionStore,
    StoredTurn,
    StoreUnavailableError,
    UnknownSessionError,
    open_store,
)

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a store lives: a SQLite file in this test's folder, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "s.sqlite")
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def store(target: str):
    opened = open_store(target)
    yield opened
    opened.close()


def _pair(tag: str) -> list[StoredTurn]:
    cited = [Citation(Knowledge("p1", "plan text", SourceKind.PRODUCT), 2.5)]
    return [StoredTurn(Turn(Speaker.USER, f"q {tag}")), StoredTurn(Turn(Speaker.SYSTEM, f"a {tag}"), cited, {"n": tag})]


def _assert_whole_turns(texts: list[str]) -> None:
    assert len(texts) % 2 == 0, texts[-3:]
    for user, system in zip(texts[::2], texts[1::2], strict=True):
        assert user.startswith("q ") and system == "a " + user[2:], (user, system)


def test_both_backends_keep_the_interface(store):
    assert isinstance(store, SessionStore)
    health = store.health()
    assert health["backend"] in ("sqlite", "postgresql")
    assert health["schema_version"] >= 2
    if health["backend"] == "sqlite":
        assert health["journal_mode"] == "wal"


def test_round_trips_turns_with_citations_and_state(store, target):
    session = Session.new("u1", "zh")
    session.state = {"task": {"domain": "train", "slots": {"from": "哈尔滨"}}}
    store.create(session)
    assert store.append(session.id, _pair("0")) == 2
    loaded = store.get(session.id)
    assert (loaded.user, loaded.language, loaded.state) == ("u1", "zh", session.state)
    assert [t.text for t in loaded.history] == ["q 0", "a 0"]
    assert loaded.history[1].knowledge_ids == ["p1"]
    stored = store.turns(session.id)
    assert stored[1].knowledge[0] == Citation(Knowledge("p1", "plan text", SourceKind.PRODUCT), 2.5)
    assert stored[1].to_message()["knowledge"] == [
        {"id": "p1", "source": "product", "text": "plan text", "score": 2.5, "scope": ""}
    ]
    assert stored[1].meta == {"n": "0"}
    summary = store.summary(session.id)
    assert (summary.title, summary.turns, summary.user) == ("q 0", 2, "u1")
    store.append(session.id, _pair("1"), {"task": {"domain": "train", "slots": {"to": "北京"}}})
    store.append(session.id, _pair("2"))  # no new state: the stored one stays
    # a second store on the same database (another worker, or after a restart) sees the same history
    other = open_store(target)
    assert [t.text for t in other.get(session.id).history] == ["q 0", "a 0", "q 1", "a 1", "q 2", "a 2"]
    assert other.get(session.id).state == {"task": {"domain": "train", "slots": {"to": "北京"}}}
    other.close()


def test_seeded_turns_are_stored_with_the_new_session(store):
    session = store.create(Session.new(None, "en"), _pair("seed"))
    assert [t.text for t in store.get(session.id).history] == ["q seed", "a seed"]
    assert store.append(session.id, _pair("next")) == 4


def test_unknown_deleted_and_duplicate_sessions(store):
    with pytest.raises(UnknownSessionError):
        store.get("nope")
    with pytest.raises(UnknownSessionError):
        store.append("nope", _pair("x"))
    session = store.create(Session.new(None, "en"))
    store.append(session.id, _pair("1"))
    store.delete(session.id)
    assert not store.exists(session.id)
    for call in (store.delete, store.turns, store.summary, store.get):
        with pytest.raises(UnknownSessionError):
            call(session.id)
    kept = store.create(Session.new(None, "en"))
    with pytest.raises(SessionExistsError):
        store.create(Session(kept.id, None, "en"))
    assert store.exists(kept.id)


def test_list_orders_by_last_update(store):
    first, second = store.create(Session.new(None, "zh")), store.create(Session.new(None, "zh"))
    store.append(first.id, _pair("late"))
    assert [s.id for s in store.list()][:2] == [first.id, second.id]
    assert len(store.list(limit=1)) == 1


def test_sessions_are_private_to_their_owner(store):
    mine = store.create(Session.new("demo-u1", "zh"), owner="key:a")
    theirs = store.create(Session.new("demo-u2", "zh"), _pair("secret"), owner="key:b")
    store.create(Session.new(None, "zh"))  # no owner: seen only by calls that name none
    assert [s.id for s in store.list(owner="key:a")] == [mine.id]
    assert [s.id for s in store.list(owner="key:b")] == [theirs.id]
    assert len(store.list()) == 3
    assert [s.id for s in store.list(user="demo-u2")] == [theirs.id]  # by profile
    assert [s.id for s in store.list(owner="key:a", user="demo-u2")] == []
    assert [s.user for s in store.list(user=None)] == [None]  # sessions without a profile
    for call in (store.get, store.turns, store.summary, store.delete):
        with pytest.raises(UnknownSessionError):
            call(theirs.id, owner="key:a")
    with pytest.raises(UnknownSessionError):
        store.append(theirs.id, _pair("intrusion"), owner="key:a")
    assert not store.exists(theirs.id, owner="key:a")
    assert [t.text for t in store.get(theirs.id, owner="key:b").history] == ["q secret", "a secret"]
    assert store.append(mine.id, _pair("mine"), owner="key:a") == 2
    store.delete(theirs.id, owner="key:b")
    assert not store.exists(theirs.id)


def test_concurrent_threads_never_interleave_half_a_turn(store):
    session = store.create(Session.new(None, "zh"))
    with ThreadPoolExecutor(8) as pool:
        counts = list(pool.map(lambda n: store.append(session.id, _pair(str(n))), range(40)))
    assert sorted(counts) == list(range(2, 81, 2))  # each append got its own two indices
    texts = [t.text for t in store.get(session.id).history]
    assert len(texts) == 80
    _assert_whole_turns(texts)
    assert sorted(texts[::2]) == sorted(f"q {n}" for n in range(40))


def _writer(target: str, session_id: str, worker: int, count: int) -> None:
    store = open_store(target)
    for n in range(count):
        store.append(session_id, _pair(f"{worker}-{n}"))
    store.close()


def test_two_processes_append_to_one_session(store, target):
    session = store.create(Session.new(None, "zh"))
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(target, session.id, w, 15)) for w in range(2)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(180)
        assert process.exitcode == 0
    texts = [t.text for t in store.get(session.id).history]
    assert len(texts) == 60
    _assert_whole_turns(texts)
    for worker in range(2):  # each writer's turns are complete and in its own order
        mine = [t for t in texts[::2] if t.startswith(f"q {worker}-")]
        assert mine == [f"q {worker}-{n}" for n in range(15)]


def _endless_writer(target: str, session_id: str, progress: str) -> None:
    """Append turns until killed; after each completed append, write how many turns are stored."""
    store = open_store(target)
    with open(progress, "a", encoding="utf-8") as out:
        for n in range(100_000):
            stored = store.append(session_id, _pair(str(n)), {"n": n})
            out.write(f"{stored}\n")
            out.flush()


def test_kill_9_of_a_writer_loses_no_completed_turn(store, target, tmp_path):
    session = store.create(Session.new(None, "zh"))
    progress = tmp_path / "progress.txt"
    process = multiprocessing.get_context("spawn").Process(
        target=_endless_writer, args=(target, session.id, str(progress))
    )
    process.start()
    deadline = time.monotonic() + 180  # a generous bound on start-up, not a timing assertion
    while time.monotonic() < deadline and process.is_alive():
        if progress.exists() and len(progress.read_text().split()) >= 12:
            break
        time.sleep(0.05)
    assert process.is_alive(), "the writer ended before it was killed"
    os.kill(process.pid, signal.SIGKILL)
    process.join(30)
    assert process.exitcode == -signal.SIGKILL
    completed = max(int(line) for line in progress.read_text().split())
    after = open_store(target)  # a new process's view after the crash
    texts = [t.text for t in after.get(session.id).history]
    assert len(texts) >= completed  # every append reported complete is there
    _assert_whole_turns(texts)  # and no half turn
    assert texts[::2] == [f"q {n}" for n in range(len(texts) // 2)]  # nothing lost in between
    assert after.get(session.id).state == {"n": len(texts) // 2 - 1}  # the state of the last stored turn
    assert after.append(session.id, _pair("after")) == len(texts) + 2  # and the session goes on
    after.close()


def test_migrations_are_versioned_and_idempotent(target):
    first = open_store(target)
    version = first.health()["schema_version"]
    session = first.create(Session.new(None, "zh"), _pair("0"))
    first.close()
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target, autocommit=True) as db:
            assert [r[0] for r in db.execute("SELECT version FROM ragdial_schema ORDER BY version")] == list(
                range(1, version + 1)
            )
            db.execute("DELETE FROM ragdial_schema")  # forget them all: every step runs again on existing tables
    else:
        with sqlite3.connect(target) as db:
            assert [r[0] for r in db.execute("SELECT version FROM ragdial_schema ORDER BY version")] == list(
                range(1, version + 1)
            )
            db.execute("DELETE FROM ragdial_schema")
    again = open_store(target)
    assert [t.text for t in again.get(session.id).history] == ["q 0", "a 0"]
    assert again.health()["schema_version"] == version
    again.close()


def test_sqlite_file_from_before_versioning_is_migrated(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:  # the schema of the first release: no state, no owner, no version table
        db.executescript(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, user TEXT, language TEXT NOT NULL, "
            "title TEXT NOT NULL DEFAULT '', created REAL NOT NULL, updated REAL NOT NULL);"
            "CREATE TABLE turns (session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, "
            "idx INTEGER NOT NULL, speaker TEXT NOT NULL, text TEXT NOT NULL, knowledge TEXT NOT NULL DEFAULT '[]', "
            "meta TEXT NOT NULL DEFAULT '{}', created REAL NOT NULL, PRIMARY KEY (session_id, idx));"
            "INSERT INTO sessions VALUES ('old', 'u1', 'zh', 'hi', 1.0, 1.0);"
            "INSERT INTO turns VALUES ('old', 0, 'user', 'hi', '[]', '{}', 1.0);"
        )
    store = open_store(path)
    assert store.get("old").state == {}
    assert [s.id for s in store.list(owner=None)] == ["old"]
    assert store.append("old", _pair("1")) == 3


def test_newer_schema_is_refused(target):
    open_store(target).close()
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target, autocommit=True) as db:
            db.execute("INSERT INTO ragdial_schema VALUES (999, 'from the future', 0)")
    else:
        with sqlite3.connect(target) as db:
            db.execute("INSERT INTO ragdial_schema VALUES (999, 'from the future', 0)")
    with pytest.raises(Exception, match="999 is newer"):
        open_store(target)


# ---- PostgreSQL only: an unreachable server, a connection lost during a request


def test_unreachable_postgres_fails_at_start_with_one_line():
    with pytest.raises(StoreUnavailableError) as failure:
        open_store("postgresql://ragdial:s3cret@127.0.0.1:9/ragdial")
    message = str(failure.value)
    assert "\n" not in message
    assert message.startswith("cannot reach PostgreSQL at postgresql://ragdial:***@127.0.0.1:9/ragdial: ")
    assert "s3cret" not in message


def _kill_own_connection(original, kills: list[int]):
    """Wrap the store's turn insert: while ``kills`` has budget, the server ends this connection right after the
    first turn of a pair was inserted (a lost connection in the middle of a write)."""

    def append(cursor, session_id, turns, now):
        if kills[0] > 0:
            kills[0] -= 1
            original(cursor, session_id, turns[:1], now)
            cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        return original(cursor, session_id, turns, now)

    return append


def test_lost_connection_mid_write_is_retried_and_never_half_written(postgres_url, monkeypatch):
    from ragdial.serve.stores import postgres

    store = open_store(postgres_url)
    session = store.create(Session.new(None, "zh"))
    original = postgres._append
    monkeypatch.setattr(postgres, "_append", _kill_own_connection(original, [1]))
    assert store.append(session.id, _pair("0")) == 2  # the pool gave a new connection and the write ran again
    monkeypatch.setattr(postgres, "_append", _kill_own_connection(original, [2]))
    with pytest.raises(StoreUnavailableError, match="PostgreSQL at postgresql://"):
        store.append(session.id, _pair("1"))  # lost twice: given up, nothing of it written
    monkeypatch.setattr(postgres, "_append", original)
    assert [t.text for t in store.get(session.id).history] == ["q 0", "a 0"]
    assert store.append(session.id, _pair("2")) == 4
    store.close()


def test_connections_ended_by_the_server_are_replaced(postgres_url, postgres_server):
    import psycopg

    store = open_store(postgres_url)
    session = store.create(Session.new(None, "zh"))
    name = postgres_url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_server, autocommit=True) as admin:  # e.g. a server restart or a failover
        ended = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        ).fetchall()
    assert ended and all(row[0] for row in ended)
    assert store.append(session.id, _pair("0")) == 2
    assert store.health()["ok"] is True
    store.close()
