"""The OpenAI-compatible generator against a scripted local server: retries before the first piece (refused
connections, 503 with Retry-After, a server that does not answer in time), never after it, and clear errors.

The scripted server is ours and only checks that the client reacts to each failure as documented; the real-server
test (llama-cpp-python's own server) is in test_generation_openai.py.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ragdial.errors import RagdialError
from ragdial.generation.base import GenerationRequest
from ragdial.generation.openai_http import OpenAICompatibleGenerator
from ragdial.schema import Speaker, Turn

PIECES = ["Tickets ", "cost ", "45 yuan."]


class Script:
    """What the server does for each request, in order ("ok" once the list is used up)."""

    def __init__(self, *steps: str) -> None:
        self.steps = list(steps)
        self.seen: list[dict] = []
        self.lock = threading.Lock()

    def next(self, body: dict) -> str:
        with self.lock:
            self.seen.append(body)
            return self.steps.pop(0) if self.steps else "ok"


def _handler(script: Script):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            step = script.next(body)
            if step == "hang":  # nothing at all for longer than the client's read time-out
                time.sleep(1.5)
                return self._stream(PIECES)
            if step in ("503", "429", "400"):
                payload = json.dumps({"error": {"message": f"scripted {step}"}}).encode()
                self.send_response(int(step))
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                if step != "400":
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(payload)
                return None
            if step == "stall":  # one piece, then silence
                return self._stream(PIECES[:1], stall=1.5)
            return self._stream(PIECES)

        def _stream(self, pieces: list[str], stall: float = 0.0) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for piece in pieces:
                chunk = {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            if stall:
                time.sleep(stall)
                return
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    return Handler


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    script = Script()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", script
    httpd.shutdown()
    httpd.server_close()


def _request() -> GenerationRequest:
    return GenerationRequest([Turn(Speaker.USER, "How much are the tickets?")], max_tokens=16)


def _generator(url: str, **options) -> OpenAICompatibleGenerator:
    return OpenAICompatibleGenerator(url, model="scripted", **{"backoff": 0.01, "timeout": 0.5, **options})


def test_streams_the_pieces_in_order_with_the_request_it_documents(server):
    url, script = server
    assert list(_generator(url).stream(_request())) == PIECES
    body = script.seen[0]
    assert body["stream"] is True and body["model"] == "scripted" and body["max_tokens"] == 16
    assert body["messages"][-1] == {"role": "user", "content": "How much are the tickets?"}


def test_503_429_and_a_silent_server_are_retried_before_the_first_piece(server):
    url, script = server
    script.steps = ["503", "429"]
    assert _generator(url, retries=2).generate(_request()) == "".join(PIECES)
    assert len(script.seen) == 3
    script.steps, script.seen = ["hang"], []
    assert _generator(url, retries=1).generate(_request()) == "".join(PIECES)  # the read timed out, then worked
    assert len(script.seen) == 2


def test_retries_run_out_with_one_clear_error(server):
    url, script = server
    script.steps = ["503", "503", "503"]
    with pytest.raises(RagdialError, match=r"/v1/chat/completions: HTTP 503: .*scripted 503.* \(after 3 attempts\)"):
        _generator(url, retries=2).generate(_request())
    assert len(script.seen) == 3


def test_a_client_error_is_not_retried(server):
    url, script = server
    script.steps = ["400"]
    with pytest.raises(RagdialError, match="HTTP 400"):
        _generator(url, retries=3).generate(_request())
    assert len(script.seen) == 1


def test_a_stream_that_stalls_after_its_first_piece_is_an_error_not_a_retry(server):
    url, script = server
    script.steps = ["stall"]
    pieces = []
    with pytest.raises(RagdialError, match="the stream broke: ReadTimeout"):
        for piece in _generator(url, retries=3).stream(_request()):
            pieces.append(piece)
    assert pieces == PIECES[:1]  # what was handed on is never sent again
    assert len(script.seen) == 1


def test_refused_connections_are_retried_then_reported():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    generator = _generator(f"http://127.0.0.1:{port}/v1", retries=2, connect_timeout=0.5)
    with pytest.raises(
        RagdialError, match=rf"127\.0\.0\.1:{port}/v1/chat/completions: ConnectError.*\(after 3 attempts\)"
    ):
        generator.generate(_request())


def test_config_round_trip_keeps_the_time_outs_and_retries_but_not_the_key(server):
    url, _ = server
    generator = _generator(url, retries=4, connect_timeout=2.0, api_key="secret")
    config = generator.to_config()
    assert (config["retries"], config["connect_timeout"], config["timeout"], config["backoff"]) == (4, 2.0, 0.5, 0.01)
    assert "secret" not in str(config)
    rebuilt = OpenAICompatibleGenerator(**{k: v for k, v in config.items() if k != "name"})
    assert rebuilt.generate(_request()) == "".join(PIECES)
