"""The FastAPI app: OpenAI-compatible chat completions with cited knowledge, retrieval, sessions, the web page.

``create_app(service)`` builds the app around a ``Service`` (the dialog systems and the session store);
``app_from_env()`` is the factory uvicorn workers call (settings passed in ``RAGDIAL_SERVICE_SETTINGS``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from ragdial.jsontypes import JSONDict, RouteBody
from ragdial.pipeline.turn import Session
from ragdial.serve import openai_format as oai
from ragdial.serve.chat import Chat
from ragdial.serve.limits import BodyLimit
from ragdial.serve.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from ragdial.serve.models import ChatRequest, RetrieveRequest, SessionRequest
from ragdial.serve.requests import (
    ERROR_KINDS,
    Caller,
    api_keys,
    check_length,
    detected,
    fail,
    identify,
    load_session,
    unknown_session,
)
from ragdial.serve.requests import language as checked_language
from ragdial.serve.requests import profile as checked_profile
from ragdial.serve.service import Service
from ragdial.serve.stores import ANY, StoreUnavailableError, UnknownSessionError
from ragdial.understanding.decision import LOOKUPS, Decision

STATIC = Path(__file__).parent / "static"
RETRY_AFTER_S = 1  # what a 503 for an unreachable session database asks the client to wait


def _caller(request: Request) -> Caller:
    """Who calls (401 without a valid key when the service has keys)."""
    return identify(request, request.app.state.api_keys)


CallerDep = Annotated[Caller, Depends(_caller)]


def create_app(service: Service, routers: Sequence[tuple[str, APIRouter]] = ()) -> FastAPI:
    """The HTTP app over ``service``; ``routers`` are more pages mounted at their prefixes (e.g. rating pages)."""
    app = FastAPI(title="ragdial", version="0.1.0", summary="Knowledge-grounded dialog with cited knowledge")
    for prefix, router in routers:
        app.include_router(router, prefix=prefix)
    if service.settings.ratings_path:
        app.include_router(_rating_pages(service))
    chat = Chat(service)
    app.state.service = service
    app.state.chat = chat
    app.router.add_event_handler("startup", chat.watch_signals)
    app.router.add_event_handler("shutdown", chat.shutdown)  # running turns end and are stored first
    app.router.add_event_handler("shutdown", service.close)
    app.add_middleware(BodyLimit, max_bytes=service.settings.max_body_bytes)
    _install_error_handlers(app)
    app.state.api_keys = api_keys(service.settings.api_key)

    @app.get("/healthz")
    async def healthz() -> JSONResponse:
        """ok only once every component is warm (the app exists after warming); 503 when the worker's queue is
        saturated or a turn is stuck past its time limit, so a load balancer routes around it."""
        health = await run_in_threadpool(service.health)
        queue = chat.health()
        health["status"] = queue.pop("status")
        health["queue"] = queue
        return JSONResponse(health, status_code=200 if health["status"] == "ok" else 503)

    @app.get("/metrics", include_in_schema=False)
    def metrics() -> PlainTextResponse:
        return PlainTextResponse(chat.metrics.render(chat.queue), media_type=METRICS_CONTENT_TYPE)

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(STATIC / "favicon.ico", media_type="image/x-icon")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/v1/models")
    def models(caller: CallerDep) -> RouteBody:
        return {"object": "list", "data": [{"id": service.settings.model, "object": "model", "owned_by": "ragdial"}]}

    @app.get("/v1/profiles")
    def profiles(caller: CallerDep, language: str | None = None) -> RouteBody:
        system = service.system(checked_language(service, language))
        return {"language": system.language, "profiles": [u.to_dict() for u in system.users]}

    @app.post("/v1/chat/completions", response_model=None)
    async def chat_completions(request: Request, body: ChatRequest, caller: CallerDep) -> Response:
        return await chat.complete(request, body, caller)

    @app.post("/v1/chat/completions/{stream_id}/stop")
    async def stop(stream_id: str, caller: CallerDep) -> RouteBody:
        """Stop a streaming completion (its id is every chunk's ``id``); the partial reply is stored marked
        interrupted. 404 for a completion that is not running (finished, unknown, another caller's)."""
        return await chat.stop(stream_id, caller)

    @app.post("/v1/retrieve")
    def retrieve(body: RetrieveRequest, caller: CallerDep) -> RouteBody:
        check_length(service, body.query, "query")
        if body.session_id:
            session = load_session(service, body.session_id, caller, body.profile)
        else:
            language = body.language or detected(service, body.query)
            session = Session.new(checked_profile(service, language, body.profile), language)
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

    @app.get("/v1/sessions")
    def list_sessions(caller: CallerDep, limit: int = 100, profile: str | None = None) -> RouteBody:
        """The caller's sessions, latest first; ``profile`` keeps only that profile's (``profile=`` those
        without one)."""
        if not 1 <= limit <= 1000:
            raise fail(422, "limit must be between 1 and 1000", "limit")
        user = ANY if profile is None else (profile or None)
        return {"sessions": [s.to_dict() for s in service.store.list(limit, owner=caller.owner, user=user)]}

    @app.post("/v1/sessions", status_code=201)
    def create_session(caller: CallerDep, body: SessionRequest | None = None) -> RouteBody:
        body = body or SessionRequest()
        language = checked_language(service, body.language)
        session = Session.new(checked_profile(service, language, body.profile), language)
        service.store.create(session, owner=caller.owner)
        return _session_body(service, session.id, caller)

    @app.get("/v1/sessions/{session_id}")
    def get_session(session_id: str, caller: CallerDep, profile: str | None = None) -> RouteBody:
        return _session_body(service, session_id, caller, profile)

    @app.delete("/v1/sessions/{session_id}")
    def delete_session(session_id: str, caller: CallerDep, profile: str | None = None) -> RouteBody:
        load_session(service, session_id, caller, profile)
        try:
            service.store.delete(session_id, owner=caller.owner)
        except UnknownSessionError:
            raise unknown_session(session_id) from None
        return {"id": session_id, "deleted": True}

    return app


def app_from_env() -> FastAPI:
    """The app a uvicorn worker builds (``uvicorn --factory ragdial.serve.app:app_from_env``)."""
    return create_app(Service.from_env())


def _rating_pages(service: Service) -> APIRouter:
    """The human rating pages (ragdial.rating) under /rating, testing the system this app serves."""
    from ragdial.rating import RatingStore, rating_router, system_backend

    system = service.system(service.default_language)
    responder, goal_sampler = system_backend(system, system.task.db.url if system.task is not None else None)
    return rating_router(RatingStore(service.settings.ratings_path or ":memory:"), responder, goal_sampler)


def _session_body(service: Service, session_id: str, caller: Caller, profile: str | None = None) -> JSONDict:
    load_session(service, session_id, caller, profile)
    try:
        summary = service.store.summary(session_id, owner=caller.owner)
        turns = service.store.turns(session_id, owner=caller.owner)
    except UnknownSessionError:
        raise unknown_session(session_id) from None
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
