"""The knowledge items of an index directory without holding them: an item store read from ``items.jsonl`` by
offset, and the per-item columns candidate selection needs (scope, source, entity), saved as arrays.

``ItemStore`` is a ``Sequence[Knowledge]`` (``store[i]`` reads and parses line ``i``) that also answers what a
``KnowledgeBase`` answers (``get(id)``, ``id in store``; the id table is built on the first such question).
``ItemColumns`` holds one small integer per item and column, so a retriever selects candidates by scope, source
and entity without reading an item.
"""

from __future__ import annotations

import json
import os
import threading
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import overload

import numpy as np

from ragdial.errors import RagdialError
from ragdial.schema import GLOBAL_SCOPE, Knowledge, SourceKind, UnknownKnowledgeError

ITEMS = "items.jsonl"
OFFSETS = "items.offsets.npy"
COLUMNS = "columns.json"
COLUMN_ARRAYS = ("scope", "source", "entity")


class ItemStore(Sequence[Knowledge]):
    """The items of ``items.jsonl`` by position, each read from disk when asked for (``items.offsets.npy``: the
    byte offset of every line and of the end)."""

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory) / ITEMS
        self._offsets = np.load(Path(directory) / OFFSETS, mmap_mode="r")
        if len(self._offsets) == 0 or int(self._offsets[-1]) != self.path.stat().st_size:
            raise RagdialError(f"{self.path}: {OFFSETS} does not match it (rebuild the index)")
        self._fd = os.open(self.path, os.O_RDONLY)
        self._ids: dict[str, int] | None = None
        self._lock = threading.Lock()

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            os.close(fd)

    def __len__(self) -> int:
        return len(self._offsets) - 1

    @overload
    def __getitem__(self, index: int) -> Knowledge: ...
    @overload
    def __getitem__(self, index: slice) -> list[Knowledge]: ...
    def __getitem__(self, index: int | slice) -> Knowledge | list[Knowledge]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError(f"item {index} of {size}")
        start, stop = int(self._offsets[index]), int(self._offsets[index + 1])
        line = os.pread(self._fd, stop - start, start)  # no shared file position: safe from any thread
        return Knowledge.from_dict(json.loads(line))

    def __iter__(self) -> Iterator[Knowledge]:
        with open(self.path, encoding="utf-8") as handle:
            for line in handle:
                yield Knowledge.from_dict(json.loads(line))

    def _id_table(self) -> dict[str, int]:
        with self._lock:
            if self._ids is None:
                self._ids = {item.id: i for i, item in enumerate(self)}
            return self._ids

    def __contains__(self, item_id: object) -> bool:
        return isinstance(item_id, str) and item_id in self._id_table()

    def get(self, item_id: str) -> Knowledge:
        """The item with this id (reads every id once, on the first call)."""
        position = self._id_table().get(item_id)
        if position is None:
            raise UnknownKnowledgeError(f"unknown knowledge id {item_id!r}")
        return self[position]

    def position(self, item_id: str) -> int:
        return self._id_table()[item_id]


def write_offsets(directory: Path, items: Iterable[Knowledge]) -> int:
    """Write ``items.jsonl`` and ``items.offsets.npy`` into ``directory``; the number of items."""
    offsets = array("q", [0])  # 8 bytes an item, not a Python integer
    with open(directory / ITEMS, "wb") as handle:
        for item in items:
            line = (json.dumps(item.to_dict(), ensure_ascii=False) + "\n").encode("utf-8")
            handle.write(line)
            offsets.append(offsets[-1] + len(line))
    np.save(directory / OFFSETS, np.frombuffer(offsets, dtype=np.int64), allow_pickle=False)
    return len(offsets) - 1


@dataclass
class ItemColumns:
    """Per item: the code of its scope in ``scopes`` (``GLOBAL_SCOPE`` is code 0), of its source in ``sources``, and
    of its entity name in ``entities`` (-1: none)."""

    scope: np.ndarray
    source: np.ndarray
    entity: np.ndarray
    scopes: list[str]
    sources: list[str]
    entities: list[str]

    @classmethod
    def of(cls, items: Iterable[Knowledge]) -> ItemColumns:
        builder = ColumnsBuilder()
        for item in items:
            builder.add(item)
        return builder.build()

    def __len__(self) -> int:
        return len(self.scope)

    def save(self, directory: Path) -> None:
        for name in COLUMN_ARRAYS:
            np.save(directory / f"column.{name}.npy", getattr(self, name), allow_pickle=False)
        tables = {"scopes": self.scopes, "sources": self.sources, "entities": self.entities}
        (directory / COLUMNS).write_text(json.dumps(tables, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> ItemColumns:
        tables = json.loads((directory / COLUMNS).read_text(encoding="utf-8"))
        scope, source, entity = (np.load(directory / f"column.{name}.npy", mmap_mode="r") for name in COLUMN_ARRAYS)
        return cls(scope, source, entity, tables["scopes"], tables["sources"], tables["entities"])

    def source_codes(self, sources: Iterable[SourceKind]) -> list[int]:
        return [self.sources.index(s.value) for s in sources if s.value in self.sources]


class ColumnsBuilder:
    """``ItemColumns`` from items one at a time."""

    def __init__(self) -> None:
        self._codes: dict[str, dict[str, int]] = {"scope": {GLOBAL_SCOPE: 0}, "source": {}, "entity": {}}
        self._rows = {name: array("i") for name in COLUMN_ARRAYS}  # 4 bytes an item and column

    def add(self, item: Knowledge) -> None:
        codes, rows = self._codes, self._rows
        rows["scope"].append(codes["scope"].setdefault(item.scope, len(codes["scope"])))
        rows["source"].append(codes["source"].setdefault(item.source.value, len(codes["source"])))
        name = item.fields.get("entity")
        entity = codes["entity"].setdefault(name, len(codes["entity"])) if isinstance(name, str) and name else -1
        rows["entity"].append(entity)

    def build(self) -> ItemColumns:
        rows, codes = self._rows, self._codes
        return ItemColumns(
            np.frombuffer(rows["scope"], dtype=np.int32).copy(),
            np.frombuffer(rows["source"], dtype=np.int32).astype(np.int16),
            np.frombuffer(rows["entity"], dtype=np.int32).copy(),
            list(codes["scope"]),
            list(codes["source"]),
            list(codes["entity"]),
        )
