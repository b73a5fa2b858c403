"""What the routes share: who is calling (``Caller``), the error they raise, and the checks of request values
(language, profile, message length, a session the caller may see)."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from fastapi import HTTPException, Request

from ragdial.pipeline.turn import Session
from ragdial.serve.service import Service
from ragdial.serve.stores import UnknownSessionError
from ragdial.text.tokenize import detect_language

ERROR_KINDS = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    413: "request_too_large",
    422: "invalid_request_error",
    500: "server_error",
    503: "service_unavailable",
    504: "timeout_error",
}


def fail(status: int, message: str, param: str | None = None) -> HTTPException:
    return HTTPException(status, detail={"message": message, "param": param})


def shown(value: str, limit: int = 64) -> str:
    """A client-sent value quoted in an error message, cut to ``limit`` characters."""
    return repr(value if len(value) <= limit else value[:limit] + "…")


@dataclass(frozen=True)
class Caller:
    """Who sends a request: ``owner`` is ``"key:<sha256 of the API key, 16 hex>"`` when the service has API keys
    (sessions belong to their key; another key's session is unknown: 404), ``None`` without keys (no
    authentication, so no privacy between clients: sessions are told apart by their profile only)."""

    owner: str | None = None


def api_keys(setting: str | None) -> list[str]:
    """The service's API keys: one key, or several separated by commas."""
    return [key.strip() for key in (setting or "").split(",") if key.strip()]


def identify(request: Request, keys: list[str]) -> Caller:
    """The caller of ``request``; 401 when keys are configured and none of them was sent."""
    if not keys:
        return Caller()
    header = request.headers.get("authorization", "")
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        raise HTTPException(401, {"message": "missing API key: send 'Authorization: Bearer <key>'"})
    sent = given.strip().encode()
    for key in keys:
        if hmac.compare_digest(sent, key.encode()):
            return Caller("key:" + hashlib.sha256(key.encode()).hexdigest()[:16])
    raise HTTPException(401, {"message": "wrong API key"})


def language(service: Service, value: str | None) -> str:
    if value is None:
        return service.default_language
    if value not in service.systems:
        raise fail(422, f"language {value!r} is not served; served: {', '.join(service.systems)}", "language")
    return value


def detected(service: Service, text: str) -> str:
    found = detect_language(text)
    return found if found in service.systems else service.default_language


def profile(service: Service, language_: str, value: str | None) -> str | None:
    if value is None or value == "":
        return None
    system = service.system(language_)
    if system.knowledge.user(value) is None:
        known = ", ".join(u.id for u in system.users) or "none"
        raise fail(422, f"unknown profile {shown(value)} for language {language_!r}; known: {known}", "profile")
    return value


def check_length(service: Service, text: str, param: str) -> None:
    limit = service.settings.config.max_message_chars
    if len(text) > limit:
        raise fail(413, f"message is {len(text)} characters long; the limit is {limit}", param)


def load_session(service: Service, session_id: str, caller: Caller, profile_: str | None = None) -> Session:
    """The caller's stored session ``session_id``; 404 when there is none, when it is another owner's, or when
    ``profile_`` is given ("" = no profile) and the session belongs to another profile."""
    try:
        session = service.store.get(session_id, owner=caller.owner)
    except UnknownSessionError:
        raise unknown_session(session_id) from None
    if profile_ is not None and (profile_ or None) != session.user:
        raise unknown_session(session_id)
    return session


def unknown_session(session_id: str) -> HTTPException:
    return fail(404, f"unknown session {shown(session_id)}", "session_id")
