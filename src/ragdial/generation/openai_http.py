"""Generator for any OpenAI-compatible server (vLLM, llama.cpp's server, llama-cpp-python's server, a hosted API):
``POST /v1/chat/completions`` with ``"stream": true`` (server-sent events).

Time-outs: ``connect_timeout`` to open a connection, ``timeout`` for each read (the first token included, then
between two chunks). Retries: a request that fails before its first piece arrived (connection refused or reset, a
time-out, HTTP 429/500/502/503/504) is sent again up to ``retries`` times, waiting ``backoff`` seconds doubled each
time (or the server's ``Retry-After``, at most ``MAX_WAIT``). Once a piece was handed on, a failure is an error,
never a retry, so a reply is never repeated.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import TypedDict

import httpx

from ragdial.errors import RagdialError
from ragdial.generation.base import GenerationRequest, Generator
from ragdial.generation.prompts import fit_messages
from ragdial.jsontypes import JSONDict, JSONObject

_CJK = re.compile(r"[\u3000-\u9fff\uf900-\uffef]")
PROMPT_MARGIN = 32
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
MAX_WAIT = 10.0


class _Retry(Exception):
    """A failure before the first piece: worth sending the request again (after ``wait`` seconds, if given)."""

    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.wait = wait


def approx_tokens(text: str) -> int:
    """A tokenizer-free over-estimate: one token per CJK character, one per three other characters."""
    cjk = len(_CJK.findall(text))
    return cjk + (len(text) - cjk + 2) // 3


class OpenAIOptions(TypedDict, total=False):
    """``OpenAICompatibleGenerator``'s options as a config gives them (``base_url`` is required)."""

    base_url: str
    model: str
    api_key: str | None
    context_tokens: int
    timeout: float
    extra_body: JSONObject | None
    connect_timeout: float
    retries: int
    backoff: float


class OpenAICompatibleGenerator(Generator):
    """Streams ``/v1/chat/completions`` from ``base_url`` (e.g. ``http://127.0.0.1:8000``).

    The server holds the model and its tokenizer, so the prompt is fitted to ``context_tokens`` with an
    over-estimating count (``approx_tokens``).
    """

    def __init__(
        self,
        base_url: str,
        model: str = "default",
        api_key: str | None = None,
        context_tokens: int = 2048,
        timeout: float = 120.0,
        extra_body: JSONObject | None = None,
        connect_timeout: float = 5.0,
        retries: int = 2,
        backoff: float = 0.5,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        if self.base_url.endswith("/v1"):
            self.base_url = self.base_url[:-3]
        self.model = model
        self.context_tokens = context_tokens
        self.timeout = timeout
        self.extra_body = dict(extra_body or {})
        self.connect_timeout = connect_timeout
        self.retries = max(0, int(retries))
        self.backoff = backoff
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=httpx.Timeout(timeout, connect=connect_timeout), headers=headers)

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1/chat/completions"

    def payload(self, request: GenerationRequest) -> JSONDict:
        max_tokens = max(1, min(request.max_tokens, self.context_tokens // 2))
        messages, _ = fit_messages(request, approx_tokens, self.context_tokens - max_tokens - PROMPT_MARGIN)
        body: JSONDict = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": request.temperature,
            "seed": request.seed,
            "stream": True,
        }
        if request.stop:
            body["stop"] = list(request.stop)
        return {**body, **self.extra_body}

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        payload = self.payload(request)
        for attempt in range(self.retries + 1):
            started = False
            try:
                for piece in self._attempt(payload, request):
                    started = True
                    yield piece
                return
            except _Retry as err:
                if attempt == self.retries:
                    tries = f" (after {attempt + 1} attempts)" if attempt else ""
                    raise RagdialError(f"{self.url}: {err}{tries}") from None
                time.sleep(min(MAX_WAIT, err.wait if err.wait is not None else self.backoff * 2**attempt))
            except httpx.HTTPError as err:
                if started:
                    raise RagdialError(f"{self.url}: the stream broke: {type(err).__name__}: {err}") from None
                raise RagdialError(f"{self.url}: {type(err).__name__}: {err}") from None

    def _attempt(self, payload: JSONDict, request: GenerationRequest) -> Iterator[str]:
        """One request: its pieces; ``_Retry`` for a failure before the first piece that a retry may cure."""
        started = False
        try:
            with self._client.stream("POST", self.url, json=payload) as response:
                if response.status_code != 200:
                    response.read()
                    reason = f"HTTP {response.status_code}: {response.text[:300]}"
                    if response.status_code in RETRY_STATUS:
                        raise _Retry(reason, _retry_after(response.headers.get("retry-after")))
                    raise RagdialError(f"{self.url}: {reason}")
                for line in response.iter_lines():
                    if request.cancelled:
                        return
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        return
                    try:
                        chunk = json.loads(data)
                        choice = chunk["choices"][0] if chunk.get("choices") else {}
                    except (json.JSONDecodeError, AttributeError, KeyError) as err:
                        raise RagdialError(f"{self.url}: unreadable stream event {data[:200]!r}: {err}") from None
                    if chunk.get("error"):
                        raise RagdialError(f"{self.url}: the server reported {str(chunk['error'])[:300]}")
                    piece = (choice.get("delta") or {}).get("content")
                    if piece:
                        started = True
                        yield piece
        except (httpx.TransportError, httpx.TimeoutException) as err:
            if started:
                raise
            raise _Retry(f"{type(err).__name__}: {err}") from None

    def to_config(self) -> JSONDict:
        """Without the API key (a config is shown and stored)."""
        return {
            "name": "openai",
            "base_url": self.base_url,
            "model": self.model,
            "context_tokens": self.context_tokens,
            "timeout": self.timeout,
            "connect_timeout": self.connect_timeout,
            "retries": self.retries,
            "backoff": self.backoff,
            "extra_body": self.extra_body,
        }

    def close(self) -> None:
        self._client.close()


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (a number; an HTTP date is ignored)."""
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None
