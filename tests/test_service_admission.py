"""The generation queue: first come first served, bounded, refusing with a reason instead of hanging."""

from __future__ import annotations

import asyncio

import pytest

from ragdial.serve.admission import GenerationQueue, QueueLimits, Refused


def run(coroutine):
    return asyncio.run(coroutine)


def test_slots_then_first_come_first_served():
    async def scenario():
        queue = GenerationQueue(QueueLimits(slots=2, max_waiting=5, max_wait_s=10))
        first, second = await queue.acquire(), await queue.acquire()
        order: list[int] = []

        async def wait(n: int):
            ticket = await queue.acquire()
            order.append(n)
            return ticket

        waiters = [asyncio.create_task(wait(n)) for n in range(3)]
        await asyncio.sleep(0)
        assert (queue.running, queue.waiting) == (2, 3)
        queue.release(first)
        queue.release(second)
        tickets = [await waiters[0], await waiters[1]]
        assert order == [0, 1] and (queue.running, queue.waiting) == (2, 1)
        queue.release(tickets[0])
        third = await waiters[2]
        assert order == [0, 1, 2] and third.waited_s >= 0
        for ticket in (tickets[1], third):
            queue.release(ticket)
        assert (queue.running, queue.waiting) == (0, 0)
        queue.release(third)  # a second release of the same ticket changes nothing
        assert queue.stats.admitted == 5
        assert [await queue.acquire(), await queue.acquire()] and queue.running == 2

    run(scenario())


def test_a_full_line_is_refused_at_once_with_a_retry_after():
    async def scenario():
        queue = GenerationQueue(QueueLimits(slots=1, max_waiting=1, max_wait_s=10))
        await queue.acquire()
        waiter = asyncio.create_task(queue.acquire())
        await asyncio.sleep(0)
        with pytest.raises(Refused) as refused:
            await queue.acquire()
        assert refused.value.reason == "queue_full" and refused.value.retry_after >= 1
        assert "1 waiting" in refused.value.message
        assert queue.stats.refused == {"queue_full": 1, "wait_timeout": 0}
        waiter.cancel()

    run(scenario())


def test_a_wait_over_the_limit_is_refused_and_leaves_the_line():
    async def scenario():
        queue = GenerationQueue(QueueLimits(slots=1, max_waiting=4, max_wait_s=0.05))
        ticket = await queue.acquire()
        with pytest.raises(Refused) as refused:
            await queue.acquire()
        assert refused.value.reason == "wait_timeout" and "0.05 s" in refused.value.message
        assert queue.waiting == 0
        queue.release(ticket)
        assert queue.running == 0
        await queue.acquire()  # the slot is free again: no leak

    run(scenario())


def test_a_client_that_leaves_while_waiting_leaks_no_slot():
    async def scenario():
        queue = GenerationQueue(QueueLimits(slots=1, max_waiting=4, max_wait_s=10))
        ticket = await queue.acquire()
        gone = asyncio.create_task(queue.acquire())
        await asyncio.sleep(0)
        gone.cancel()
        await asyncio.sleep(0)
        assert queue.waiting == 0
        queue.release(ticket)
        assert queue.running == 0
        # handed the slot, then cancelled before it resumed: the slot goes to the next waiter
        ticket = await queue.acquire()
        handed = asyncio.create_task(queue.acquire())
        after = asyncio.create_task(queue.acquire())
        await asyncio.sleep(0)
        queue.release(ticket)
        handed.cancel()
        nxt = await after
        assert handed.cancelled() and queue.running == 1
        queue.release(nxt)
        assert queue.running == 0 and queue.waiting == 0
        await queue.acquire()
        blocked = asyncio.create_task(queue.acquire())  # one slot only: still bounded
        await asyncio.sleep(0)
        assert not blocked.done() and (queue.running, queue.waiting) == (1, 1)
        blocked.cancel()

    run(scenario())


def test_limits_are_checked():
    with pytest.raises(ValueError, match="invalid queue limits"):
        QueueLimits(slots=0)
    with pytest.raises(ValueError, match="invalid queue limits"):
        QueueLimits(max_wait_s=0)
