"""The task branch: travel databases (flight, train, hotel), slot parsing, dialog manager, goals and simulator."""

from ragdial.task.db import TravelDB, default_db_path
from ragdial.task.manager import STATE_KEY, UNDER_WAY_KEYS, TaskBranch, TaskTurn, new_state, under_way
from ragdial.task.registry import TASKS

__all__ = [
    "STATE_KEY",
    "TASKS",
    "UNDER_WAY_KEYS",
    "TaskBranch",
    "TaskTurn",
    "TravelDB",
    "default_db_path",
    "new_state",
    "under_way",
]
