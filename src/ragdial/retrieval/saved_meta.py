"""The metadata file of a saved reranker (``reranker.json``, ``transfer.json``, ``triples.json``, ``tuned.json``,
``precedent.json``): written atomically, read back with one error naming the file and the field for every way it can
be wrong (unreadable, not a JSON object, another format, trained on other features, a missing or non-numeric value).
Each reranker kind keeps its own fields; this module only reads and checks them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from ragdial.errors import RagdialError
from ragdial.io import write_json
from ragdial.jsontypes import JSONDict


def write_meta(path: Path, meta: Mapping[str, object]) -> None:
    """Write ``meta`` (JSON values) to ``path`` as indented JSON, never half-written."""
    write_json(path, meta)


def read_meta(path: Path, what: str, format_name: str | None = None) -> JSONDict:
    """The JSON object in ``path``; a ``RagdialError`` naming ``path`` when it cannot be read (``what`` names the
    kind of reranker expected), is not an object, or (with ``format_name``) its ``format`` field differs."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise RagdialError(f"{path}: not a {what} ({error})") from None
    if not isinstance(meta, dict):
        raise RagdialError(f"{path}: not a {what} (a JSON object is expected, got {type(meta).__name__})")
    if format_name is not None and meta.get("format") != format_name:
        raise RagdialError(f"{path}: field 'format' must be {format_name!r}, got {meta.get('format')!r}")
    return meta


def check_features(
    meta: JSONDict, path: Path, expected: object, key: str = "features", retrain: str = "the reranker"
) -> None:
    """Refuse a model whose saved feature list (``meta[key]``) is not this version's ``expected`` one; the message
    says how to ``retrain``."""
    if meta.get(key) != expected:
        raise RagdialError(
            f"{path}: field {key!r} differs from this version's: trained on other features; retrain {retrain}"
        )


def number(meta: JSONDict, key: str, path: Path, default: float | None = None) -> float:
    """``meta[key]`` as a float (``default`` when absent and a default is given); booleans, strings and a missing
    required value are refused naming ``path`` and ``key``."""
    value = meta.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RagdialError(f"{path}: field {key!r} must be a number, got {value!r}")
    return float(value)


def count(meta: JSONDict, key: str, path: Path, default: int | None = None, minimum: int = 0) -> int:
    """``meta[key]`` as a whole number of at least ``minimum`` (``default`` when absent and given)."""
    value = meta.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RagdialError(f"{path}: field {key!r} must be a whole number >= {minimum}, got {value!r}")
    return value


def info(meta: JSONDict, path: Path) -> JSONDict:
    """The free-form training summary (``info``), an object (empty when absent)."""
    value = meta.get("info", {})
    if not isinstance(value, dict):
        raise RagdialError(f"{path}: field 'info' must be a JSON object, got {type(value).__name__}")
    return value


class Cut(NamedTuple):
    """The selection cut every trained reranker saves: a score ``threshold``, a ``relative`` share of the best
    score, at most ``max_select`` items, over the first ``depth`` candidates."""

    threshold: float
    relative: float
    max_select: int
    depth: int


def cut_fields(model: object) -> dict[str, object]:
    """A reranker's cut and training summary (``info``) as its metadata file keeps them."""
    return {name: getattr(model, name) for name in (*Cut._fields, "info")}


def read_cut(meta: JSONDict, path: Path, relative: float | None = None) -> Cut:
    """The cut saved by :func:`cut_fields`, each value checked (``relative`` as the default for files written before
    it was saved)."""
    return Cut(
        number(meta, "threshold", path),
        number(meta, "relative", path, default=relative),
        count(meta, "max_select", path, minimum=1),
        count(meta, "depth", path, minimum=1),
    )
