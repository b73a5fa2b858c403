"""Limits a user sets besides the route and the kind of seat or room: a budget for the whole order (四个人一共三千以内),
a price range (一晚三百到五百), a longest ride (别超过五个小时), a time to arrive by (八点半之前到). How a limit
becomes a search constraint, how it is named when nothing meets it, and which rows come nearest to it when it has
to be given up (never the cheapest rows regardless of the limit)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ragdial.jsontypes import JSONDict
from ragdial.task import replies as R
from ragdial.task.comparing import minutes
from ragdial.task.db import Row
from ragdial.task.values import as_int, as_str

# the limits a search takes besides the ones the database reads directly (max_price, arr_by, time_from ...)
LIMIT_KEYS = ("max_total", "min_price", "max_duration")


def units(domain: str, slots: Mapping[str, object]) -> int:
    """What a total budget is shared by: tickets for a trip, rooms × nights for a stay."""
    if domain == "hotel":
        return max(1, as_int(slots.get("rooms") or 1)) * max(1, as_int(slots.get("nights") or 1))
    return max(1, as_int(slots.get("passengers") or 1))


def per_unit(domain: str, constraints: JSONDict) -> JSONDict:
    """``constraints`` with a total budget turned into the price each ticket or room-night may cost (the lower of
    it and a price bound said as well)."""
    total = constraints.pop("max_total", None)
    if total is None:
        return constraints
    cap = as_int(total) // units(domain, constraints)
    said = constraints.get("max_price")
    constraints["max_price"] = min(cap, as_int(said)) if said is not None else cap
    return constraints


def _clock(value: object) -> int:
    hours, _, mins = as_str(value).partition(":")
    return int(hours) * 60 + int(mins or 0)


def _arrival(row: Row) -> int:
    return as_int(row.get("arr_days") or 0) * 1440 + _clock(row["arr_time"])


def nearest(key: str, rows: list[Row]) -> list[Row]:
    """``rows`` (found without the limit ``key``) nearest to that limit first, cheaper first among equals and one
    row per flight or train before its other classes: the earliest arrivals for an arrival time, the latest ones
    for an earliest arrival, the shortest rides for a longest ride, the dearest under a lowest price; as they are
    (cheapest first) for a budget, whose nearest rows are the cheapest, and for the other conditions."""
    measure: Callable[[Row], int] | None = {
        "arr_by": _arrival,
        "arr_after": lambda r: -_clock(r["arr_time"]),
        "max_duration": minutes,
        "min_price": lambda r: -as_int(r["price"]),
    }.get(key)
    if measure is None:
        return rows
    key_of = measure
    ranked = sorted(rows, key=lambda r: (key_of(r), as_int(r["price"])))
    first: dict[object, Row] = {}
    for row in ranked:
        first.setdefault(_trip(row), row)
    chosen = list(first.values())
    return chosen + [r for r in ranked if not any(r is c for c in chosen)]  # other trips before other classes


def _trip(row: Row) -> object:
    """One flight or train (its classes and berths are rows of their own)."""
    return (row.get("flight_no") or row.get("train_no") or row.get("name"), row.get("dep_time"))


def relaxed_value(key: str, domain: str, row: Row, slots: Mapping[str, object]) -> JSONDict | None:
    """The limit moved just far enough for ``row`` (the nearest one): a budget raised to its price, a total to its
    price × tickets or room-nights; None for the limits that are given up rather than moved."""
    if key == "max_price":
        return {"max_price": as_int(row["price"])}
    if key == "max_total":
        return {"max_total": as_int(row["price"]) * units(domain, slots)}
    return None


def named(key: str, slots: Mapping[str, object], domain: str, lang: str) -> str:
    """A limit's value as the user said it: 4张共3000元以内 / 300元以上 / 5小时以内."""
    zh = lang == "zh"
    value = as_int(slots[key])
    if key == "max_total":
        count = units(domain, slots)
        if domain == "hotel":
            return f"共{value}元以内" if zh else f"up to {value} yuan in all"
        return f"{count}张共{value}元以内" if zh else f"up to {value} yuan for {count} ticket(s)"
    if key == "min_price":
        return f"{value}元以上" if zh else f"from {value} yuan"
    hours, mins = divmod(value, 60)
    if zh:
        return f"{hours}小时" + (f"{mins}分" if mins else "") + "以内"
    return f"up to {hours}h{mins:02d}"


def said(slots: Mapping[str, object], domain: str, lang: str) -> list[str]:
    """The limits in force, for the head of a list (so the user sees none was dropped)."""
    return [
        f"{R.SLOT_NAMES[lang][key]}{named(key, slots, domain, lang)}"
        if lang == "zh"
        else f"{R.SLOT_NAMES[lang][key]} {named(key, slots, domain, lang)}"
        for key in LIMIT_KEYS
        if slots.get(key) is not None
    ]
