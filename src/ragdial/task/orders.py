"""The bookings of a task dialog as the session keeps them, and changing them: the record of a booking, how it
is listed and asked about, the trip it stands for, and giving back part of it (两张退一张) in one transaction.

The dialog manager (``ragdial.task.manager``) decides when; this module does what is decided, on a ``TravelDB``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import TypedDict, TypeVar

from ragdial.jsontypes import JSONDict
from ragdial.task import replies as R
from ragdial.task.db import Row, TravelDB


class Booking(TypedDict, total=False):
    """A booking made in this dialog (``status``: ``cancelled`` once cancelled or changed)."""

    domain: str
    order_no: int
    number: int
    item_id: int
    date: str
    arrival_date: str
    arr_city: str | None
    dep_city: str | None
    city: str | None
    nights: int | None
    quantity: int
    summary: str
    details: str
    status: str
    changed_to: int  # 改签: the booking that replaced this one
    changed_from: int  # 改签: the booking this one replaced


class CancelQuestion(TypedDict, total=False):
    """The cancellation being asked about: one booking (``order_no``; ``back``: only that many of its tickets or
    rooms) or a choice ``among`` several, and the question to go back to afterwards."""

    order_no: int
    among: list[int]
    resume: str | None
    back: int
    implied: bool  # the cancellation was not said but implied by a switch (还是坐高铁吧)
    orders: list[int]  # several bookings cancelled together (机票和酒店都退了): all of them on one yes


class Rebook(TypedDict):
    """A change (改签) under way: the booking the offer read back replaces."""

    order_no: int


class ChangeQuestion(TypedDict):
    """A change (改签) asked for while several bookings fit: which of them (``among``), with the new values said."""

    among: list[int]
    slots: JSONDict


B = TypeVar("B", bound=Mapping[str, object])


def live_bookings(bookings: Iterable[B]) -> list[B]:
    """The bookings not cancelled (nor changed into another)."""
    return [b for b in bookings if b.get("status") != "cancelled"]


def booking_line(booking: Booking, lang: str) -> str:
    if lang == "zh":
        return f"订单号{booking['order_no']}：{booking['details']}"
    return f"booking {booking['order_no']}: {booking['details']}"


def which_booking(fits: list[Booking], question: str, lang: str) -> str:
    """``question`` (which booking to cancel or change?) over the numbered bookings it could mean."""
    lines = "\n".join(f"{i}. {booking_line(b, lang)}" for i, b in enumerate(fits, 1))
    how = "请说第几个或订单号。" if lang == "zh" else "Say its number or the order number."
    return f"{question}\n{lines}\n{how}"


def unit(booking: Booking, lang: str) -> str:
    """What a booking counts: rooms or tickets."""
    if lang == "zh":
        return "间" if booking["domain"] == "hotel" else "张"
    return " room(s)" if booking["domain"] == "hotel" else " ticket(s)"


def cancel_question(booking: Booking, lang: str, back: int = 0) -> str:
    """The read-back of a cancellation (of ``back`` of its tickets or rooms only, when fewer than it holds)."""
    quantity = int(booking.get("quantity") or 1)
    if 0 < back < quantity:
        if lang == "zh":
            return (
                f"您要退掉{booking_line(booking, lang)}中的{back}{unit(booking, lang)}，保留"
                f"{quantity - back}{unit(booking, lang)}。确认退吗？（退掉的座位或房间会释放）"
            )
        return (
            f"You want to give back {back}{unit(booking, lang)} of {booking_line(booking, lang)} and keep "
            f"{quantity - back}. Go ahead? (They are released.)"
        )
    if lang == "zh":
        return f"您要取消的是：{booking_line(booking, lang)}。确认取消吗？（取消后座位或房间会释放）"
    return f"You want to cancel {booking_line(booking, lang)}. Cancel it? (The seats or rooms are released.)"


def cancel_all_question(bookings: list[Booking], lang: str) -> str:
    """The read-back of cancelling several bookings at once: each of them is named."""
    lines = "\n".join(booking_line(b, lang) for b in bookings)
    if lang == "zh":
        return f"您要取消以下{len(bookings)}个预订：\n{lines}\n确认全部取消吗？（取消后座位或房间会释放）"
    return (
        f"You want to cancel these {len(bookings)} bookings:\n{lines}\n"
        "Cancel them all? (The seats or rooms are released.)"
    )


def trip_of(booking: Booking, domain: str) -> JSONDict:
    """The route and date (a hotel's city, date, nights and rooms) of a booking, for a request replacing it."""
    if domain == "hotel":
        stay: JSONDict = {"city": booking.get("city") or booking.get("arr_city"), "date": booking["date"]}
        if booking["domain"] == "hotel":
            stay["nights"] = int(booking.get("nights") or 1)
            stay["rooms"] = int(booking.get("quantity") or 1)
        return {k: v for k, v in stay.items() if v}
    if booking["domain"] == "hotel":
        return {"arr_city": booking.get("city"), "date": booking["date"]} if booking.get("city") else {}
    route = (
        ("dep_city", booking.get("dep_city")),
        ("arr_city", booking.get("arr_city")),
        ("date", booking["date"]),
    )
    return {k: v for k, v in route if v}


def new_booking(domain: str, item: Row, pending: JSONDict, number: int, lang: str) -> Booking:
    """The session's record of booking ``number`` of ``item`` as ``pending`` says (date, nights, how many)."""
    date = str(pending["date"])
    quantity = int(str(pending.get("rooms") or pending.get("passengers") or 1))
    arrival = dt.date.fromisoformat(date) + dt.timedelta(days=int(item.get("arr_days") or 0))
    nights = pending.get("nights")
    return {
        "domain": domain,
        "order_no": number,
        "number": number,
        "item_id": item["id"],
        "date": date,
        "arrival_date": arrival.isoformat(),
        "arr_city": item.get("arr_city") or item.get("city"),
        "dep_city": item.get("dep_city"),
        "city": item.get("city"),
        "nights": int(str(nights)) if nights is not None else None,
        "quantity": quantity,
        "summary": R.offer_details(domain, item, pending, "zh"),
        "details": R.offer_details(domain, item, pending, lang),
    }


def give_back_part(db: TravelDB, booking: Booking, back: int, lang: str) -> Booking | None:
    """Give ``back`` of a booking's tickets or rooms back (两张退一张) in one transaction: the booking is changed
    into one of the same item and date for the rest (a new order number). The new booking, or None when the old
    one is not live in ``db`` (nothing changes then)."""
    domain = booking["domain"]
    item = db.get(domain, int(booking["item_id"]))
    quantity, nights = int(booking.get("quantity") or 1), int(booking.get("nights") or 1)
    if item is None or not 0 < back < quantity:
        return None
    pending: JSONDict = {"domain": domain, "id": item["id"], "date": booking["date"]}
    if domain == "hotel":
        item["date"] = booking["date"]
        pending |= {"nights": nights, "rooms": quantity - back}
    else:
        pending["passengers"] = quantity - back
    summary = R.offer_details(domain, item, pending, "zh")
    number = db.rebook(int(booking["number"]), domain, item, booking["date"], summary, quantity - back, nights)
    if number is None:
        return None
    kept = new_booking(domain, item, pending, number, lang)
    kept["changed_from"] = booking["order_no"]
    booking["status"], booking["changed_to"] = "cancelled", number
    return kept
