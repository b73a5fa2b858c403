"""``POST /v1/chat/completions`` and ``POST /v1/chat/completions/{id}/stop``.

A turn waits for a slot in the generation queue (503 with ``Retry-After`` when the line is full or the wait too
long), runs in its own thread (``TurnRun``) within the per-request time limit, streams its reply (server-sent
events) or returns it whole, and is stored when it ends, in the turn's thread, before the response finishes.

What is stored:
- a completed turn: the user's turn and the reply (citations, decision, timings) and the session's new state;
- a turn that ends early after its reply had begun (stopped, connection closed, time limit, server stopping):
  the user's turn and the partial reply, marked ``meta.interrupted`` with the reason; the session's state is
  left as it was;
- nothing for a turn that ends before any reply text, or fails.
A new session is created together with its first stored turn, so a request that stores nothing leaves no session.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import partial
from types import FrameType

from fastapi import HTTPException, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from ragdial.jsontypes import JSONDict, as_text_or_none
from ragdial.pipeline.turn import Piece, Prepared, Session, Usage
from ragdial.schema import Speaker, Turn
from ragdial.serve import openai_format as oai
from ragdial.serve.admission import GenerationQueue, Refused, Ticket
from ragdial.serve.metrics import Metrics
from ragdial.serve.models import ChatRequest
from ragdial.serve.requests import (
    ERROR_KINDS,
    Caller,
    check_length,
    detected,
    fail,
    language,
    load_session,
    profile,
    shown,
)
from ragdial.serve.service import Service
from ragdial.serve.stores import StoredTurn, StoreUnavailableError, UnknownSessionError, record_turns
from ragdial.serve.streams import Streams
from ragdial.serve.turns import REASONS, Abandoned, Ended, Heartbeat, Outcome, TurnRun

SignalHandler = Callable[[int, FrameType | None], object]

HEARTBEAT_S = 15.0  # a keep-alive comment on a stream that is silent this long
PREVIOUS_TURN_WAIT_S = 5.0  # a turn waits this long for the same session's previous turn to be stored
STOP_WAIT_S = 5.0  # a stop waits this long for the turn to end and be stored
SHUTDOWN_WAIT_S = 3.0
DISCONNECT_POLL_S = 0.25


class ClientGone(Exception):
    """The client closed the connection before its turn started."""


@dataclass
class Opened:
    """The session a request continues or starts; a new one is stored with its first turn (``seeded``: the
    history an OpenAI client sent)."""

    session: Session
    is_new: bool
    seeded: list[StoredTurn] = field(default_factory=list)


class TurnResponse(StreamingResponse):
    """A server-sent event stream that cancels its turn however the response ends (a closed connection too)."""

    def __init__(self, run: TurnRun, content: AsyncIterator[str], headers: dict[str, str]) -> None:
        super().__init__(content, media_type="text/event-stream", headers=headers)
        self.run = run

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.run.cancel("disconnected")  # nothing if the turn has ended


class Chat:
    """The chat routes of one worker: its generation queue, its running turns, its counters."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.queue = GenerationQueue(service.settings.queue)
        self.streams = Streams(service.settings.run_dir)
        self.metrics = Metrics()
        self.stopping = threading.Event()  # set when the server is asked to stop (SIGTERM, Ctrl-C)
        self._by_session: dict[str, TurnRun] = {}

    def watch_signals(self) -> None:
        """Chain a handler in front of uvicorn's for SIGTERM and SIGINT, so running turns end at once with
        "shutdown" (stored, the client told) instead of being cut when the graceful wait runs out. Only the main
        thread can set handlers (a test client runs the app elsewhere: then nothing changes)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous = signal.getsignal(sig)
            if not callable(previous):
                continue

            def handler(number: int, frame: FrameType | None, previous: SignalHandler = previous) -> None:
                self.stopping.set()
                previous(number, frame)

            signal.signal(sig, handler)

    # ---- POST /v1/chat/completions

    async def complete(self, request: Request, body: ChatRequest, caller: Caller) -> Response:
        service = self.service
        text = body.messages[-1].text
        check_length(service, text, "messages[-1].content")
        if body.session_id and (previous := self._by_session.get(body.session_id)) is not None:
            await previous.wait(PREVIOUS_TURN_WAIT_S)  # so this turn sees the previous one in the history
        opened = await run_in_threadpool(self._open, body, caller)
        try:
            ticket = await self._admit(request)
        except Refused as refused:
            self.metrics.turn("refused")
            body_ = oai.error_body(refused.message, "service_unavailable", 503, refused.reason)
            return JSONResponse(body_, status_code=503, headers={"Retry-After": str(refused.retry_after)})
        except ClientGone:
            self.metrics.turn("disconnected")
            return Response(status_code=499)
        session = opened.session
        system = service.system(session.language)
        max_tokens = body.max_completion_tokens or body.max_tokens or system.config.max_tokens
        model = body.model or service.settings.model
        cid = oai.completion_id()
        cancel = threading.Event()  # the generator stops at its next token when the turn is cancelled
        try:
            events = system.stream(session, text, max_tokens=max_tokens, temperature=body.temperature, cancel=cancel)
        except BaseException:
            self.queue.release(ticket)
            raise
        loop = asyncio.get_running_loop()
        watcher: list[asyncio.Task[None]] = []
        finish = partial(self._finish, opened, text, caller)
        on_exit = partial(self._exit, cid, session.id, ticket, watcher)
        run = TurnRun(events, finish, loop, on_exit, cancel)
        self.streams.add(cid, run, caller.owner or "")
        self._by_session[session.id] = run
        run.start()
        watcher.append(asyncio.create_task(self._watch(request, run)))
        check = self._checker(run, cid, ticket)
        if body.stream:
            headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "X-Session-Id": session.id}
            content = self._sse(run, session, cid, model, max_tokens, check)
            return TurnResponse(run, content, headers)
        return await self._whole(run, session, cid, model, max_tokens, check)

    # ---- POST /v1/chat/completions/{id}/stop

    async def stop(self, stream_id: str, caller: Caller) -> JSONDict:
        """End a running turn of this caller (stored as interrupted if its reply had begun); 404 when unknown."""
        owner = caller.owner or ""
        run = self.streams.local(stream_id, owner)
        if run is not None:
            run.cancel("stopped")
            ended = await run.wait(STOP_WAIT_S)
            stored = bool(run.outcome and run.outcome.stored)
            return {
                "id": stream_id,
                "object": "chat.completion.stop",
                "stopped": True,
                "ended": ended,
                "stored": stored,
            }
        if self.streams.request_stop(stream_id, owner):  # another worker of this machine runs it
            deadline = time.monotonic() + STOP_WAIT_S
            while self.streams.running_elsewhere(stream_id) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            ended = not self.streams.running_elsewhere(stream_id)
            return {"id": stream_id, "object": "chat.completion.stop", "stopped": True, "ended": ended}
        raise fail(
            404, f"no running completion {shown(stream_id)} (finished, never started, or another caller's)", "id"
        )

    async def shutdown(self) -> None:
        """Cancel every running turn (stored as interrupted where its reply had begun) and wait a little."""
        runs = self.streams.runs()
        for run in runs:
            run.cancel("shutdown")
        deadline = time.monotonic() + SHUTDOWN_WAIT_S
        while any(not run.ended.is_set() for run in runs) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)

    def health(self) -> JSONDict:
        """The queue as ``/healthz`` shows it, and whether this worker is ``ok``, ``saturated`` or ``stuck``."""
        queue, limits = self.queue, self.queue.limits
        oldest_turn = queue.oldest_turn_s()
        if oldest_turn > limits.time_limit_s + 30.0:
            status = "stuck"
        elif queue.waiting >= limits.max_waiting and queue.running >= limits.slots:
            status = "saturated"
        else:
            status = "ok"
        stats = queue.stats
        return {
            "status": status,
            "slots": limits.slots,
            "running": queue.running,
            "waiting": queue.waiting,
            "max_waiting": limits.max_waiting,
            "max_wait_s": limits.max_wait_s,
            "time_limit_s": limits.time_limit_s,
            "oldest_wait_s": round(queue.oldest_wait_s(), 3),
            "oldest_turn_s": round(oldest_turn, 3),
            "admitted": stats.admitted,
            "mean_wait_ms": round(1000.0 * stats.wait_sum_s / stats.admitted, 1) if stats.admitted else 0.0,
            "refused": dict(stats.refused),
        }

    # ---- a turn's steps

    def _open(self, body: ChatRequest, caller: Caller) -> Opened:
        """The caller's stored session named by ``session_id``, or a new one (not stored yet) seeded with the
        history the client sent."""
        service = self.service
        if body.session_id:
            session = load_session(service, body.session_id, caller, body.profile)
            if body.language and body.language != session.language:
                raise fail(422, f"session {session.id!r} is in language {session.language!r}", "language")
            return Opened(session, is_new=False)
        text = body.messages[-1].text
        language_ = language(service, body.language) if body.language else detected(service, text)
        session = Session.new(profile(service, language_, body.profile), language_)
        seeded = []
        for message in body.messages[:-1]:
            if message.role in ("user", "assistant") and message.text.strip():
                check_length(service, message.text, "messages")
                speaker = Speaker.USER if message.role == "user" else Speaker.SYSTEM
                seeded.append(StoredTurn(Turn(speaker, message.text)))
        session.history = [s.turn for s in seeded]
        return Opened(session, is_new=True, seeded=seeded)

    async def _admit(self, request: Request) -> Ticket:
        """A queue slot; ``Refused`` (503) or ``ClientGone`` when the client leaves while it waits."""
        acquire = asyncio.ensure_future(self.queue.acquire())
        gone = asyncio.ensure_future(_disconnected(request))
        try:
            await asyncio.wait({acquire, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
        if acquire.done():
            return acquire.result()  # the ticket, or Refused
        acquire.cancel()
        await asyncio.gather(acquire, return_exceptions=True)
        if acquire.done() and not acquire.cancelled() and acquire.exception() is None:
            self.queue.release(acquire.result())  # it got a slot just before the cancel
        raise ClientGone

    async def _watch(self, request: Request, run: TurnRun) -> None:
        """Cancel ``run`` as soon as its client closes the connection (also while no text is flowing)."""
        with contextlib.suppress(asyncio.CancelledError):
            await _disconnected(request)
            run.cancel("disconnected")

    def _checker(self, run: TurnRun, cid: str, ticket: Ticket) -> Callable[[], None]:
        deadline = ticket.started + self.queue.limits.time_limit_s

        def check() -> None:
            if self.stopping.is_set():
                run.cancel("shutdown")
            elif time.monotonic() > deadline:
                run.cancel("timeout")
            elif self.streams.stop_requested(cid):
                run.cancel("stopped")

        return check

    def _finish(self, opened: Opened, text: str, caller: Caller, outcome: Outcome) -> None:
        """In the turn's thread, once it has ended: count its tokens, store it. The counts are the turn's own:
        the reply's usage, or for a turn that ended early what its ``Prepared`` had read and the pieces sent."""
        if outcome.reply is not None and outcome.reply.usage:
            outcome.usage = outcome.reply.usage.copy()
        else:
            read = outcome.prepared.usage if outcome.prepared is not None else Usage()
            pieces = outcome.reply.tokens if outcome.reply is not None else len(outcome.pieces)
            prompt = read.get("prompt_tokens", 0)
            outcome.usage = {"prompt_tokens": prompt, "completion_tokens": pieces, "counted": "words"}
        self._store(opened, text, caller, outcome)

    def _store(self, opened: Opened, text: str, caller: Caller, outcome: Outcome) -> None:
        """Store a finished turn; see the module docstring for what is kept."""
        session = opened.session
        if outcome.kind == "completed" and outcome.reply is not None:
            record = outcome.reply.record
            turns, state = record_turns(record), dict(record.state)
        elif outcome.kind in REASONS and outcome.prepared is not None and "".join(outcome.pieces).strip():
            turns, state = _interrupted(outcome, text), None
        else:
            return
        store = self.service.store
        if opened.is_new:
            if state is not None:
                session.state = state
            store.create(session, [*opened.seeded, *turns], owner=caller.owner)
        else:
            store.append(session.id, turns, state, owner=caller.owner)
        outcome.stored = True

    def _exit(
        self,
        cid: str,
        session_id: str,
        ticket: Ticket,
        watcher: list[asyncio.Task[None]],
        outcome: Outcome,
    ) -> None:
        """On the loop, after the turn's thread has stored it: free the slot, forget the turn, count it."""
        self.queue.release(ticket)
        self.streams.remove(cid)
        run = self._by_session.get(session_id)
        if run is not None and run.ended.is_set():
            self._by_session.pop(session_id, None)
        for task in watcher:
            task.cancel()
        usage = outcome.usage
        prompt, completion = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
        self.metrics.turn(outcome.kind, time.monotonic() - ticket.started, prompt, completion)

    # ---- responses

    async def _sse(
        self,
        run: TurnRun,
        session: Session,
        cid: str,
        model: str,
        max_tokens: int,
        check: Callable[[], None],
    ) -> AsyncIterator[str]:
        """Server-sent events in the OpenAI chunk format; the first chunk carries the cited knowledge."""
        async for item in run.events(check=check, heartbeat=HEARTBEAT_S):
            if isinstance(item, Heartbeat):
                yield ": keep-alive\n\n"
            elif isinstance(item, Prepared):
                extension: JSONDict = {
                    "session_id": session.id,
                    "language": session.language,
                    "knowledge": [c.to_dict() for c in item.knowledge],
                    "decision": item.decision.to_dict(),
                    "timings": item.timings,
                }
                yield oai.sse(oai.chunk(cid, model, {"role": "assistant", "content": ""}, extension=extension))
            elif isinstance(item, Piece):
                yield oai.sse(oai.chunk(cid, model, {"content": item.text}))
            elif isinstance(item, Ended):
                failure = _failure(item, self.queue.limits.time_limit_s)
                if failure is not None:
                    status, message = failure
                    yield oai.sse(oai.error_body(message, ERROR_KINDS.get(status, "error"), status))
                else:
                    final = _final(item.outcome, session, max_tokens)
                    yield oai.sse(
                        oai.chunk(cid, model, {}, as_text_or_none(final.pop("finish")), final, _usage(item.outcome))
                    )
            elif isinstance(item, Abandoned):
                status, message = _abandoned(item, self.queue.limits.time_limit_s)
                yield oai.sse(oai.error_body(message, ERROR_KINDS.get(status, "error"), status))
        yield oai.sse("[DONE]")

    async def _whole(
        self,
        run: TurnRun,
        session: Session,
        cid: str,
        model: str,
        max_tokens: int,
        check: Callable[[], None],
    ) -> Response:
        """The ``chat.completion`` object once the turn has ended (or an error with its status)."""
        async for item in run.events(check=check):
            if isinstance(item, Abandoned):
                status, message = _abandoned(item, self.queue.limits.time_limit_s)
                return JSONResponse(oai.error_body(message, ERROR_KINDS[status], status), status_code=status)
            if isinstance(item, Ended):
                failure = _failure(item, self.queue.limits.time_limit_s)
                if failure is not None:
                    status, message = failure
                    headers = {"Retry-After": str(RETRY_AFTER_S)} if status == 503 else None
                    body = oai.error_body(message, ERROR_KINDS[status], status)
                    return JSONResponse(body, status_code=status, headers=headers)
                outcome = item.outcome
                final = _final(outcome, session, max_tokens)
                finish = final.pop("finish")
                body = {
                    "id": cid,
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": outcome.text}, "finish_reason": finish}
                    ],
                    "usage": _usage(outcome),
                    "ragdial": final,
                }
                return JSONResponse(body)
        raise HTTPException(500, {"message": "the turn ended without an outcome"})


async def _disconnected(request: Request) -> None:
    """Return once the client has closed the connection."""
    while not await request.is_disconnected():
        await asyncio.sleep(DISCONNECT_POLL_S)


def _interrupted(outcome: Outcome, text: str) -> list[StoredTurn]:
    """The user's turn and the partial reply of a turn that ended early, marked with the reason."""
    prepared = outcome.prepared
    assert prepared is not None
    partial_text = "".join(outcome.pieces).strip()
    reply = Turn(Speaker.SYSTEM, partial_text, knowledge_ids=[c.id for c in prepared.knowledge])
    meta: JSONDict = {
        "decision": prepared.decision.to_dict(),
        "timings": prepared.timings,
        "tokens": len(outcome.pieces),
        "interrupted": outcome.kind,
    }
    return [StoredTurn(Turn(Speaker.USER, text)), StoredTurn(reply, list(prepared.knowledge), meta)]


RETRY_AFTER_S = 1  # what a 503 for an unreachable session store or a shutdown asks the client to wait


def _failure(ended: Ended, time_limit_s: float) -> tuple[int, str] | None:
    """The status and message of a turn that did not end with a reply to send, else None."""
    outcome, error = ended.outcome, ended.store_error
    if isinstance(error, UnknownSessionError):
        return 404, "the session was deleted while answering"
    if isinstance(error, StoreUnavailableError):
        return 503, f"session store unavailable: {error}; the turn was not stored"
    if error is not None:
        return 500, f"the turn could not be stored: {type(error).__name__}: {error}"
    if outcome.kind == "error":
        err = outcome.error
        return 500, f"generation failed: {type(err).__name__}: {err}"
    if outcome.kind == "timeout":
        kept = "; the partial reply is stored marked interrupted" if outcome.stored else ""
        return 504, f"the turn took longer than the time limit of {time_limit_s:g} s and was stopped{kept}"
    if outcome.kind == "shutdown":
        return 503, "the server is shutting down; try again"
    return None


def _abandoned(item: Abandoned, time_limit_s: float) -> tuple[int, str]:
    if item.reason == "timeout":
        return 504, f"the turn took longer than the time limit of {time_limit_s:g} s and was stopped"
    if item.reason == "shutdown":
        return 503, "the server is shutting down; try again"
    return 500, f"the turn did not end after it was {item.reason}"


def _usage(outcome: Outcome) -> dict[str, int]:
    usage = outcome.usage
    return oai.usage(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0))


def _final(outcome: Outcome, session: Session, max_tokens: int) -> JSONDict:
    """The ``ragdial`` extension of the last chunk (and ``finish`` and ``tokens``) of a completed or stopped turn."""
    if outcome.reply is not None:
        reply = outcome.reply
        final = {"session_id": session.id, **reply.to_dict(), "stored": outcome.stored}
        final.pop("text")
        final["usage_counted"] = outcome.usage.get("counted", "words")
        final["finish"] = oai.finish_reason(reply, max_tokens)
        return final
    prepared = outcome.prepared
    return {
        "session_id": session.id,
        "knowledge": [c.to_dict() for c in prepared.knowledge] if prepared else [],
        "decision": prepared.decision.to_dict() if prepared else None,
        "timings": prepared.timings if prepared else {},
        "tokens": len(outcome.pieces),
        "interrupted": outcome.kind,
        "stored": outcome.stored,
        "usage_counted": outcome.usage.get("counted", "words"),
        "finish": "stop",
    }
