"""The SQLite session store: WAL mode, whole turns appended in order, concurrent writers, deletion."""

from __future__ import annotations

import multiprocessing
import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest

from ragdial.pipeline import Citation, Session
from ragdial.schema import Knowledge, SourceKind, Speaker, Turn
from ragdial.serve.store import SessionStore, StoredTurn, UnknownSessionError


def _pair(tag: str) -> list[StoredTurn]:
    cited = [Citation(Knowledge("p1", "plan text", SourceKind.PRODUCT), 2.5)]
    return [StoredTurn(Turn(Speaker.USER, f"q {tag}")), StoredTurn(Turn(Speaker.SYSTEM, f"a {tag}"), cited, {"n": tag})]


def test_store_is_wal_and_round_trips_turns_with_citations(tmp_path):
    store = SessionStore(tmp_path / "s.sqlite")
    assert store.journal_mode() == "wal"
    session = store.create(Session.new("u1", "zh"))
    assert store.append(session.id, _pair("0")) == 2
    loaded = store.get(session.id)
    assert (loaded.user, loaded.language) == ("u1", "zh")
    assert [t.text for t in loaded.history] == ["q 0", "a 0"]
    assert loaded.history[1].knowledge_ids == ["p1"]
    stored = store.turns(session.id)
    assert stored[1].knowledge[0] == Citation(Knowledge("p1", "plan text", SourceKind.PRODUCT), 2.5)
    assert stored[1].to_message()["knowledge"] == [
        {"id": "p1", "source": "product", "text": "plan text", "score": 2.5, "scope": ""}
    ]
    assert stored[1].meta == {"n": "0"}
    summary = store.summary(session.id)
    assert (summary.title, summary.turns) == ("q 0", 2)
    # a second store on the same file (another process after a restart) sees the same history
    assert [t.text for t in SessionStore(tmp_path / "s.sqlite").get(session.id).history] == ["q 0", "a 0"]


def test_unknown_and_deleted_sessions(tmp_path):
    store = SessionStore(tmp_path / "s.sqlite")
    with pytest.raises(UnknownSessionError):
        store.get("nope")
    with pytest.raises(UnknownSessionError):
        store.append("nope", _pair("x"))
    session = store.create(Session.new(None, "en"))
    store.append(session.id, _pair("1"))
    store.delete(session.id)
    assert not store.exists(session.id)
    with pytest.raises(UnknownSessionError):
        store.delete(session.id)
    with pytest.raises(UnknownSessionError):
        store.turns(session.id)
    with pytest.raises(sqlite3.IntegrityError):  # ids are unique
        other = store.create(Session.new(None, "en"))
        store.create(Session(other.id, None, "en"))


def test_list_orders_by_last_update(tmp_path):
    store = SessionStore(tmp_path / "s.sqlite")
    first, second = store.create(Session.new(None, "zh")), store.create(Session.new(None, "zh"))
    store.append(first.id, _pair("late"))
    assert [s.id for s in store.list()][:2] == [first.id, second.id]
    assert len(store.list(limit=1)) == 1


def test_concurrent_threads_never_interleave_half_a_turn(tmp_path):
    store = SessionStore(tmp_path / "s.sqlite")
    session = store.create(Session.new(None, "zh"))
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: store.append(session.id, _pair(str(n))), range(40)))
    texts = [t.text for t in store.get(session.id).history]
    assert len(texts) == 80
    for user, system in zip(texts[::2], texts[1::2], strict=True):
        assert user.startswith("q ") and system == "a " + user[2:]


def _writer(path: str, session_id: str, worker: int) -> None:
    store = SessionStore(path)
    for n in range(15):
        store.append(session_id, _pair(f"{worker}-{n}"))


def test_several_processes_share_one_store(tmp_path):
    path = str(tmp_path / "s.sqlite")
    session = SessionStore(path).create(Session.new(None, "zh"))
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(path, session.id, w)) for w in range(3)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(120)
        assert process.exitcode == 0
    texts = [t.text for t in SessionStore(path).get(session.id).history]
    assert len(texts) == 90
    for worker in range(3):  # each writer's turns are complete and in its own order
        mine = [t for t in texts[::2] if t.startswith(f"q {worker}-")]
        assert mine == [f"q {worker}-{n}" for n in range(15)]
    assert all(a == "a " + q[2:] for q, a in zip(texts[::2], texts[1::2], strict=True))


def test_memory_store_works_across_threads():
    store = SessionStore(":memory:")
    session = store.create(Session.new(None, "zh"))
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda n: store.append(session.id, _pair(str(n))), range(8)))
    assert len(store.get(session.id).history) == 16


def test_session_state_is_stored_with_its_turns(tmp_path):
    store = SessionStore(tmp_path / "s.sqlite")
    session = Session.new("u1", "zh")
    session.state = {"task": {"domain": "train", "slots": {"from": "哈尔滨"}}}
    store.create(session)
    assert store.get(session.id).state == session.state
    store.append(session.id, _pair("0"), {"task": {"domain": "train", "slots": {"from": "哈尔滨", "to": "北京"}}})
    assert store.get(session.id).state["task"]["slots"] == {"from": "哈尔滨", "to": "北京"}
    store.append(session.id, _pair("1"))  # no new state: the stored one stays
    assert store.get(session.id).state["task"]["slots"]["to"] == "北京"
