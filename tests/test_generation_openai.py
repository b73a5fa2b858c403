"""The OpenAI-compatible backend against llama-cpp-python's own server on 127.0.0.1, and its error handling."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from ragdial.datasets import kdconv
from ragdial.errors import RagdialError
from ragdial.generation.base import GenerationRequest
from ragdial.generation.model_files import ModelFileError, packaged_model
from ragdial.generation.openai_http import OpenAICompatibleGenerator, approx_tokens
from ragdial.schema import Speaker, Turn


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server_url():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (the llm extra)")
    pytest.importorskip("sse_starlette", reason="llama-cpp-python[server] deps (sse-starlette) not installed")
    pytest.importorskip("starlette_context", reason="llama-cpp-python[server] deps (starlette-context) missing")
    try:
        model = packaged_model()
    except ModelFileError as err:
        pytest.skip(str(err))
    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1"]
    command += ["--port", str(port), "--n_ctx", "512", "--n_threads", "2", "--verbose", "false"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ))
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            if process.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {process.stderr.read().decode()[-2000:]}")
            try:
                if httpx.get(f"{url}/v1/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail("llama_cpp.server did not start within 120 s")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def ticket_request(max_tokens: int = 8) -> GenerationRequest:
    item = kdconv.triple("云松山", "门票", "成人票45元")
    return GenerationRequest([Turn(Speaker.USER, "云松山的门票多少钱？")], [item], max_tokens=max_tokens)


def test_streams_a_grounded_reply_from_a_local_server(server_url):
    generator = OpenAICompatibleGenerator(server_url)
    pieces = list(generator.stream(ticket_request()))
    assert len(pieces) > 1 and "45" in "".join(pieces)
    assert generator.generate(ticket_request()) == "".join(pieces)  # temperature 0, same seed
    assert len(list(generator.stream(ticket_request(max_tokens=2)))) <= 2
    generator.close()


def test_unreachable_server_is_one_clear_error():
    generator = OpenAICompatibleGenerator(f"http://127.0.0.1:{free_port()}/v1", timeout=2)
    with pytest.raises(RagdialError, match=r"127\.0\.0\.1.*/v1/chat/completions"):
        generator.generate(ticket_request())


def test_approximate_token_count_over_estimates_chinese_and_english():
    assert approx_tokens("门票多少钱") == 5
    assert approx_tokens("how much is it") >= 4


def test_time_out_against_the_local_server_is_retried_then_one_clear_error(server_url):
    # the first token cannot come within 1 ms: each attempt times out, the generator tries twice and says so
    generator = OpenAICompatibleGenerator(server_url, timeout=0.001, retries=1, backoff=0.01)
    with pytest.raises(RagdialError, match=r"/v1/chat/completions: ReadTimeout.*\(after 2 attempts\)"):
        generator.generate(ticket_request(max_tokens=2))
    generator.close()
    patient = OpenAICompatibleGenerator(server_url, retries=0)  # the server is still fine for the next client
    assert "45" in patient.generate(ticket_request())
    patient.close()
