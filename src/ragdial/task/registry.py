"""``TASKS``: the task branches a config can name in its ``task`` block: ``task: {name: travel, db: ..., today: ...}``
builds ``travel``, the flight/train/hotel booking dialog over a travel database (generated at start-up where the file
is missing, never in the middle of a turn)."""

from __future__ import annotations

import datetime as dt

from ragdial.components import BuildContext, ConfigError, Registry
from ragdial.task.manager import TaskBranch

TASKS: Registry[TaskBranch] = Registry("task")


def travel(
    ctx: BuildContext | None, db: str | None = None, today: str | None = None, acts: str = "learned"
) -> TaskBranch:
    """The travel booking dialog over ``db`` (a path or ``sqlite:///`` URL; default: the cache's travel database);
    ``today`` (YYYY-MM-DD) is the date relative dates count from (default: the database's first day); ``acts``
    is ``learned`` (the learned act model with the rules) or ``rules`` (the rule layer alone)."""
    from ragdial.task.db import TravelDB, ensure_travel_db

    day = None
    if today:
        try:
            day = dt.date.fromisoformat(today)
        except ValueError as err:
            raise ConfigError(f"task 'travel', field 'today': {today!r} is not a date YYYY-MM-DD") from err
    if acts not in ("learned", "rules"):
        raise ConfigError(f"task 'travel', field 'acts': {acts!r} is not 'learned' or 'rules'")
    return TaskBranch(TravelDB(ensure_travel_db(db)), today=day, acts=acts)


TASKS.register("travel", travel, "flight/train/hotel booking over a travel database: {name: travel, db, today, acts}")
