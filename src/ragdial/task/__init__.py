"""The task branch: travel databases (flight, train, hotel), slot parsing, dialog manager, goals and simulator."""

from ragdial.task.db import TravelDB, default_db_path
from ragdial.task.manager import TaskBranch, TaskTurn, new_state

__all__ = ["TaskBranch", "TaskTurn", "TravelDB", "default_db_path", "new_state"]
