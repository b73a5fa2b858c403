"""Run many simulated dialogs against a system and write per-dialog logs (shared by the CLI and benchmarks)."""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ragdial.task.db import TravelDB
from ragdial.task.goals import Goal, goals_as_booked, sample_goals
from ragdial.task.manager import TaskBranch
from ragdial.task.simulator import Channel, DialogResult, InProcessChannel, Noise, run_dialog, summarise


def simulate(
    db_url: str | Path | None,
    n_goals: int,
    seed: int,
    noise: Noise | None = None,
    channel_factory: Callable[[TravelDB], Channel] | None = None,
    today: dt.date | None = None,
    by_sound: bool = True,
    acts: str = "learned",
    changes: float = 0.0,
    up_front: bool = False,
) -> Iterator[DialogResult]:
    """Yield one result per goal. By default the system is an in-process ``TaskBranch`` on a scratch copy of
    the database (bookings do not touch the file); ``channel_factory`` plugs in another system (HTTP).
    ``changes``: the share of goals that change their last booking once everything is booked. Each goal is
    sampled against the database as the dialogs before it left it; ``up_front`` samples them all first (the way
    before session 9: a goal can then ask for what an earlier dialog booked)."""
    scratch = channel_factory is None
    db = TravelDB(db_url, scratch=scratch)
    start = today or dt.date.fromisoformat(db.meta["start"])
    goals: Iterable[Goal] = (
        sample_goals(db, n_goals, seed, start, changes=changes)
        if up_front
        else goals_as_booked(db, n_goals, seed, start, changes=changes)  # (each against the DB as it is then)
    )
    channel = (
        channel_factory(db)
        if channel_factory
        else InProcessChannel(TaskBranch(db, today=start, by_sound=by_sound, acts=acts))
    )
    for goal in goals:
        yield run_dialog(
            goal, channel, db, start, seed=random.Random(seed * 1_000_003 + goal.id).randrange(2**31), noise=noise
        )


def write_logs(results: list[DialogResult], out_dir: Path) -> Path:
    """``dialogs.jsonl`` (one dialog a line) and ``metrics.json`` under ``out_dir``; returns the metrics path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / "dialogs.jsonl.tmp"
    with tmp.open("w", encoding="utf-8") as fh:
        for result in results:
            fh.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
    tmp.replace(out_dir / "dialogs.jsonl")
    metrics = summarise(results)
    path = out_dir / "metrics.json"
    path.write_text(json.dumps(metrics, ensure_ascii=False, indent=2), encoding="utf-8")
    return path
