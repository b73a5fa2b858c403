"""Shared by the task-branch dialog tests: the small seeded travel database and a helper that talks a dialog through."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from ragdial.task.db import Gazetteer, TravelDB
from ragdial.task.dbgen import generate

TODAY = dt.date(2026, 12, 1)  # a Tuesday

# the act reader's context while two flights from 北京 to 上海 are listed and the user is to choose one
FLIGHT_CHOICE = {
    "domain": "flight",
    "open_question": "choose_offer",
    "state": {"domain": "flight", "dep_city": "北京", "arr_city": "上海", "date": "2026-12-02"},
    "offers": [
        {"code": "HU1663", "airline": "海航", "dep_time": "12:00", "price": 850, "seat_class": "经济舱"},
        {"code": "CA7410", "airline": "国航", "dep_time": "10:45", "price": 870, "seat_class": "经济舱"},
    ],
}


def small_travel_db(folder: Path) -> Path:
    """A five-day travel database from ``TODAY`` (seed 7) in ``folder``."""
    path = folder / "travel.sqlite"
    generate(path, seed=7, start=TODAY, days=5)
    return path


def travel_gazetteer(folder: Path, seed: int, days: int) -> Gazetteer:
    """The gazetteer (cities, brands, …) of a travel database generated from ``TODAY`` with ``seed`` in ``folder``."""
    path = folder / "travel.sqlite"
    generate(path, seed=seed, start=TODAY, days=days)
    return TravelDB(path).gazetteer()


def talk(branch, *texts, state=None):
    """Each of ``texts`` in turn through ``branch`` (from ``state``); the turns, each state checked JSON-storable."""
    turns = []
    for text in texts:
        turn = branch.respond(state, text)
        json.dumps(turn.state)  # the state must survive a JSON session store
        state = turn.state
        turns.append(turn)
    return turns
