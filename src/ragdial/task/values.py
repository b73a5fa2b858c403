"""Narrowing the loosely typed values of the task branch (slots, constraints, session state) to what a use needs.

Each reader gives the value as the kind asked for, or raises ``TypeError`` as the operation it replaces did
(``int(None)``, iterating a number)."""

from __future__ import annotations

from collections.abc import Iterable


def as_int(value: object) -> int:
    """``int(value)`` for a number or a text of one."""
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"expected a number, found {type(value).__name__}")


def as_str(value: object) -> str:
    """``value`` itself when it is a text."""
    if isinstance(value, str):
        return value
    raise TypeError(f"expected a text, found {type(value).__name__}")


def items(value: object) -> list[object]:
    """``list(value)`` (a text gives its characters, as ``list`` does)."""
    if isinstance(value, Iterable):
        return list(value)
    raise TypeError(f"'{type(value).__name__}' object is not iterable")


def listed(value: object) -> list[object]:
    """A slot value as a list: none for None or "", one item for a text or number, the items of a list."""
    if value in (None, ""):
        return []
    if isinstance(value, str | int | float):
        return [value]
    return items(value)


def text_or_none(value: object) -> str | None:
    """``value`` as text (``str``), None kept."""
    return None if value is None else str(value)
