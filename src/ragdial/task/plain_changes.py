"""What only the database knows of a change the reader read (``ragdial.task.acts.changes``): the reader names the
booking and marks what changes; ``resolve_changes`` turns the marks into the values the booking handlers use.

- ``same_trip``: the booked flight or train (its ``code``), in its class unless the act says another
  (a berth said on a seat booking: 硬卧);
- ``upgrade``: the class one up from the booked one (经济舱 → 商务舱 → 头等舱, 二等座 → 一等座 → 商务座,
  硬座 → 硬卧 → 软卧);
- ``adjacent`` (``earlier`` / ``later``): the departure just before (after) the booked one on the same route, day
  and class, or the one at ``at``; none left: ``none_left`` (said so, the day or time is asked);
- ``other_hotel``: another hotel for the same stay, the booked brand excluded (``not_brand``).

Each change is still read back and done only on an explicit yes (``ragdial.task.bookings``). The manager reads
acts only: no text is read here.
"""

from __future__ import annotations

from collections.abc import Mapping

from ragdial.jsontypes import JSONDict
from ragdial.task import replies as R
from ragdial.task.acts import Act
from ragdial.task.db import TravelDB
from ragdial.task.orders import Booking, live_bookings

NEXT_CLASS = {
    **{"经济舱": "商务舱", "商务舱": "头等舱"},
    **{"二等座": "一等座", "一等座": "商务座", "硬座": "硬卧", "硬卧": "软卧"},
}
MARKS = ("same_trip", "upgrade", "adjacent", "at", "other_hotel")


def resolve_changes(state: Mapping[str, object], acts: list[Act], db: TravelDB) -> list[Act]:
    """``acts`` with each change's marks (``MARKS``) replaced by the values the database gives them."""
    bookings: list[Booking] = list(state.get("bookings") or [])  # type: ignore[call-overload]
    live = live_bookings(bookings)
    for act in acts:
        if act.act != "change_booking" or not set(MARKS) & set(act.slots):
            continue
        marks = {k: act.slots.pop(k) for k in MARKS if k in act.slots}
        booking = next((b for b in live if b["order_no"] == act.slots.get("order_no")), None)
        item = db.get(booking["domain"], int(booking["item_id"])) if booking else None
        if booking is None or item is None:
            continue
        act.slots.update(_resolved(marks, act.slots, booking, item, db))
    return acts


def _resolved(marks: JSONDict, slots: JSONDict, booking: Booking, item: Mapping[str, object], db: TravelDB) -> JSONDict:
    if marks.get("other_hotel"):
        return {"not_brand": [str(item["name"]).split("(")[0]]}
    if marks.get("adjacent"):
        return _adjacent(str(marks["adjacent"]), marks.get("at"), booking, item, db)
    found: JSONDict = {"code": R.code_of(item)}
    booked_class = str(item.get("seat_class"))
    if marks.get("upgrade"):
        better = NEXT_CLASS.get(booked_class)
        return {"code": R.code_of(item), "seat_class": better} if better else {}
    if slots.get("berth") and not slots.get("seat_class") and booked_class not in ("硬卧", "软卧"):
        found["seat_class"] = "硬卧"
    elif not slots.get("seat_class") and not slots.get("berth"):
        found["seat_class"] = str(item.get("seat_class"))
    return found


def _adjacent(way: str, at: object, booking: Booking, item: Mapping[str, object], db: TravelDB) -> JSONDict:
    route = {k: item.get(k) for k in ("dep_city", "arr_city", "date", "seat_class")}
    rows = db.search(booking["domain"], route, limit=1000)
    if at:
        same = [r for r in rows if str(r.get("dep_time")) == at]
        if same:
            return {"code": R.code_of(same[0])}
    earlier = way == "earlier"
    mine = str(item.get("dep_time"))
    others = sorted(
        (r for r in rows if R.code_of(r) != R.code_of(item)),
        key=lambda r: str(r.get("dep_time")),
        reverse=earlier,
    )
    after = [r for r in others if (str(r.get("dep_time")) < mine if earlier else str(r.get("dep_time")) > mine)]
    if after:
        return {"code": R.code_of(after[0])}
    return {"none_left": way}  # said so; the new day or time is asked
