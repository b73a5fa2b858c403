"""A service turn in its own thread: complete, stopped, blocked, failed; the pipeline's locks are free afterwards."""

from __future__ import annotations

import asyncio
import threading

import service_doubles as doubles
from ragdial.pipeline import SystemConfig
from ragdial.pipeline.components import build_systems
from ragdial.pipeline.system import Piece, Prepared, Session
from ragdial.serve.turns import Abandoned, Ended, Outcome, TurnRun


def _system(generator: object):
    return build_systems(SystemConfig.from_data({**doubles.CONFIG, "generator": generator}))["zh"]


def _turn(system, text: str, stop_after: int | None = None, **options):
    """Run one turn; cancel it ("stopped") after ``stop_after`` pieces. The items seen and the stored outcomes."""
    stored: list[Outcome] = []
    exited: list[Outcome] = []

    async def scenario():
        loop = asyncio.get_running_loop()
        run = TurnRun(system.stream(Session.new("u1"), text), stored.append, loop, exited.append).start()
        items = []
        async for item in run.events(poll=0.05, **options):
            items.append(item)
            if stop_after is not None and sum(isinstance(i, Piece) for i in items) == stop_after:
                run.cancel("stopped")
        await asyncio.sleep(0.1)  # on_exit is called on the loop after the end
        return run, items

    run, items = asyncio.run(scenario())
    return run, items, stored, exited


def test_a_complete_turn_streams_then_ends_with_its_stored_outcome():
    run, items, stored, exited = _turn(_system("service_doubles:generator"), "畅游套餐多少钱")
    assert isinstance(items[0], Prepared) and isinstance(items[-1], Ended)
    pieces = [i.text for i in items if isinstance(i, Piece)]
    end = items[-1]
    assert end.outcome.kind == "completed" and end.store_error is None
    assert end.outcome.text == "".join(pieces).strip() and end.outcome.text.startswith("[畅游套餐多少钱]")
    assert stored == [end.outcome] and exited == [end.outcome]
    assert not run.cancel("stopped")  # an ended turn cannot be cancelled


def test_a_stopped_turn_keeps_its_pieces_and_frees_the_generator_at_once():
    system = _system({"name": "service_doubles:slow_generator", "delay": 0.05, "words": 500})
    _, items, stored, _ = _turn(system, "畅游套餐", stop_after=3)
    end = items[-1]
    assert isinstance(end, Ended) and end.outcome.kind == "stopped"
    assert 3 <= len(end.outcome.pieces) <= 4 and end.outcome.text.startswith("w0 w1 w2")
    assert stored[0].reply is None and stored[0].prepared is not None
    # the stream was closed in the turn's thread: the next turn on the same generator starts at once
    done = threading.Event()

    def next_turn() -> None:
        events = system.stream(Session.new(), "夜猫")
        if any(isinstance(event, Piece) for event in events):
            done.set()
        events.close()

    threading.Thread(target=next_turn, daemon=True).start()
    assert done.wait(30), "the generator's lock was still held"


def test_a_failing_component_ends_the_turn_with_an_error():
    _, items, stored, _ = _turn(_system("service_doubles:failing_generator"), "畅游套餐")
    end = items[-1]
    assert end.outcome.kind == "error" and "backend went away" in str(end.outcome.error)
    assert end.outcome.pieces == ["partial "] and stored[0].kind == "error"


def test_a_turn_blocked_in_one_long_call_is_abandoned_after_the_grace_period():
    system = _system({"name": "service_doubles:slow_generator", "first_delay": 1.5, "words": 2, "heeds_cancel": False})

    async def scenario():
        loop = asyncio.get_running_loop()
        run = TurnRun(system.stream(Session.new(), "畅游套餐"), lambda o: None, loop).start()
        items = []
        async for item in run.events(poll=0.05, grace=0.2):
            items.append(item)
            if isinstance(item, Prepared):
                await asyncio.sleep(0.2)  # the thread is now inside the generator's long first call
                run.cancel("timeout")
        return run, items

    run, items = asyncio.run(scenario())
    assert isinstance(items[-1], Abandoned) and items[-1].reason == "timeout"
    assert not run.ended.is_set()
    assert run.join(30) and run.outcome.kind == "timeout"  # the thread still ends and reports


def test_a_cancel_reaches_a_generator_inside_its_long_call():
    """The turn's cancel event is the generation request's: a generator that watches it (as llama.cpp does
    between tokens) stops inside a long call, so the turn ends at once instead of being abandoned."""
    system = _system({"name": "service_doubles:slow_generator", "first_delay": 30, "words": 2})

    async def scenario():
        loop = asyncio.get_running_loop()
        cancel = threading.Event()
        events = system.stream(Session.new(), "畅游套餐", cancel=cancel)
        run = TurnRun(events, lambda o: None, loop, cancel=cancel).start()
        items = []
        async for item in run.events(poll=0.05, grace=10):
            items.append(item)
            if isinstance(item, Prepared):
                await asyncio.sleep(0.2)  # inside the generator's 30 s first call
                run.cancel("stopped")
        return items

    items = asyncio.run(scenario())
    assert isinstance(items[-1], Ended) and items[-1].outcome.kind == "stopped"
    assert items[-1].outcome.seconds < 10  # ended by the cancel, long before the 30 s call would have returned


def test_a_stop_reaches_the_worker_that_streams_through_the_shared_folder(tmp_path):
    """Two workers' registries over one run folder (as `ragdial serve --workers 2` makes): a stop that lands on
    the other worker is handed over; another owner's or a finished stream's stop is refused (404)."""
    from ragdial.serve.streams import Streams

    streaming, other = Streams(str(tmp_path)), Streams(str(tmp_path))
    stream_id = "chatcmpl-" + "ab12" * 6
    run = object()
    streaming.add(stream_id, run, "key:a")  # type: ignore[arg-type]
    assert streaming.local(stream_id, "key:a") is run and other.local(stream_id, "key:a") is None
    assert not other.request_stop(stream_id, "key:b")  # another owner's stream: unknown to it
    assert not streaming.stop_requested(stream_id)
    assert other.request_stop(stream_id, "key:a") and streaming.stop_requested(stream_id)
    assert other.running_elsewhere(stream_id)
    streaming.remove(stream_id)
    assert not other.running_elsewhere(stream_id) and not other.request_stop(stream_id, "key:a")
    assert not other.request_stop("../../etc/passwd", "key:a")  # only completion ids name files
