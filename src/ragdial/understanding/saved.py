"""Reading the JSON part of a saved model (an understanding model, the task act model): each reader narrows one
value ``json.loads`` gave to the kind it must have, or raises ``TypeError`` naming the field
(``TextClassifier.load`` reports it as an inconsistent model, the act model is trained again)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ragdial.jsontypes import JSONObject, JSONValue


def array(value: object, name: str) -> Sequence[JSONValue]:
    """A JSON array."""
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"{name}: expected a list, found {type(value).__name__}")
    return value


def texts(value: object, name: str) -> list[str]:
    """A JSON array of texts."""
    out: list[str] = []
    for item in array(value, name):
        if not isinstance(item, str):
            raise TypeError(f"{name}: expected texts, found {type(item).__name__}")
        out.append(item)
    return out


def number(value: object, name: str) -> float:
    """A JSON number (or a text of one, as ``float()`` reads it)."""
    if isinstance(value, int | float | str):
        return float(value)
    raise TypeError(f"{name}: expected a number, found {type(value).__name__}")


def mapping(value: object, name: str) -> JSONObject:
    """A JSON object."""
    if isinstance(value, Mapping):
        return value
    raise TypeError(f"{name}: expected an object, found {type(value).__name__}")
