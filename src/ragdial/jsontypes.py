"""JSON data as types, in one place: what ``json`` and YAML read and what ``to_dict`` / ``to_config`` write.

``JSONValue`` is any JSON value; its containers are read-only views (``Sequence``, ``Mapping``), so a
``dict[str, float]`` or a ``list[str]`` is one as it is. ``JSONDict`` is a JSON object being built or changed,
``JSONObject`` one that is only read. Data read from a file is a ``JSONValue`` until it is narrowed
(``ragdial.io.field`` / ``ragdial.io.expect``, ``isinstance``) or parsed into a dataclass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JSONScalar: TypeAlias = str | int | float | bool | None
JSONValue: TypeAlias = JSONScalar | Sequence["JSONValue"] | Mapping[str, "JSONValue"]
JSONObject: TypeAlias = Mapping[str, JSONValue]
JSONDict: TypeAlias = dict[str, JSONValue]
# what a FastAPI route returns: pydantic builds a response model from the annotation and cannot resolve the
# recursive alias above, and ``object`` is what it passes through unchecked (the body is JSON-encoded as it is)
RouteBody: TypeAlias = Mapping[str, object]

__all__ = [
    "JSONDict",
    "JSONObject",
    "JSONScalar",
    "JSONValue",
    "RouteBody",
    "as_array",
    "as_object",
    "as_text",
    "as_text_or_none",
    "as_texts",
]


def as_text(value: JSONValue) -> str:
    """A JSON scalar as text (``None`` as ``""``)."""
    return "" if value is None else str(value)


def as_text_or_none(value: JSONValue) -> str | None:
    """A JSON scalar as text, ``None`` kept."""
    return None if value is None else str(value)


def as_array(value: JSONValue) -> list[JSONValue]:
    """A JSON array's items (``[]`` for ``null`` or anything that is not an array)."""
    return list(value) if isinstance(value, Sequence) and not isinstance(value, str) else []


def as_texts(value: JSONValue) -> list[str]:
    """A JSON array of scalars as text (``[]`` for ``null``)."""
    return [as_text(item) for item in as_array(value)]


def as_object(value: JSONValue) -> JSONObject:
    """A JSON object (``{}`` for ``null`` or anything that is not an object)."""
    return value if isinstance(value, Mapping) else {}
