"""The FastAPI app: OpenAI-compatible chat completions with cited knowledge, retrieval, sessions, the web page.

``create_app(service)`` builds the app around a ``Service`` (the dialog systems and the session store);
``app_from_env()`` is the factory uvicorn workers call (settings passed in ``RAGDIAL_SERVICE_SETTINGS``).
"""

from __future__ import annotations

import hmac
import os
from collections.abc import AsyncIterator, Generator, Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import iterate_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from ragdial.pipeline.turn import Piece, Prepared, Reply, Session, last_reply
from ragdial.schema import Speaker, Turn
from ragdial.serve import openai_format as oai
from ragdial.serve.limits import BodyLimit
from ragdial.serve.models import ChatRequest, RetrieveRequest, SessionRequest
from ragdial.serve.service import Service
from ragdial.serve.stores import StoredTurn, StoreUnavailableError, UnknownSessionError, record_turns
from ragdial.text.tokenize import detect_language, words
from ragdial.understanding.decision import LOOKUPS, Decision

STATIC = Path(__file__).parent / "static"
ERROR_KINDS = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    413: "request_too_large",
    422: "invalid_request_error",
    503: "service_unavailable",
}
RETRY_AFTER_S = 1  # what a 503 for an unreachable session database asks the client to wait


def _fail(status: int, message: str, param: str | None = None) -> HTTPException:
    return HTTPException(status, detail={"message": message, "param": param})


def _shown(value: str, limit: int = 64) -> str:
    """A client-sent value quoted in an error message, cut to ``limit`` characters."""
    return repr(value if len(value) <= limit else value[:limit] + "…")


def create_app(service: Service, routers: Sequence[tuple[str, APIRouter]] = ()) -> FastAPI:
    """The HTTP app over ``service``; ``routers`` are more pages mounted at their prefixes (e.g. rating pages)."""
    app = FastAPI(title="ragdial", version="0.1.0", summary="Knowledge-grounded dialog with cited knowledge")
    for prefix, router in routers:
        app.include_router(router, prefix=prefix)
    if service.settings.ratings_path:
        app.include_router(_rating_pages(service))
    app.state.service = service
    app.router.add_event_handler("shutdown", service.close)
    app.add_middleware(BodyLimit, max_bytes=service.settings.max_body_bytes)
    _install_error_handlers(app)

    def require_key(request: Request) -> None:
        expected = service.settings.api_key
        if not expected:
            return
        header = request.headers.get("authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given:
            raise HTTPException(401, {"message": "missing API key: send 'Authorization: Bearer <key>'"})
        if not hmac.compare_digest(given.strip().encode(), expected.encode()):
            raise HTTPException(401, {"message": "wrong API key"})

    api = [Depends(require_key)]

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        return service.health()

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/v1/models", dependencies=api)
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": service.settings.model, "object": "model", "owned_by": "ragdial"}]}

    @app.get("/v1/profiles", dependencies=api)
    def profiles(language: str | None = None) -> dict[str, Any]:
        system = service.system(_language(service, language))
        return {"language": system.language, "profiles": [u.to_dict() for u in system.users]}

    @app.post("/v1/chat/completions", dependencies=api, response_model=None)
    def chat(body: ChatRequest) -> dict[str, Any] | StreamingResponse:
        text = body.messages[-1].text
        _check_length(service, text, "messages[-1].content")
        session = _open_session(service, body)
        system = service.system(session.language)
        max_tokens = body.max_completion_tokens or body.max_tokens or system.config.max_tokens
        model = body.model or service.settings.model
        cid = oai.completion_id()
        context = system.context_for(session.history, text)  # built once: counted here, answered below
        prompt_tokens = sum(len(words(t.text, system.language)) for t in context)
        events = system.stream_context(
            context, session.user, max_tokens=max_tokens, temperature=body.temperature, state=session.state
        )
        if body.stream:
            return StreamingResponse(
                _closing(_stream(service, session, events, cid, model, prompt_tokens, max_tokens)),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "X-Session-Id": session.id},
            )
        reply = last_reply(events)
        _save(service, session, reply)
        extension = {"session_id": session.id, **reply.to_dict()}
        extension.pop("text")
        return oai.completion(cid, model, reply, extension, prompt_tokens, max_tokens)

    @app.post("/v1/retrieve", dependencies=api)
    def retrieve(body: RetrieveRequest) -> dict[str, Any]:
        _check_length(service, body.query, "query")
        if body.session_id:
            session = _load_session(service, body.session_id)
        else:
            language = body.language or _detected(service, body.query)
            session = Session.new(_profile(service, language, body.profile), language)
        system = service.system(session.language)
        context = system.context_for(session.history, body.query)
        decision = Decision(True, tuple(body.lookups or LOOKUPS), detector="request")
        found = system.retrieve(context, session.user, decision, k=body.k)
        return {
            "session_id": body.session_id,
            "language": session.language,
            "profile": session.user,
            "knowledge": [c.to_dict() for c in found.selected],
            "ranking": [c.to_dict() for c in found.ranked[: max(body.k, len(found.selected))]],
            "detector": system.decide(context).to_dict(),
        }

    @app.get("/v1/sessions", dependencies=api)
    def list_sessions(limit: int = 100) -> dict[str, Any]:
        if not 1 <= limit <= 1000:
            raise _fail(422, "limit must be between 1 and 1000", "limit")
        return {"sessions": [s.to_dict() for s in service.store.list(limit)]}

    @app.post("/v1/sessions", dependencies=api, status_code=201)
    def create_session(body: SessionRequest | None = None) -> dict[str, Any]:
        body = body or SessionRequest()
        language = _language(service, body.language)
        session = Session.new(_profile(service, language, body.profile), language)
        service.store.create(session)
        return _session_body(service, session.id)

    @app.get("/v1/sessions/{session_id}", dependencies=api)
    def get_session(session_id: str) -> dict[str, Any]:
        return _session_body(service, session_id)

    @app.delete("/v1/sessions/{session_id}", dependencies=api)
    def delete_session(session_id: str) -> dict[str, Any]:
        try:
            service.store.delete(session_id)
        except UnknownSessionError:
            raise _fail(404, f"unknown session {_shown(session_id)}", "session_id") from None
        return {"id": session_id, "deleted": True}

    return app


def app_from_env() -> FastAPI:
    """The app a uvicorn worker builds (``uvicorn --factory ragdial.serve.app:app_from_env``)."""
    from ragdial.serve.runner import ANNOUNCE_ENV, announce_when_ready

    app = create_app(Service.from_env())
    if os.environ.get(ANNOUNCE_ENV):
        announce_when_ready(app, os.environ[ANNOUNCE_ENV])
    return app


def _rating_pages(service: Service) -> APIRouter:
    """The human rating pages (ragdial.rating) under /rating, testing the system this app serves."""
    from ragdial.rating import RatingStore, rating_router, system_backend

    system = service.system(service.default_language)
    responder, goal_sampler = system_backend(system, system.config.task_db)
    return rating_router(RatingStore(service.settings.ratings_path or ":memory:"), responder, goal_sampler)


# ---- request handling


def _language(service: Service, language: str | None) -> str:
    if language is None:
        return service.default_language
    if language not in service.systems:
        raise _fail(422, f"language {language!r} is not served; served: {', '.join(service.systems)}", "language")
    return language


def _detected(service: Service, text: str) -> str:
    language = detect_language(text)
    return language if language in service.systems else service.default_language


def _profile(service: Service, language: str, profile: str | None) -> str | None:
    if profile is None or profile == "":
        return None
    system = service.system(language)
    if system.knowledge.user(profile) is None:
        known = ", ".join(u.id for u in system.users) or "none"
        raise _fail(422, f"unknown profile {_shown(profile)} for language {language!r}; known: {known}", "profile")
    return profile


def _check_length(service: Service, text: str, param: str) -> None:
    limit = service.settings.config.max_message_chars
    if len(text) > limit:
        raise _fail(413, f"message is {len(text)} characters long; the limit is {limit}", param)


def _load_session(service: Service, session_id: str) -> Session:
    try:
        return service.store.get(session_id)
    except UnknownSessionError:
        raise _fail(404, f"unknown session {_shown(session_id)}", "session_id") from None


def _open_session(service: Service, body: ChatRequest) -> Session:
    """The stored session named by ``session_id``, or a new one seeded with the history the client sent."""
    if body.session_id:
        session = _load_session(service, body.session_id)
        if body.profile and body.profile != session.user:
            raise _fail(422, f"session {session.id!r} belongs to profile {session.user!r}", "profile")
        if body.language and body.language != session.language:
            raise _fail(422, f"session {session.id!r} is in language {session.language!r}", "language")
        return session
    text = body.messages[-1].text
    language = _language(service, body.language) if body.language else _detected(service, text)
    session = Session.new(_profile(service, language, body.profile), language)
    seeded = []
    for message in body.messages[:-1]:
        if message.role in ("user", "assistant") and message.text.strip():
            _check_length(service, message.text, "messages")
            speaker = Speaker.USER if message.role == "user" else Speaker.SYSTEM
            seeded.append(StoredTurn(Turn(speaker, message.text)))
    service.store.create(session, seeded)
    session.history = [s.turn for s in seeded]
    return session


def _save(service: Service, session: Session, reply: Reply) -> None:
    """Store the reply's turn record (the user's turn, the reply, its citations, decision and the new state)."""
    try:
        record = reply.record
        service.store.append(session.id, record_turns(record), record.state)
    except UnknownSessionError:
        raise _fail(404, f"session {session.id!r} was deleted while answering", "session_id") from None


async def _closing(stream: Generator[str, None, None]) -> AsyncIterator[str]:
    """``stream``'s chunks, each computed in a worker thread; ``stream`` is closed however the response ends
    (a client that disconnects cancels the response), so the turn's locks are released then, not at garbage
    collection."""
    try:
        async for chunk in iterate_in_threadpool(stream):
            yield chunk
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(stream.close)


def _stream(
    service: Service,
    session: Session,
    events: Iterator[Any],
    cid: str,
    model: str,
    prompt_tokens: int,
    max_tokens: int,
) -> Generator[str, None, None]:
    """Server-sent events in the OpenAI chunk format; the first chunk carries the cited knowledge. However this
    generator ends (finished, failed, or closed when the client went away), ``events`` is closed, so every lock a
    component holds for the turn is released."""
    try:
        for event in events:
            if isinstance(event, Prepared):
                extension: dict[str, Any] = {
                    "session_id": session.id,
                    "language": session.language,
                    "knowledge": [c.to_dict() for c in event.knowledge],
                    "decision": event.decision.to_dict(),
                    "timings": event.timings,
                }
                yield oai.sse(oai.chunk(cid, model, {"role": "assistant", "content": ""}, extension=extension))
            elif isinstance(event, Piece):
                yield oai.sse(oai.chunk(cid, model, {"content": event.text}))
            elif isinstance(event, Reply):
                _save(service, session, event)
                extension = {"session_id": session.id, "timings": event.timings, "tokens": event.tokens}
                finish = oai.finish_reason(event, max_tokens)
                final = oai.chunk(cid, model, {}, finish, extension, oai.usage(prompt_tokens, event.tokens))
                yield oai.sse(final)
    except HTTPException as err:
        detail = err.detail if isinstance(err.detail, dict) else {"message": str(err.detail)}
        yield oai.sse(oai.error_body(detail["message"], ERROR_KINDS.get(err.status_code, "error"), err.status_code))
    except StoreUnavailableError as err:  # the reply was not stored: the client may send the turn again
        yield oai.sse(oai.error_body(f"session store unavailable: {err}", ERROR_KINDS[503], 503))
    except Exception as err:  # a component failed mid-stream: tell the client in-band; the session is unchanged
        yield oai.sse(oai.error_body(f"generation failed: {type(err).__name__}: {err}", "server_error", 500))
    finally:
        close = getattr(events, "close", None)
        if callable(close):
            close()
    yield oai.sse("[DONE]")


def _session_body(service: Service, session_id: str) -> dict[str, Any]:
    try:
        summary = service.store.summary(session_id)
        turns = service.store.turns(session_id)
    except UnknownSessionError:
        raise _fail(404, f"unknown session {_shown(session_id)}", "session_id") from None
    return {**summary.to_dict(), "messages": [t.to_message() for t in turns]}


# ---- errors: always the OpenAI error shape, a 4xx for anything the client sent wrong


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, dict) else {"message": str(exc.detail)}
        if detail.get("message") == "There was an error parsing the body":  # starlette: not UTF-8, not a form
            detail = {"message": "request body is not valid JSON (send UTF-8 JSON with Content-Type: application/json)"}
        kind = ERROR_KINDS.get(exc.status_code, "error")
        headers = {"WWW-Authenticate": "Bearer"} if exc.status_code == 401 else None
        body = oai.error_body(detail.get("message", ""), kind, exc.status_code, detail.get("param"))
        return JSONResponse(body, status_code=exc.status_code, headers=headers)

    @app.exception_handler(StoreUnavailableError)
    async def store_unavailable(request: Request, exc: StoreUnavailableError) -> JSONResponse:
        body = oai.error_body(f"session store unavailable: {exc}", ERROR_KINDS[503], 503)
        return JSONResponse(body, status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {"type": "", "loc": (), "msg": "invalid request"}
        if first.get("type") == "json_invalid":
            ctx = first.get("ctx")
            reason = ctx.get("error", "") if isinstance(ctx, dict) else ""
            message = f"request body is not valid JSON: {reason}".rstrip(": ")
            return JSONResponse(oai.error_body(message, "invalid_request_error", 400), status_code=400)
        loc = [str(p) for p in first.get("loc", ()) if p != "body"]
        if first.get("type") == "missing" and not loc:
            message = "request body is missing: send a JSON object"
        elif not loc:
            message = "request body must be a JSON object (send Content-Type: application/json)"
        else:
            where = ".".join(loc) or "body"
            message = f"{where}: {str(first.get('msg', 'invalid')).removeprefix('Value error, ')}"
            if len(errors) > 1:
                message += f" (and {len(errors) - 1} more problem(s))"
        body = oai.error_body(message, "invalid_request_error", 422, ".".join(loc) or None)
        return JSONResponse(body, status_code=422)
