"""The service as deployed: real uvicorn processes on 127.0.0.1, concurrent sessions, a crash and a restart."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

import service_doubles as doubles
from service_server import Server

SESSIONS, TURNS = 20, 10


def _turn(client: httpx.Client, server: Server, sid: str, text: str, stream: bool) -> str:
    body = {"messages": [{"role": "user", "content": text}], "session_id": sid, "stream": stream}
    if not stream:
        response = client.post(f"{server.url}/v1/chat/completions", json=body, headers=server.headers())
        assert response.status_code == 200, response.text
        return response.json()["choices"][0]["message"]["content"]
    pieces = []
    with client.stream("POST", f"{server.url}/v1/chat/completions", json=body, headers=server.headers()) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            assert "error" not in chunk, chunk
            pieces.append(chunk["choices"][0]["delta"].get("content", ""))
    return "".join(pieces).strip()


def _conversation(server: Server, number: int) -> tuple[str, list[str]]:
    with httpx.Client(timeout=60) as client:
        profile = "u1" if number % 2 else "u2"
        created = client.post(f"{server.url}/v1/sessions", json={"profile": profile}, headers=server.headers())
        sid = created.json()["id"]
        replies = [
            _turn(client, server, sid, f"会话{number} 第{turn}轮 套餐", stream=turn % 2 == 0) for turn in range(TURNS)
        ]
    return sid, replies


@pytest.mark.slow
def test_20_concurrent_sessions_of_10_turns_over_two_workers(tmp_path):
    server = Server(tmp_path, doubles.CONFIG, workers=2, api_key="k").start()
    try:
        log = server.wait_for_log(f"ragdial is ready: open {server.url}/")
        assert log.count("ragdial is ready") == 1  # once, by the serving process, not once per worker
        with ThreadPoolExecutor(SESSIONS) as pool:
            results = list(pool.map(lambda n: _conversation(server, n), range(SESSIONS)))
        with httpx.Client(timeout=60) as client:
            for number, (sid, replies) in enumerate(results):
                session = client.get(f"{server.url}/v1/sessions/{sid}", headers=server.headers()).json()
                messages = session["messages"]
                assert session["turns"] == 2 * TURNS and len(messages) == 2 * TURNS
                assert [m["role"] for m in messages] == ["user", "assistant"] * TURNS
                assert [m["content"] for m in messages[::2]] == [f"会话{number} 第{t}轮 套餐" for t in range(TURNS)]
                assert [m["content"] for m in messages[1::2]] == replies
                assert all(r.startswith(f"[会话{number} 第{t}轮 套餐]") for t, r in enumerate(replies))
            listed = client.get(f"{server.url}/v1/sessions", headers=server.headers()).json()["sessions"]
            assert {s["id"] for s in listed} >= {sid for sid, _ in results}
    finally:
        server.stop()


@pytest.mark.slow
def test_history_survives_killing_the_server_mid_session(tmp_path):
    server = Server(tmp_path, doubles.CONFIG).start()
    with httpx.Client(timeout=60) as client:
        sid = client.post(f"{server.url}/v1/sessions", json={"profile": "u1"}).json()["id"]
        for turn in range(3):
            _turn(client, server, sid, f"问题{turn} 畅游套餐", stream=bool(turn % 2))
        # a request in flight when the server dies: the stream breaks, the stored history does not
        with client.stream(
            "POST",
            f"{server.url}/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "问题3 畅游套餐"}], "session_id": sid, "stream": True},
        ) as response:
            next(response.iter_lines())
            server.kill()
    assert server.process.returncode is not None
    restarted = Server(tmp_path, doubles.CONFIG, db=server.db).start()
    try:
        with httpx.Client(timeout=60) as client:
            session = client.get(f"{restarted.url}/v1/sessions/{sid}").json()
            texts = [m["content"] for m in session["messages"]]
            assert len(texts) in (6, 8)  # the in-flight turn is stored whole or not at all
            assert texts[:6:2] == [f"问题{t} 畅游套餐" for t in range(3)]
            assert all(texts[i + 1].startswith(f"[{texts[i]}]") for i in range(0, len(texts), 2))
            # no half-written turn: users and replies alternate, every reply is complete (not marked interrupted)
            assert [m["role"] for m in session["messages"]] == ["user", "assistant"] * (len(texts) // 2)
            assert not any(m["meta"].get("interrupted") for m in session["messages"][1::2])
            assert all("decision" in m["meta"] for m in session["messages"][1::2])
            assert session["user"] == "u1"
            reply = _turn(client, restarted, sid, "问题4 畅游套餐", stream=False)
            assert reply.startswith("[问题4 畅游套餐]")
            assert client.get(f"{restarted.url}/v1/sessions/{sid}").json()["turns"] == len(texts) + 2
    finally:
        restarted.stop()


@pytest.mark.slow
def test_a_client_that_drops_a_stream_does_not_freeze_the_service(tmp_path):
    """A slow one-at-a-time generator (like llama.cpp): a client reads the first piece and disconnects; the turn's
    lock is released when the server closes the stream, so the next request is answered (the double waits at most
    20 s for its lock, then fails the request instead of hanging)."""
    config = {**doubles.CONFIG, "generator": "service_doubles:locked_generator"}
    server = Server(tmp_path, config).start()
    try:
        body = {"messages": [{"role": "user", "content": "畅游套餐多少钱"}], "stream": True}
        with httpx.Client(timeout=60) as client:
            with client.stream("POST", f"{server.url}/v1/chat/completions", json=body) as response:
                lines = response.iter_lines()
                assert any('"content": "w0 "' in line for line in lines if line.startswith("data: "))
            # the connection is closed here, 39 pieces before the end
            again = {**body, "stream": False, "messages": [{"role": "user", "content": "夜猫流量包多少钱"}]}
            response = client.post(f"{server.url}/v1/chat/completions", json=again)
            assert response.status_code == 200, response.text
            assert response.json()["choices"][0]["message"]["content"].startswith("w0 w1")
    finally:
        server.stop()
