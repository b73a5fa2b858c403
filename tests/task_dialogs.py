"""Shared by the task-branch dialog tests: the small seeded travel database and a helper that talks a dialog through."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from ragdial.task.dbgen import generate

TODAY = dt.date(2026, 12, 1)


def small_travel_db(folder: Path) -> Path:
    """A five-day travel database from ``TODAY`` (seed 7) in ``folder``."""
    path = folder / "travel.sqlite"
    generate(path, seed=7, start=TODAY, days=5)
    return path


def talk(branch, *texts, state=None):
    """Each of ``texts`` in turn through ``branch`` (from ``state``); the turns, each state checked JSON-storable."""
    turns = []
    for text in texts:
        turn = branch.respond(state, text)
        json.dumps(turn.state)  # the state must survive a JSON session store
        state = turn.state
        turns.append(turn)
    return turns
