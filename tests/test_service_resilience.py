"""The service against real clients (uvicorn on 127.0.0.1): clients that disconnect mid-stream, a full queue, the
time limit, the stop endpoint, private sessions, a server stopped or killed during a stream."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import threading
import time

import httpx
import pytest

import service_doubles as doubles
from service_server import Server

pytestmark = pytest.mark.slow

TEMPLATE = {"knowledge": "demo", "retriever": {"name": "bm25", "query": "last_user"}, "generator": "template"}
SLOW = {**doubles.CONFIG, "generator": {"name": "service_doubles:slow_generator", "delay": 0.1, "words": 300}}


def _body(text: str, **fields) -> dict:
    return {"messages": [{"role": "user", "content": text}], **fields}


def _events(response: httpx.Response):
    """The JSON events of a server-sent event stream (until [DONE])."""
    for line in response.iter_lines():
        if line.startswith("data: ") and line != "data: [DONE]":
            yield json.loads(line[6:])


def _drop_after(server: Server, body: dict, pieces: int, headers: dict | None = None) -> dict:
    """Stream ``body``, read ``pieces`` text pieces, close the connection; the first chunk."""
    first = None
    with (
        httpx.Client(timeout=30) as client,
        client.stream(
            "POST", f"{server.url}/v1/chat/completions", json={**body, "stream": True}, headers=headers or {}
        ) as response,
    ):
        assert response.status_code == 200, response.read()
        seen = 0
        for event in _events(response):
            first = first or event
            if event["choices"][0]["delta"].get("content"):
                seen += 1
            if seen >= pieces:
                break
    return first


def _quick_turn(server: Server, text: str, **fields) -> httpx.Response:
    """A non-streamed turn that must be answered within 5 s (the client's timeout)."""
    return httpx.post(f"{server.url}/v1/chat/completions", json=_body(text, **fields), timeout=5)


@pytest.mark.parametrize(("config", "pieces", "fields"), [(TEMPLATE, 1, {}), (SLOW, 2, {"max_tokens": 5})])
def test_20_dropped_streams_never_freeze_the_next_request(tmp_path, config, pieces, fields):
    server = Server(tmp_path, config).start()
    try:
        for n in range(20):
            _drop_after(server, _body(f"国际漫游怎么开通 {n}", profile=None), pieces)
            response = _quick_turn(server, f"畅游套餐多少钱 {n}", **fields)
            assert response.status_code == 200, response.text
            assert response.json()["choices"][0]["message"]["content"]
        with httpx.Client(timeout=30) as client:
            sessions = client.get(f"{server.url}/v1/sessions", params={"limit": 100}).json()["sessions"]
            assert all(s["turns"] == 2 for s in sessions)  # no empty session, no half turn
            if config is SLOW:  # each dropped stream had begun: its partial reply is kept, marked
                dropped = [s for s in sessions if s["title"].startswith("国际漫游")]
                assert len(dropped) == 20
                reply = client.get(f"{server.url}/v1/sessions/{dropped[0]['id']}").json()["messages"][1]
                assert reply["meta"]["interrupted"] == "disconnected" and reply["content"].startswith("w0 w1")
            health = client.get(f"{server.url}/healthz").json()
            assert health["status"] == "ok" and health["queue"]["running"] == 0
    finally:
        server.stop()


def test_a_full_queue_answers_503_with_retry_after_and_healthz_shows_it(tmp_path):
    args = ("--concurrency", "1", "--queue-limit", "1", "--queue-wait", "60")
    server = Server(tmp_path, SLOW, args=args).start()
    started = threading.Event()
    results: list[int] = []

    def long_turn(text: str) -> None:
        with httpx.Client(timeout=60) as client:
            body = _body(text, stream=True, max_tokens=30)
            with client.stream("POST", f"{server.url}/v1/chat/completions", json=body) as response:
                results.append(response.status_code)
                for _ in _events(response):
                    started.set()

    try:
        threads = [threading.Thread(target=long_turn, args=(f"畅游套餐 {n}",)) for n in range(2)]
        threads[0].start()
        assert started.wait(30)
        threads[1].start()  # waits in line
        with httpx.Client(timeout=30) as client:
            for _ in range(100):
                health = client.get(f"{server.url}/healthz")
                if health.json()["queue"]["waiting"] == 1:
                    break
                time.sleep(0.05)
            assert health.status_code == 503 and health.json()["status"] == "saturated"
            refused = client.post(f"{server.url}/v1/chat/completions", json=_body("夜猫流量包"), timeout=5)
            assert refused.status_code == 503
            assert int(refused.headers["Retry-After"]) >= 1
            error = refused.json()["error"]
            assert error["param"] == "queue_full" and "1 waiting" in error["message"]
            metrics = client.get(f"{server.url}/metrics")
            assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")
            assert re.search(r'ragdial_generation_refused_total\{worker="\d+",reason="queue_full"\} 1', metrics.text)
            assert re.search(r'ragdial_generation_waiting\{worker="\d+"\} 1', metrics.text)
        for thread in threads:
            thread.join(60)
        assert results == [200, 200]
        health = httpx.get(f"{server.url}/healthz", timeout=10)
        assert health.status_code == 200 and health.json()["queue"]["admitted"] == 2
    finally:
        server.stop()


def test_a_wait_over_the_limit_is_503_and_a_turn_over_the_time_limit_is_stopped(tmp_path):
    args = ("--queue-wait", "0.5", "--time-limit", "3")
    server = Server(tmp_path, SLOW, args=args).start()
    try:
        with httpx.Client(timeout=30) as client:
            body = _body("畅游套餐多少钱", stream=True, profile="u1")
            with client.stream("POST", f"{server.url}/v1/chat/completions", json=body) as response:
                events = _events(response)
                first = next(events)
                waited = client.post(f"{server.url}/v1/chat/completions", json=_body("夜猫"), timeout=10)
                assert waited.status_code == 503 and waited.json()["error"]["param"] == "wait_timeout"
                rest = list(events)
            error = rest[-1]["error"]
            assert error["code"] == 504 and "time limit of 3 s" in error["message"]
            assert "stored marked interrupted" in error["message"]
            session = client.get(f"{server.url}/v1/sessions/{first['ragdial']['session_id']}").json()
            reply = session["messages"][1]
            assert reply["meta"]["interrupted"] == "timeout" and reply["content"].startswith("w0")
            assert _quick_turn(server, "流量", max_tokens=3).status_code == 200
    finally:
        server.stop()


def test_the_stop_endpoint_ends_a_stream_with_two_workers(tmp_path):
    """The kernel decides which worker accepts the stop (here mostly the streaming one); the hand-over to the
    other worker is tested in test_service_turns.py."""
    server = Server(tmp_path, SLOW, workers=2, api_key="ka,kb").start()
    try:
        with httpx.Client(timeout=30) as client:
            for n in range(4):
                body = _body(f"畅游套餐 {n}", stream=True)
                with client.stream(
                    "POST", f"{server.url}/v1/chat/completions", json=body, headers=server.headers("ka")
                ) as response:
                    events = _events(response)
                    first = next(events)
                    stream_id, sid = first["id"], first["ragdial"]["session_id"]
                    assert next(events)["choices"][0]["delta"]["content"] == "w0 "
                    url = f"{server.url}/v1/chat/completions/{stream_id}/stop"
                    assert client.post(url, headers=server.headers("kb")).status_code == 404  # not kb's
                    stopped = client.post(url, headers=server.headers("ka"))
                    assert stopped.status_code == 200 and stopped.json()["stopped"] and stopped.json()["ended"]
                    rest = list(events)
                final = rest[-1]
                assert final["choices"][0]["finish_reason"] == "stop" and final["ragdial"]["interrupted"] == "stopped"
                assert final["ragdial"]["stored"] is True
                again = client.post(url, headers=server.headers("ka"))
                assert again.status_code == 404 and "no running completion" in again.json()["error"]["message"]
                reply = client.get(f"{server.url}/v1/sessions/{sid}", headers=server.headers("ka")).json()["messages"]
                assert reply[1]["meta"]["interrupted"] == "stopped" and len(reply) == 2
            unknown = client.post(
                f"{server.url}/v1/chat/completions/chatcmpl-{'0' * 24}/stop", headers=server.headers("ka")
            )
            assert unknown.status_code == 404
    finally:
        server.stop()


def test_sessions_are_private_to_their_key_and_listed_per_profile(tmp_path):
    server = Server(tmp_path, doubles.CONFIG, api_key="ka,kb").start()
    try:
        with httpx.Client(timeout=30) as client:

            def ask(key: str, text: str, **fields) -> httpx.Response:
                return client.post(
                    f"{server.url}/v1/chat/completions", json=_body(text, **fields), headers=server.headers(key)
                )

            a1 = ask("ka", "畅游套餐 甲", profile="u1").json()["ragdial"]["session_id"]
            a2 = ask("ka", "夜猫 乙", profile="u2").json()["ragdial"]["session_id"]
            b1 = ask("kb", "余额 丙", profile="u1").json()["ragdial"]["session_id"]

            def listed(key: str, **params) -> list[str]:
                response = client.get(f"{server.url}/v1/sessions", params=params, headers=server.headers(key))
                return [s["id"] for s in response.json()["sessions"]]

            assert sorted(listed("ka")) == sorted([a1, a2]) and listed("kb") == [b1]
            assert listed("ka", profile="u1") == [a1] and listed("ka", profile="u2") == [a2]
            assert listed("ka", profile="") == []
            for method in ("GET", "DELETE"):
                response = client.request(method, f"{server.url}/v1/sessions/{a1}", headers=server.headers("kb"))
                assert response.status_code == 404 and "unknown session" in response.json()["error"]["message"]
            assert ask("kb", "继续", session_id=a1).status_code == 404
            retrieve = client.post(
                f"{server.url}/v1/retrieve", json={"query": "套餐", "session_id": a1}, headers=server.headers("kb")
            )
            assert retrieve.status_code == 404
            # the same key, another profile: 404 too
            response = client.get(f"{server.url}/v1/sessions/{a1}?profile=u2", headers=server.headers("ka"))
            assert response.status_code == 404
            assert ask("ka", "继续", session_id=a1, profile="u2").status_code == 404
            assert ask("ka", "继续", session_id=a1, profile="u1").status_code == 200
    finally:
        server.stop()


def test_sigterm_during_a_stream_stores_the_partial_reply_marked(tmp_path):
    server = Server(tmp_path, SLOW).start()
    with httpx.Client(timeout=30) as client:
        sid = client.post(f"{server.url}/v1/chat/completions", json=_body("畅游套餐", max_tokens=3)).json()
        sid = sid["ragdial"]["session_id"]
        body = _body("夜猫流量包", stream=True, session_id=sid)
        with client.stream("POST", f"{server.url}/v1/chat/completions", json=body) as response:
            events = _events(response)
            next(events), next(events)
            server.process.send_signal(signal.SIGTERM)
            rest = list(events)  # the server ends the stream at once, telling the client why
    error = rest[-1]["error"]
    assert error["code"] == 503 and "shutting down" in error["message"]
    assert server.process.wait(30) is not None
    restarted = Server(tmp_path, SLOW, db=server.db).start()
    try:
        messages = httpx.get(f"{restarted.url}/v1/sessions/{sid}", timeout=10).json()["messages"]
        assert [m["content"] for m in messages[:2]] == ["畅游套餐", "w0 w1 w2"]
        assert len(messages) == 4 and messages[2]["content"] == "夜猫流量包"
        assert messages[3]["meta"]["interrupted"] == "shutdown"
        assert messages[3]["content"].startswith("w0")
    finally:
        restarted.stop()


def test_a_client_that_leaves_the_line_runs_no_turn_and_leaves_no_session(tmp_path):
    server = Server(tmp_path, SLOW, args=("--queue-limit", "4")).start()
    try:
        with httpx.Client(timeout=30) as client:
            body = _body("畅游套餐", stream=True, max_tokens=100)
            with client.stream("POST", f"{server.url}/v1/chat/completions", json=body) as response:
                events = _events(response)
                first = next(events)
                with contextlib.suppress(httpx.ReadTimeout):  # a second client waits in line, then gives up
                    client.post(f"{server.url}/v1/chat/completions", json=_body("夜猫流量包"), timeout=1.0)
                for _ in range(100):
                    queue = client.get(f"{server.url}/healthz").json()["queue"]
                    if queue["waiting"] == 0:
                        break
                    time.sleep(0.05)
                assert queue["waiting"] == 0 and queue["running"] == 1  # it left the line
                stop = f"{server.url}/v1/chat/completions/{first['id']}/stop"
                assert client.post(stop).json()["stored"] is True
            queue = client.get(f"{server.url}/healthz").json()["queue"]
            assert queue["admitted"] == 1  # the one that left never ran
            sessions = client.get(f"{server.url}/v1/sessions").json()["sessions"]
            assert [s["title"] for s in sessions] == ["畅游套餐"]  # and left no session behind
    finally:
        server.stop()
