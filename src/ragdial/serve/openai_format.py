"""OpenAI chat-completion objects (whole and streamed chunks), extended with a ``ragdial`` field."""

from __future__ import annotations

import json
import time
import uuid

from ragdial.jsontypes import JSONDict, JSONObject
from ragdial.pipeline.system import Reply


def completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex[:24]}"


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def finish_reason(reply: Reply, max_tokens: int) -> str:
    return "length" if reply.tokens >= max_tokens else "stop"


def completion(
    cid: str, model: str, reply: Reply, extension: JSONObject, prompt_tokens: int, max_tokens: int
) -> JSONDict:
    """A ``chat.completion`` object."""
    return {
        "id": cid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.text},
                "finish_reason": finish_reason(reply, max_tokens),
            }
        ],
        "usage": usage(prompt_tokens, reply.tokens),
        "ragdial": extension,
    }


def chunk(
    cid: str,
    model: str,
    delta: JSONObject,
    finish: str | None = None,
    extension: JSONObject | None = None,
    usage_: dict[str, int] | None = None,
) -> JSONDict:
    """A ``chat.completion.chunk`` object."""
    body: JSONDict = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if extension is not None:
        body["ragdial"] = extension
    if usage_ is not None:
        body["usage"] = usage_
    return body


def sse(data: JSONObject | str) -> str:
    """One server-sent event carrying ``data`` (JSON, or a literal like ``[DONE]``)."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {payload}\n\n"


def error_body(message: str, kind: str, status: int, param: str | None = None) -> JSONDict:
    """The OpenAI error shape: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": kind, "param": param, "code": status}}
