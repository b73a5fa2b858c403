"""Shared set-up of the task-branch benchmarks (``task_nlu.py``, ``task_act_model.py``): the seed-0 database."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ragdial.task.db import TravelDB
from ragdial.task.dbgen import generate


@contextmanager
def seed_db(path: Path | None) -> Iterator[tuple[TravelDB, Path]]:
    """The seed-0 database the utterance banks refer to (``--db PATH`` when it exists, else built in a temporary
    folder, removed afterwards) and a scratch folder that lives as long as it (for a model trained in the run)."""
    with tempfile.TemporaryDirectory() as tmp:
        if path is None or not path.exists():
            path = Path(tmp) / "travel.sqlite"
            generate(path, seed=0)
        db = TravelDB(path)
        try:
            yield db, Path(tmp)
        finally:
            db.close()
