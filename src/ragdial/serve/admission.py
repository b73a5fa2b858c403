"""Admission to generation: at most ``slots`` turns are answered at once in a worker, at most ``max_waiting`` more
wait, each at most ``max_wait_s`` seconds; every other request is refused at once with a reason and a
``Retry-After`` estimate (the app answers 503), never left hanging.

All methods run on the worker's event loop (a turn's thread hands its slot back with ``loop.call_soon_threadsafe``),
so the counters need no lock.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from dataclasses import dataclass, field


class Refused(Exception):
    """A request the queue will not take: ``reason`` is ``queue_full`` or ``wait_timeout``."""

    def __init__(self, reason: str, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.retry_after = retry_after


@dataclass(frozen=True)
class QueueLimits:
    """How many turns run at once, how many may wait and for how long, and how long one turn may take."""

    slots: int = 1
    max_waiting: int = 64
    max_wait_s: float = 30.0
    time_limit_s: float = 120.0

    def __post_init__(self) -> None:
        if self.slots < 1 or self.max_waiting < 0 or self.max_wait_s <= 0 or self.time_limit_s <= 0:
            raise ValueError(f"invalid queue limits {self}: slots >= 1, max_waiting >= 0, times > 0")


@dataclass
class Ticket:
    """A slot held by one turn; ``waited_s`` is how long it queued."""

    started: float
    waited_s: float


WAIT_BUCKETS = (0.005, 0.05, 0.25, 1.0, 5.0, 15.0, 30.0, 60.0)


@dataclass
class QueueStats:
    admitted: int = 0
    refused: dict[str, int] = field(default_factory=lambda: {"queue_full": 0, "wait_timeout": 0})
    wait_sum_s: float = 0.0
    wait_buckets: list[int] = field(default_factory=lambda: [0] * len(WAIT_BUCKETS))
    turn_s: float = 1.0  # a moving average of how long a turn holds its slot (for Retry-After)


class GenerationQueue:
    """A bounded, first-come first-served queue in front of the dialog system's turns."""

    def __init__(self, limits: QueueLimits) -> None:
        self.limits = limits
        self.stats = QueueStats()
        self._busy = 0  # slots taken: turns running plus slots handed to a waiter that has not resumed yet
        self._tickets: dict[int, Ticket] = {}
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._waiting_since: dict[int, float] = {}

    # ---- state

    @property
    def running(self) -> int:
        return len(self._tickets)

    @property
    def waiting(self) -> int:
        return sum(1 for f in self._waiting if not f.done())

    def oldest_wait_s(self) -> float:
        now = time.monotonic()
        return max((now - t for t in self._waiting_since.values()), default=0.0)

    def oldest_turn_s(self) -> float:
        now = time.monotonic()
        return max((now - t.started for t in self._tickets.values()), default=0.0)

    def retry_after(self) -> int:
        """Seconds until a slot is likely free: the queue ahead times the average turn, at least 1."""
        ahead = (self.waiting + 1) / self.limits.slots
        return max(1, math.ceil(min(ahead * self.stats.turn_s, self.limits.time_limit_s)))

    # ---- admission

    async def acquire(self) -> Ticket:
        """A slot, at once or after waiting in line; ``Refused`` when the line is full or the wait too long."""
        start = time.monotonic()
        if self._busy < self.limits.slots and not self.waiting:
            self._busy += 1
            return self._admit(start)
        if self.waiting >= self.limits.max_waiting:
            self.stats.refused["queue_full"] += 1
            message = (
                f"the service is busy: {self.running} turn(s) being answered and {self.waiting} waiting "
                f"(the limit is {self.limits.max_waiting} waiting); try again later"
            )
            raise Refused("queue_full", message, self.retry_after())
        loop = asyncio.get_running_loop()
        slot: asyncio.Future[None] = loop.create_future()
        self._waiting.append(slot)
        self._waiting_since[id(slot)] = start
        timer = loop.call_later(self.limits.max_wait_s, self._expire, slot)
        try:
            await slot
        except _Expired:
            self.stats.refused["wait_timeout"] += 1
            message = (
                f"the service is busy: no turn could start within {self.limits.max_wait_s:g} s "
                f"({self.running} being answered, {self.waiting} waiting); try again later"
            )
            raise Refused("wait_timeout", message, self.retry_after()) from None
        except asyncio.CancelledError:  # the client left while waiting; give back a slot handed over meanwhile
            if slot.done() and not slot.cancelled() and slot.exception() is None:
                self._free_slot()
            raise
        finally:
            timer.cancel()
            self._waiting_since.pop(id(slot), None)
            if slot in self._waiting:
                self._waiting.remove(slot)
        return self._admit(start)

    def release(self, ticket: Ticket) -> None:
        """Give the slot back (on the event loop): the next waiter gets it."""
        if self._tickets.pop(id(ticket), None) is None:
            return
        held = time.monotonic() - ticket.started
        self.stats.turn_s = 0.8 * self.stats.turn_s + 0.2 * held
        self._free_slot()

    # ---- helpers

    def _admit(self, start: float) -> Ticket:
        now = time.monotonic()
        ticket = Ticket(now, now - start)
        self._tickets[id(ticket)] = ticket
        self.stats.admitted += 1
        self.stats.wait_sum_s += ticket.waited_s
        for i, bound in enumerate(WAIT_BUCKETS):
            if ticket.waited_s <= bound:
                self.stats.wait_buckets[i] += 1
        return ticket

    def _free_slot(self) -> None:
        """A slot became free: hand it to the first live waiter (admitted when it resumes), else free it."""
        while self._waiting:
            slot = self._waiting.popleft()
            if not slot.done():
                slot.set_result(None)
                return
        self._busy -= 1

    def _expire(self, slot: asyncio.Future[None]) -> None:
        if not slot.done():
            slot.set_exception(_Expired())


class _Expired(Exception):
    pass
