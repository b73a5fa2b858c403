"""Generator for any OpenAI-compatible server (vLLM, llama.cpp's server, ...): ``POST /v1/chat/completions``, SSE."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx

from ragdial.errors import RagdialError
from ragdial.generation.base import GenerationRequest, Generator
from ragdial.generation.prompts import fit_messages

_CJK = re.compile(r"[\u3000-\u9fff\uf900-\uffef]")
PROMPT_MARGIN = 32


def approx_tokens(text: str) -> int:
    """A tokenizer-free over-estimate: one token per CJK character, one per three other characters."""
    cjk = len(_CJK.findall(text))
    return cjk + (len(text) - cjk + 2) // 3


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
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        if self.base_url.endswith("/v1"):
            self.base_url = self.base_url[:-3]
        self.model = model
        self.context_tokens = context_tokens
        self.timeout = timeout
        self.extra_body = dict(extra_body or {})
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1/chat/completions"

    def payload(self, request: GenerationRequest) -> dict[str, Any]:
        max_tokens = max(1, min(request.max_tokens, self.context_tokens // 2))
        messages, _ = fit_messages(request, approx_tokens, self.context_tokens - max_tokens - PROMPT_MARGIN)
        body: dict[str, Any] = {
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
        try:
            with self._client.stream("POST", self.url, json=self.payload(request)) as response:
                if response.status_code != 200:
                    response.read()
                    raise RagdialError(f"{self.url}: HTTP {response.status_code}: {response.text[:300]}")
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
                    piece = (choice.get("delta") or {}).get("content")
                    if piece:
                        yield piece
        except httpx.HTTPError as err:
            raise RagdialError(f"{self.url}: {type(err).__name__}: {err}") from None

    def to_config(self) -> dict[str, Any]:
        """Without the API key (a config is shown and stored)."""
        return {
            "name": "openai",
            "base_url": self.base_url,
            "model": self.model,
            "context_tokens": self.context_tokens,
            "timeout": self.timeout,
            "extra_body": self.extra_body,
        }

    def close(self) -> None:
        self._client.close()
