"""One turn of the service, run in its own thread and read by the response on the event loop.

The thread iterates the pipeline's events, keeps what was produced, and ends however the turn ends: the reply is
complete, or ``cancel(reason)`` was called (the user pressed stop, the connection closed, the time limit passed,
the server is stopping), or a component failed. In every case the thread itself closes the pipeline's stream, so
each lock the stream holds is released there and then, and hands the outcome to ``finish`` (the app stores it)
before the response sees the end. The response never waits on a lock: it reads events from an asyncio queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from ragdial.pipeline.system import Event, Piece, Prepared, Reply
from ragdial.pipeline.turn import Usage

T = TypeVar("T")

REASONS = ("stopped", "disconnected", "timeout", "shutdown")


@dataclass
class Outcome:
    """How a turn ended: ``completed``, one of ``REASONS``, or ``error``; what it produced up to then."""

    kind: str
    prepared: Prepared | None = None
    pieces: list[str] = field(default_factory=list)
    reply: Reply | None = None
    error: BaseException | None = None
    seconds: float = 0.0
    stored: bool = False  # set by the app's ``finish`` when it stored the turn
    usage: Usage = field(default_factory=lambda: Usage())  # prompt and completion tokens, set by ``finish``

    @property
    def text(self) -> str:
        return self.reply.text if self.reply is not None else "".join(self.pieces).strip()


@dataclass
class Ended:
    """The last item of a run's event stream: the outcome, and what storing it raised (if anything)."""

    outcome: Outcome
    store_error: BaseException | None = None


@dataclass
class Heartbeat:
    """Nothing happened for a while (the response may send a keep-alive)."""


@dataclass
class Abandoned:
    """The last item when a cancelled turn did not end within the grace period."""

    reason: str


class TurnRun:
    """A turn's events produced by a worker thread; ``events()`` yields them on the loop, then an ``Ended``."""

    def __init__(
        self,
        events: Iterator[Event],
        finish: Callable[[Outcome], None],
        loop: asyncio.AbstractEventLoop,
        on_exit: Callable[[Outcome], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        """``finish(outcome)`` runs in the turn's thread once the stream is closed (the app stores the turn
        there); ``on_exit(outcome)`` runs on the loop after that (the app frees the turn's queue slot). ``cancel``:
        the event the pipeline's generator watches between tokens (set by ``cancel()``)."""
        self._events = events
        self._finish = finish
        self._on_exit = on_exit
        self._loop = loop
        self._queue: asyncio.Queue[Prepared | Piece | Ended] = asyncio.Queue()
        self._cancel = cancel if cancel is not None else threading.Event()
        self.reason: str | None = None
        self.ended = threading.Event()
        self.outcome: Outcome | None = None
        self._exited = False
        self._thread = threading.Thread(target=self._run, name="ragdial-turn", daemon=True)

    def start(self) -> TurnRun:
        self._thread.start()
        return self

    @property
    def cancel_event(self) -> threading.Event:
        """Set when the turn is cancelled (a generator may watch it between tokens)."""
        return self._cancel

    def cancel(self, reason: str) -> bool:
        """Ask the turn to end (the first reason wins); False when it had already ended or been cancelled."""
        if self.ended.is_set() or self._cancel.is_set():
            return False
        self.reason = reason
        self._cancel.set()
        return True

    def join(self, timeout: float | None = None) -> bool:
        """Wait (blocking) until the turn's thread has stored its outcome; True if it has."""
        return self.ended.wait(timeout)

    async def wait(self, timeout: float) -> bool:
        """Wait on the loop until the turn has ended; True if it has."""
        deadline = time.monotonic() + timeout
        while not self.ended.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return self.ended.is_set()

    async def events(
        self,
        poll: float = 0.25,
        check: Callable[[], None] | None = None,
        grace: float = 2.0,
        heartbeat: float | None = None,
    ) -> AsyncIterator[Prepared | Piece | Ended | Abandoned | Heartbeat]:
        """The turn's ``Prepared`` and ``Piece`` events, then one ``Ended``; ``check()`` runs before each item and
        at least every ``poll`` seconds (it may cancel the turn: the time limit, a stop from another worker).
        A turn still busy ``grace`` seconds after it was cancelled (a component blocked in one long call) ends
        the events with ``Abandoned``: the response finishes now, the thread stores its outcome when it can.
        With ``heartbeat``, a ``Heartbeat`` comes after that many seconds without an event."""
        cancelled_at: float | None = None
        last = time.monotonic()
        while True:
            if check is not None:
                check()
            if self._cancel.is_set() and not self.ended.is_set():
                cancelled_at = cancelled_at or time.monotonic()
                if time.monotonic() - cancelled_at > grace:
                    yield Abandoned(self.reason or "disconnected")
                    return
            try:
                item = await asyncio.wait_for(self._queue.get(), poll)
            except TimeoutError:
                if heartbeat is not None and time.monotonic() - last > heartbeat:
                    last = time.monotonic()
                    yield Heartbeat()
                continue
            last = time.monotonic()
            if isinstance(item, Ended):
                self._exit(item.outcome)  # now, on the loop, before the response ends
            yield item
            if isinstance(item, Ended):
                return

    # ---- the turn's thread

    def _run(self) -> None:
        start = time.monotonic()
        outcome = Outcome("error")
        try:
            for event in self._events:
                if isinstance(event, Reply):
                    if not self._cancel.is_set():  # after a cancel the generator stopped early: not a whole reply
                        outcome.reply = event
                    break
                if self._cancel.is_set():
                    break
                if isinstance(event, Prepared):
                    outcome.prepared = event
                elif isinstance(event, Piece):
                    outcome.pieces.append(event.text)
                self._post(event)
                if self._cancel.is_set():
                    break
        except Exception as err:  # a component failed: the turn ends with an error
            outcome.error = err
        finally:
            close = getattr(self._events, "close", None)
            if callable(close):
                try:
                    close()  # here, in the thread that ran it: the stream's locks are released now
                except Exception as err:  # a close that fails must not hide the outcome
                    outcome.error = outcome.error or err
        if outcome.reply is not None:
            outcome.kind = "completed"
        elif outcome.error is None and self.reason:
            outcome.kind = self.reason
        elif outcome.error is None:
            outcome.error = RuntimeError("the turn's events ended without a reply")
        outcome.seconds = time.monotonic() - start
        self.outcome = outcome
        store_error = None
        try:
            self._finish(outcome)
        except Exception as err:  # reported to the client in-band
            store_error = err
        self.ended.set()
        self._post(Ended(outcome, store_error))
        self._call_soon(self._exit, outcome)  # in case nobody reads the events any more

    def _exit(self, outcome: Outcome) -> None:
        """Run ``on_exit`` once, on the loop (called by whichever comes first: the reader or the thread)."""
        if self._exited:
            return
        self._exited = True
        if self._on_exit is not None:
            self._on_exit(outcome)

    def _post(self, item: Prepared | Piece | Ended) -> None:
        self._call_soon(self._queue.put_nowait, item)

    def _call_soon(self, function: Callable[[T], object], arg: T) -> None:
        with contextlib.suppress(RuntimeError):  # a closed loop (the server stopped): nobody reads any more
            self._loop.call_soon_threadsafe(function, arg)
