"""Reading the JSON part of a saved understanding model: each reader narrows one value to the kind it must have,
or raises ``TypeError`` naming the field (``TextClassifier.load`` reports it as an inconsistent model)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ragdial.jsontypes import JSONObject, JSONValue


def array(value: JSONValue, name: str) -> Sequence[JSONValue]:
    """A JSON array."""
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"{name}: expected a list, found {type(value).__name__}")
    return value


def texts(value: JSONValue, name: str) -> list[str]:
    """A JSON array of texts."""
    out: list[str] = []
    for item in array(value, name):
        if not isinstance(item, str):
            raise TypeError(f"{name}: expected texts, found {type(item).__name__}")
        out.append(item)
    return out


def number(value: JSONValue, name: str) -> float:
    """A JSON number (or a text of one, as ``float()`` reads it)."""
    if isinstance(value, int | float | str):
        return float(value)
    raise TypeError(f"{name}: expected a number, found {type(value).__name__}")


def mapping(value: JSONValue, name: str) -> JSONObject:
    """A JSON object."""
    if isinstance(value, Mapping):
        return value
    raise TypeError(f"{name}: expected an object, found {type(value).__name__}")
