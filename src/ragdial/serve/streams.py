"""The turns being answered, by completion id, so ``POST /v1/chat/completions/{id}/stop`` can end one.

A worker knows its own turns (``TurnRun`` objects). With several worker processes a stop may reach another worker
than the one streaming, so each turn is also announced as a small file in a folder the workers share
(``run_dir``, made by ``ragdial serve`` on this machine): ``<id>.json`` (its owner) while it runs, ``<id>.stop``
when another worker asks it to stop. The streaming worker looks for that file while it streams (``poll``).
Across machines (several hosts behind a balancer) a stop reaches only the host it lands on; closing the connection
ends a turn wherever it runs.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

from ragdial.serve.turns import TurnRun

STREAM_ID = re.compile(r"^chatcmpl-[0-9a-f]{24}$")


class Streams:
    """Running turns by completion id; with ``run_dir``, shared with this machine's other workers."""

    def __init__(self, run_dir: str | None = None) -> None:
        self._local: dict[str, tuple[TurnRun, str]] = {}
        self.folder = Path(run_dir) / "streams" if run_dir else None
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)

    def __len__(self) -> int:
        return len(self._local)

    def runs(self) -> list[TurnRun]:
        return [run for run, _ in self._local.values()]

    def add(self, stream_id: str, run: TurnRun, owner: str) -> None:
        self._local[stream_id] = (run, owner)
        if self.folder is not None:
            (self.folder / f"{stream_id}.json").write_text(json.dumps({"owner": owner}), encoding="utf-8")

    def remove(self, stream_id: str) -> None:
        self._local.pop(stream_id, None)
        if self.folder is not None:
            for suffix in (".json", ".stop"):
                with contextlib.suppress(FileNotFoundError):
                    (self.folder / f"{stream_id}{suffix}").unlink()

    def local(self, stream_id: str, owner: str) -> TurnRun | None:
        """This worker's run of ``stream_id`` if ``owner`` owns it."""
        found = self._local.get(stream_id)
        return found[0] if found is not None and found[1] == owner else None

    def request_stop(self, stream_id: str, owner: str) -> bool:
        """Ask another worker to stop ``stream_id``; False when no worker of this machine runs it for ``owner``."""
        if self.folder is None or not STREAM_ID.match(stream_id):
            return False
        try:
            data = json.loads((self.folder / f"{stream_id}.json").read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return False
        if data.get("owner") != owner:
            return False
        (self.folder / f"{stream_id}.stop").touch()
        return True

    def running_elsewhere(self, stream_id: str) -> bool:
        return self.folder is not None and (self.folder / f"{stream_id}.json").exists()

    def stop_requested(self, stream_id: str) -> bool:
        """Whether another worker asked this worker's ``stream_id`` to stop."""
        return self.folder is not None and (self.folder / f"{stream_id}.stop").exists()
