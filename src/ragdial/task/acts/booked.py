"""Slots of a cancellation or a change (改签) of a booking already made."""

from __future__ import annotations

import datetime as dt
import re

from ragdial.jsontypes import JSONDict
from ragdial.task.acts.aside import _booking_domain
from ragdial.task.acts.context import Context
from ragdial.task.acts.finders import (
    _berths_of,
    _class_value,
    _classes_of,
    _dates,
    _domain_named,
    _hotel_numbers,
    _period_of,
    _time_bounds,
)
from ragdial.task.acts.words import BOOKED_MARK, BOOKED_THING, CANCEL, MADE_MARK, REBOOK, REBOOK_VERB
from ragdial.task.db import Gazetteer
from ragdial.task.slots import NUM, cn_number
from ragdial.task.values import text_or_none


def _cancel_slots(text: str, ctx: Context) -> JSONDict | None:
    """Slots of a request to cancel a booking made in this session (``domain``, ``order_no``), or None."""
    if not ctx.bookings:  # (a booking cancelled already still makes 取消那张票 a cancellation, refused then)
        return None
    numbers = re.findall(r"\d+", text)
    order = next((int(n) for n in numbers if any(str(b.get("order_no")) == n for b in ctx.bookings)), None)
    slots: JSONDict = dict(_booking_domain(text))
    if order is not None:
        slots["order_no"] = order
    if ctx.open_question == "choose_cancel":  # which one: a domain, an order number or an ordinal names it
        m = re.search(rf"第\s*({NUM})\s*(?:个|张|笔|单)?", text)
        if m and not slots:
            slots["ordinal"] = cn_number(m.group(1))
        return slots if slots or CANCEL.search(text) else None
    if not CANCEL.search(text) or re.search(r"(不取消|别取消|不用取消|不要取消|不退|别退)", text):
        return None
    if ctx.open_question in ("confirm_booking", "offer_alternative", "choose_offer"):
        return slots if (MADE_MARK.search(text) or order is not None) else None
    return slots if (BOOKED_MARK.search(text) or order is not None) else None


def _change_slots(text: str, ctx: Context, gaz: Gazetteer, today: dt.date, english: bool) -> JSONDict | None:
    """Slots of a request to change (改签) a booking made in this session: which one (``domain``, ``order_no``)
    and the new values said with it (date, departure window, class, berth, nights, rooms), or None."""
    live = [b for b in ctx.bookings if b.get("status") != "cancelled"]
    if not live or ctx.open_question in ("confirm_cancel", "choose_cancel"):
        return None
    if ctx.open_question == "choose_change":  # which booking to change: a domain, an order number or an ordinal
        numbers = re.findall(r"\d+", text)
        named: JSONDict = dict(_booking_domain(text))
        order_no = next((int(n) for n in numbers if any(str(b.get("order_no")) == n for b in live)), None)
        if order_no is not None:
            named["order_no"] = order_no
        m = re.search(rf"第\s*({NUM})\s*(?:个|张|笔|单)?", text)
        if m and not named:
            named["ordinal"] = cn_number(m.group(1))
        if named:
            return named
    said = bool(REBOOK.search(text)) or bool(REBOOK_VERB.search(text) and BOOKED_THING.search(text))
    if not said and ctx.open_question in ("anything_else", None) and not _domain_named(text, english):
        # right after a booking: 改到后天吧 / 我8号去不了了，能改到9号吗 changes it
        said = bool(re.search(r"(改|换|调)\s*(到|成|为)", text)) and bool(
            _dates(text, today, english, {}) or _time_bounds(text, english) != (None, None) or _period_of(text, english)
        )
    if not said or re.search(r"(不改|别改|不用改|不要改)", text):
        return None
    numbers = re.findall(r"\d+", text)
    order = next((int(n) for n in numbers if any(str(b.get("order_no")) == n for b in live)), None)
    slots: JSONDict = dict(_booking_domain(text))
    if order is not None:
        slots["order_no"] = order
        text = text.replace(str(order), " ")
    domain = text_or_none(
        slots.get("domain")
        or next((b["domain"] for b in reversed(live) if order is None or b["order_no"] == order), None)
    )
    m = re.search(r"(改|换|调)\s*(到|成|为)", text)
    if m and _dates(text[m.end() :], today, english, {}):  # 我8号去不了了，能改到9号吗: the date after the verb
        text = text[m.end() :]
    slots.update(_dates(text, today, english, {}))
    time_from, time_to = _time_bounds(text, english)
    if time_from or time_to:
        slots.update({k: v for k, v in (("time_from", time_from), ("time_to", time_to)) if v})
    elif (
        (domain != "hotel" or "domain" not in slots)
        and _period_of(text, english)
        and any(b.get("domain") != "hotel" for b in live)  # (a time of day changes a trip, not a stay)
    ):
        slots["period"] = _period_of(text, english)
    value = _class_value(_classes_of(text, english), text, domain)
    if value is not None:
        slots["seat_class"] = value
    berth = _berths_of(text, english)
    if berth:
        slots["berth"] = berth
    if domain == "hotel":
        slots.update({k: v for k, v in _hotel_numbers(text, english).items() if k in ("nights", "rooms")})
    return slots
