"""Reading and writing files: errors that name the file, record and field; atomic writes (nothing half-written)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO, TypeVar, overload

from ragdial.errors import DataFormatError
from ragdial.jsontypes import JSONValue

T = TypeVar("T")
U = TypeVar("U")
V = TypeVar("V")


def read_json(path: str | Path) -> JSONValue:
    """Parse a UTF-8 JSON file, reporting a missing file, a wrong encoding or bad JSON by file and position."""
    path = Path(path)
    if not path.is_file():
        raise DataFormatError(path, "file not found")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise DataFormatError(path, f"not UTF-8 (byte {err.start}: {raw[err.start : err.start + 1]!r})") from None
    try:
        value: JSONValue = json.loads(text)
        return value
    except json.JSONDecodeError as err:
        raise DataFormatError(path, f"malformed JSON at line {err.lineno}, column {err.colno}: {err.msg}") from None


@overload
def field(path: str | Path, record: str | int, data: object, name: str, kind: type[T]) -> T: ...
@overload
def field(path: str | Path, record: str | int, data: object, name: str, kind: tuple[type[T], type[U]]) -> T | U: ...
@overload
def field(
    path: str | Path, record: str | int, data: object, name: str, kind: tuple[type[T], type[U], type[V]]
) -> T | U | V: ...
def field(path: str | Path, record: str | int, data: object, name: str, kind: type | tuple[type, ...]) -> object:
    """``data[name]``, which must exist and be of ``kind``; otherwise a :class:`DataFormatError`."""
    if not isinstance(data, Mapping):
        raise DataFormatError(path, f"expected an object, found {type(data).__name__}", record)
    if name not in data:
        raise DataFormatError(path, "required field is missing", record, name)
    value = data[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = "/".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise DataFormatError(path, f"expected {names}, found {type(value).__name__}", record, name)
    return value


@overload
def expect(path: str | Path, value: object, kind: type[T], record: str | int | None = None) -> T: ...
@overload
def expect(
    path: str | Path, value: object, kind: tuple[type[T], type[U]], record: str | int | None = None
) -> T | U: ...
def expect(path: str | Path, value: object, kind: type | tuple[type, ...], record: str | int | None = None) -> object:
    """A whole record or file body that must be of ``kind``."""
    if not isinstance(value, kind):
        names = "/".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise DataFormatError(path, f"expected {names}, found {type(value).__name__}", record)
    return value


def _atomic_write(path: str | Path, write: Callable[[TextIO], None]) -> Path:
    """Write a text file through a temporary file beside it, renamed into place: nothing is ever half-written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            write(out)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


@contextmanager
def atomic_directory(directory: str | Path) -> Iterator[Path]:
    """A temporary folder beside ``directory`` to fill; on success it replaces ``directory`` whole, on any error it
    is removed (``directory`` is never half-written)."""
    directory = Path(directory)
    tmp = directory.with_name(f".{directory.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        yield tmp
        if directory.exists():
            shutil.rmtree(directory)
        os.replace(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_json(path: str | Path, data: object, indent: int | None = 2) -> Path:
    """Write JSON atomically (``data`` made of JSON values: ``json.dump`` refuses anything else)."""

    def dump(out: TextIO) -> None:
        json.dump(data, out, ensure_ascii=False, indent=indent)
        out.write("\n")

    return _atomic_write(path, dump)


def write_lines(path: str | Path, lines: Iterable[str]) -> Path:
    """Write text lines atomically."""

    def dump(out: TextIO) -> None:
        for line in lines:
            out.write(line)
            out.write("\n")

    return _atomic_write(path, dump)
