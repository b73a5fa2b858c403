"""The service on PostgreSQL sessions: a session continues on another replica, a lost database gives 503 and no
half-written turn, an unreachable URI stops `ragdial serve` with one line, and two real worker processes share it."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from fastapi.testclient import TestClient

import service_doubles as doubles
from ragdial.pipeline import SystemConfig
from ragdial.serve.app import create_app
from ragdial.serve.service import Service, ServiceSettings
from service_server import ROOT, Server


def _client(url: str) -> TestClient:
    service = Service(ServiceSettings(SystemConfig.from_data(doubles.CONFIG), url))
    return TestClient(create_app(service), raise_server_exceptions=False)


def _ask(client: TestClient, text: str, **extra) -> httpx.Response:
    return client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": text}], **extra})


def test_a_session_continues_on_another_replica(postgres_url):
    first, second = _client(postgres_url), _client(postgres_url)  # two replicas, one database
    health = first.get("/healthz").json()
    assert health["sessions"]["backend"] == "postgresql" and health["sessions"]["ok"] is True
    assert health["sessions_db"] == postgres_url
    sid = _ask(first, "畅游套餐多少钱", profile="u1").json()["ragdial"]["session_id"]
    reply = _ask(second, "夜猫流量包呢", session_id=sid)
    assert reply.status_code == 200, reply.text
    session = first.get(f"/v1/sessions/{sid}").json()
    assert [m["content"] for m in session["messages"][::2]] == ["畅游套餐多少钱", "夜猫流量包呢"]
    assert session["user"] == "u1" and session["turns"] == 4


def _always_lose_the_connection(monkeypatch) -> None:
    from ragdial.serve.stores import postgres

    original = postgres._append

    def append(cursor, session_id, turns, now):
        original(cursor, session_id, turns[:1], now)  # half a turn written, then the connection is gone
        cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")

    monkeypatch.setattr(postgres, "_append", append)


def test_a_lost_database_connection_is_503_and_stores_nothing(postgres_url, monkeypatch):
    client = _client(postgres_url)
    sid = _ask(client, "畅游套餐多少钱", profile="u1").json()["ragdial"]["session_id"]
    _always_lose_the_connection(monkeypatch)
    failed = _ask(client, "夜猫流量包呢", session_id=sid)
    assert failed.status_code == 503
    assert failed.headers["Retry-After"] == "1"
    error = failed.json()["error"]
    assert error["code"] == 503 and error["message"].startswith("session store unavailable: PostgreSQL at ")
    streamed = _ask(client, "夜猫流量包呢", session_id=sid, stream=True)
    assert streamed.status_code == 200  # the stream had begun: the error comes in-band, before [DONE]
    assert '"code": 503' in streamed.text and streamed.text.rstrip().endswith("data: [DONE]")
    monkeypatch.undo()
    session = client.get(f"/v1/sessions/{sid}").json()
    assert [m["content"] for m in session["messages"][::2]] == ["畅游套餐多少钱"]  # no half turn, nothing doubled
    assert _ask(client, "夜猫流量包呢", session_id=sid).status_code == 200


def test_serve_with_an_unreachable_database_fails_with_one_line(tmp_path):
    command = [sys.executable, "-c", "from ragdial.cli import main; main()", "serve", "--workers", "2"]
    command += ["--db", "postgresql://ragdial:pw@127.0.0.1:9/ragdial", "--port", "9"]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(ROOT / "src"), "HOME": str(tmp_path)},
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: cannot reach PostgreSQL at postgresql://ragdial:***@127.0.0.1:9/ragdial: ")


SESSIONS, TURNS = 12, 6


def _conversation(server: Server, number: int) -> tuple[str, list[str]]:
    texts = []
    with httpx.Client(timeout=60) as client:
        sid = client.post(f"{server.url}/v1/sessions", json={"profile": "u1"}).json()["id"]
        for turn in range(TURNS):
            text = f"会话{number} 第{turn}轮 套餐"
            body = {"messages": [{"role": "user", "content": text}], "session_id": sid}
            # a new connection per turn, so the turns of one session land on either worker
            response = httpx.post(f"{server.url}/v1/chat/completions", json=body, timeout=60)
            assert response.status_code == 200, response.text
            texts.append(text)
    return sid, texts


@pytest.mark.slow
def test_two_workers_share_postgres_sessions(tmp_path, postgres_url):
    server = Server(tmp_path, doubles.CONFIG, workers=2, db=postgres_url).start()
    try:
        with ThreadPoolExecutor(SESSIONS) as pool:
            results = list(pool.map(lambda n: _conversation(server, n), range(SESSIONS)))
        for sid, texts in results:
            session = httpx.get(f"{server.url}/v1/sessions/{sid}", timeout=60).json()
            messages = session["messages"]
            assert [m["content"] for m in messages[::2]] == texts  # every turn once, in order
            assert all(m["content"].startswith(f"[{q}]") for q, m in zip(texts, messages[1::2], strict=True))
    finally:
        server.stop()


def test_healthz_is_503_while_the_database_refuses_connections(postgres_url, postgres_server):
    import psycopg

    client = _client(postgres_url)
    assert client.get("/healthz").status_code == 200
    name = postgres_url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_server, autocommit=True) as admin:  # the database goes away for a while
        admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false')
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
    try:
        down = client.get("/healthz")
        assert down.status_code == 503 and down.headers["Retry-After"] == "1"
        assert name in down.json()["error"]["message"]
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true')
    assert client.get("/healthz").status_code == 200  # the pool reconnects by itself
