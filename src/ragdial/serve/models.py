"""Request bodies of the HTTP API (OpenAI-compatible chat completions, extended with sessions and profiles).

Validation is strict: a boolean must be ``true``/``false`` (not ``"yes"`` or ``1``), a number a JSON number, a string
a JSON string; nothing is coerced."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Language = Literal["zh", "en"]


class ChatMessage(BaseModel):
    """An OpenAI chat message; ``content`` may be a string or a list of text parts."""

    model_config = ConfigDict(extra="ignore", strict=True)

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, object]] | None = None

    @property
    def text(self) -> str:
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(str(part.get("text", "")) for part in self.content if part.get("type") == "text")


class ChatRequest(BaseModel):
    """``POST /v1/chat/completions``. Extensions: ``session_id`` (continue a stored session: only the last user
    message is new), ``profile`` (the user whose profile a new session may look up), ``language``."""

    model_config = ConfigDict(extra="ignore", strict=True)

    model: str | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    max_tokens: int | None = Field(default=None, ge=1, le=4096)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=4096)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    session_id: str | None = Field(default=None, min_length=1, max_length=128)
    profile: str | None = Field(default=None, max_length=128)
    language: Language | None = None

    @field_validator("messages")
    @classmethod
    def _ends_with_user(cls, messages: list[ChatMessage]) -> list[ChatMessage]:
        if messages[-1].role != "user":
            raise ValueError("the last message must have role 'user'")
        if not messages[-1].text.strip():
            raise ValueError("the last user message is empty")
        return messages


class RetrieveRequest(BaseModel):
    """``POST /v1/retrieve``: knowledge for ``query`` (after the session's history, if a session is given)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    query: str = Field(min_length=1)
    session_id: str | None = Field(default=None, min_length=1, max_length=128)
    profile: str | None = Field(default=None, max_length=128)
    language: Language | None = None
    k: int = Field(default=5, ge=1, le=50)
    lookups: list[Literal["user_profile", "global"]] | None = None

    @field_validator("query")
    @classmethod
    def _not_blank(cls, query: str) -> str:
        if not query.strip():
            raise ValueError("the query is empty")
        return query


class SessionRequest(BaseModel):
    """``POST /v1/sessions``: a new, empty session."""

    model_config = ConfigDict(extra="forbid", strict=True)

    profile: str | None = Field(default=None, max_length=128)
    language: Language | None = None
