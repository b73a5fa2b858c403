"""Human rating: online tests of the system (a goal, a dialog, satisfaction/fluency/guidance ratings) and offline
ratings of system outputs, stored in SQLite and exported with agreement. ``rating_router`` is mounted by the
service under ``/rating``; ``rating_app`` serves the pages alone."""

from ragdial.rating.pages import rating_app, rating_router, system_backend, task_branch_backend
from ragdial.rating.store import RatingStore

__all__ = ["RatingStore", "rating_app", "rating_router", "system_backend", "task_branch_backend"]
