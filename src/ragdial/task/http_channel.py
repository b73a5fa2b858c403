"""The simulator's channel to a running ragdial server: the same HTTP API a person's web page uses.

One dialog = one server session: the first message goes without ``session_id``; the server's answer names the
session (``ragdial.session_id`` in the OpenAI-compatible response), and later messages continue it.
"""

from __future__ import annotations

import httpx

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict, JSONValue, as_array, as_object


class HttpChannel:
    """POST /v1/chat/completions with a session per dialog (``client``: an ``httpx.Client`` such as starlette's
    ``TestClient``, else one for ``base_url``)."""

    def __init__(
        self, base_url: str, api_key: str | None = None, timeout: float = 60.0, client: httpx.Client | None = None
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = client or httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout)
        self.session_id: str | None = None

    def reset(self) -> None:
        self.session_id = None

    def send(self, text: str) -> str:
        body: JSONDict = {"messages": [{"role": "user", "content": text}], "language": "zh"}
        if self.session_id:
            body["session_id"] = self.session_id
        try:
            response = self.client.post("/v1/chat/completions", json=body)
        except httpx.HTTPError as err:
            raise RagdialError(f"server {self.client.base_url}: {err}") from err
        if response.status_code != 200:
            raise RagdialError(f"server {self.client.base_url}: HTTP {response.status_code}: {response.text[:200]}")
        data: JSONValue = response.json()
        session = as_object(as_object(data).get("ragdial")).get("session_id")
        self.session_id = (session if isinstance(session, str) else None) or self.session_id
        choices = as_array(as_object(data).get("choices"))
        content = as_object(as_object(choices[0]).get("message")).get("content") if choices else None
        if not isinstance(content, str):
            raise RagdialError(f"server {self.client.base_url}: the response has no reply text: {response.text[:200]}")
        return content
