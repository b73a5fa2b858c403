"""Slots of a cancellation or a change (改签) of a booking already made."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping

from ragdial.jsontypes import JSONDict
from ragdial.task.acts.aside import _booking_domain
from ragdial.task.acts.context import Act, Context
from ragdial.task.acts.finders import (
    _berths_of,
    _class_value,
    _classes_of,
    _code_of,
    _dates,
    _district_of,
    _domain_named,
    _hotel_numbers,
    _period_of,
    _stars_of,
    _time_bounds,
    code_domain,
)
from ragdial.task.acts.words import BOOKED_MARK, BOOKED_THING, CANCEL, MADE_MARK, REBOOK, REBOOK_VERB
from ragdial.task.db import Gazetteer
from ragdial.task.orders import live_bookings
from ragdial.task.slots import NUM, cn_number
from ragdial.task.values import as_int, as_str, text_or_none

# keeping a booking, not cancelling it: 不用退了 / 机票不取消 / 先留着
KEEP_IT = re.compile(
    r"(不|别|不用|不要|不必|无需|不需要|用不着|甭)(再)?(取消|退|撤销)|(先)?留着|保留(着|吧|就行)?$|"
    r"don'?t cancel|keep it",
    re.I,
)
# giving back part of a booking: 两张退一张 / 退掉其中一间 / 少订一张 / 只留一张 (``back`` given back, ``keep`` kept)
PARTIAL = re.compile(
    rf"(?:(?:退|取消|少订|少要|减|去)\s*(?:掉|了)?\s*(?:其中)?\s*(?P<back>{NUM})\s*(?:张|间|个人|位)"
    rf"|(?:只留|只要|留|保留)\s*(?P<keep>{NUM})\s*(?:张|间)(?:就|了|就行|就够)?(?:了|吧)?$)"
)
# all cancelled and fewer booked again on the same trip (整个退了，再重新订一张同一班的): part given back
SAME_AGAIN = re.compile(
    rf"(?:重新|再)\S{{0,3}}?(?:订|买|要)\s*(?P<keep>{NUM})\s*(?:张|间)(?=.*(?:同一|同样|一样|原来|这趟|那趟|这班|那班|这家|那家))"
)
# replacing a booked hotel by another one: 换一家 / 换个酒店 / 换成别的酒店
OTHER_HOTEL = re.compile(r"(换一?家|换个(酒店|宾馆|地方住)|换别的(酒店|宾馆)|换成别的(酒店|宾馆)|换到别的(酒店|宾馆))")
# a longer stay in the hotel booked: 多住一晚 / 再续一天 / 延住两晚 (``n`` nights more)
LONGER_STAY = re.compile(
    rf"(?:多住|再住|续住|续|延住|延长|多待|再待|加住)\s*(?P<n>{NUM})?\s*(?:个)?\s*(?:晚|天|夜)"
    r"|\b(?P<en>one|two|three|a|an|\d)\s+(?:more|extra|additional)\s+nights?\b|\banother night\b"
    r"|\bextend\b.{0,25}\bstay\b(?:.{0,12}\bby\s+(?P<by>one|two|three|a|\d)\s+nights?)?",
    re.I,
)
# moving a booking to another day without the word 改签: 挪到 / 推到 / 换到 / 改过去
MOVE = re.compile(
    r"((改|换|调|挪|推|移)\s*(到|成|为|过去|一下)|提前到|延后到|往后挪|往前挪|(往后|往前|推迟|推后|延后|提前)(推|挪)?一天|"
    r"\b(change|move|switch|swap|shift|push|put)\b.{0,30}\b(to|for|into|onto)\b|\bmake (it|that|this|them)\b)",
    re.I,
)


# asking to change what was booked without the new value yet: 改一下日期 / 换个时间 / 调一下座位
CHANGE_WHAT = re.compile(
    r"(改|换|调|挪)\s*(一下|个|下)?\s*(日期|时间|日子|出发时间|入住时间|入住日期|班次|车次|航班|座位|舱位|铺位)|"
    r"\b(change|modify|alter|amend|reschedule)\s+(the\s+)?(date|time|day|departure|seat|train|flight|dates)\b",
    re.I,
)
# a change of the booking without what changes (change it / 我想改一下 / 能改吗): what to change is asked next
UNCLEAR_CHANGE = re.compile(
    r"(我|我们)?(想|要|得|能|可以|能不能|可不可以|帮我|麻烦)?\s*(改|换|调)(一下|下|改|一改)?(吧|吗|呢|行吗|可以吗|好吗)?|"
    r"(can you |could you |please |i want to |i'd like to |i need to )*(change|modify|alter|amend|reschedule)\s+"
    r"(it|this|that|them|my booking|the booking|my reservation|the reservation|my ticket|the ticket)"
    r"( please| for me)?",
    re.I,
)
# the day after (or before) the one booked: 第二天 / 次日 / 往后推一天 / 提前一天
NEXT_DAY = re.compile(r"(第二天|次日|隔天|后一天|晚一天|前一天|早一天|提前一天|(往后|往前|推迟|推后|延后)(推|挪)?一天)")


def _named_booking(text: str, live: list[Mapping[str, object]]) -> Mapping[str, object] | None:
    """The live booking ``text`` names by its hotel's brand or its train's or flight's code (把汉庭退了)."""
    for booking in reversed(live):
        details = str(booking.get("details") or booking.get("summary") or "")
        if booking.get("domain") == "hotel":
            brand = re.sub(r"(国际)?(大酒店|酒店|宾馆|饭店)$", "", details.split("(")[0])
            if brand and brand in text:
                return booking
        else:
            code = details.split(" ")[0]
            if code and re.search(rf"(?<![A-Za-z0-9]){re.escape(code)}(?![0-9])", text, re.I):
                return booking
    return None


def _partial_slots(text: str, ctx: Context) -> JSONDict | None:
    """Slots of giving back part of a booking of several tickets or rooms (``back``: how many), or None."""
    m = PARTIAL.search(text)
    live = [b for b in live_bookings(ctx.bookings) if as_int(b.get("quantity") or 1) > 1]
    if m is None or not live or ctx.open_question in ("confirm_booking", "choose_offer", "offer_alternative"):
        return None
    slots: JSONDict = dict(_booking_domain(text))
    counted = "间" if "间" in m.group(0) else "张" if "张" in m.group(0) else None
    if counted:  # 退一张: tickets, not rooms (退一间: rooms)
        live = [b for b in live if (b.get("domain") == "hotel") == (counted == "间")] or live
    numbers = re.findall(r"\d+", text)
    order = next((int(n) for n in numbers if any(str(b.get("order_no")) == n for b in live)), None)
    if order is None and len(live) == 1 and not slots:
        order = as_int(live[0]["order_no"])
    named = _named_booking(text, live)
    if order is None and named is not None:
        order = as_int(named["order_no"])
    if order is not None:
        slots["order_no"] = order
    if m.group("back"):
        slots["back"] = cn_number(m.group("back")) or 1
    else:
        fits = [b for b in live if order is None or b["order_no"] == order]
        kept = cn_number(m.group("keep")) or 1
        slots["back"] = max(0, as_int(fits[-1].get("quantity") or 1) - kept) if fits else 1
    return slots


def _cancel_slots(text: str, ctx: Context) -> JSONDict | None:
    """Slots of a request to cancel a booking made in this session (``domain``, ``order_no``; ``back``: only
    that many of its tickets or rooms), or None."""
    if not ctx.bookings:  # (a booking cancelled already still makes 取消那张票 a cancellation, refused then)
        return None
    partial = _partial_slots(text, ctx)
    if partial is not None:
        return partial
    numbers = re.findall(r"\d+", text)
    order = next((int(n) for n in numbers if any(str(b.get("order_no")) == n for b in ctx.bookings)), None)
    slots: JSONDict = dict(_booking_domain(text))
    if order is not None:
        slots["order_no"] = order
    named = _named_booking(text, live_bookings(ctx.bookings))
    kept = KEEP_IT.search(text)
    by_name = named is not None and "order_no" not in slots and ctx.open_question != "choose_cancel"
    if by_name and named is not None and not kept and CANCEL.search(text):
        return {"domain": as_str(named["domain"]), "order_no": as_int(named["order_no"])}  # 把汉庭退了，换成亚朵
    hotels = [b for b in live_bookings(ctx.bookings) if b.get("domain") == "hotel"]
    if hotels and OTHER_HOTEL.search(text) and ctx.open_question in (None, "anything_else"):
        return {"domain": "hotel", "order_no": as_int(hotels[-1]["order_no"])}  # 换一家吧: the booked one goes first
    if ctx.open_question == "choose_cancel":  # which one: a domain, an order number or an ordinal names it
        m = re.search(rf"第\s*({NUM})\s*(?:个|张|笔|单)?", text)
        if m and not slots:
            slots["ordinal"] = cn_number(m.group(1))
        return slots if slots or CANCEL.search(text) else None
    if not CANCEL.search(text) or KEEP_IT.search(text):
        return None
    if ctx.open_question in ("confirm_booking", "offer_alternative", "choose_offer"):
        return slots if (MADE_MARK.search(text) or order is not None) else None
    return slots if (BOOKED_MARK.search(text) or order is not None) else None


def _change_slots(text: str, ctx: Context, gaz: Gazetteer, today: dt.date, english: bool) -> JSONDict | None:
    """Slots of a request to change (改签) a booking made in this session: which one (``domain``, ``order_no``)
    and the new values said with it (date, departure window, class, berth, nights, rooms), or None."""
    live = live_bookings(ctx.bookings)
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
    booked_domains = {b.get("domain") for b in live}
    named_domain = text_or_none(_booking_domain(text).get("domain"))
    after = ctx.open_question in ("anything_else", None)
    if not said and after and (not _domain_named(text, english) or named_domain in booked_domains):
        # right after a booking: 改到后天吧 / 我8号去不了了，能改到9号吗 / 酒店能挪到周五吗 changes it
        said = bool(MOVE.search(text)) and bool(
            _dates(text, today, english, {"date": text_or_none(live[-1].get("date"))})
            or NEXT_DAY.search(text)
            or _time_bounds(text, english) != (None, None)
            or _period_of(text, english)
        )
    if not said and after and CHANGE_WHAT.search(text):
        said = True  # 我想改一下日期 / 能换个时间吗 after a booking: which day or time is asked next
    if not said and after and UNCLEAR_CHANGE.fullmatch(re.sub(r"[\s,.!?，。！？~]+$", "", text.strip())):
        said = True  # change it / 我想改一下: a change, what changes is asked next
    longer = LONGER_STAY.search(text)
    hotel_booked = "hotel" in booked_domains and (after or ctx.domain != "hotel")
    if not said and longer and hotel_booked and _domain_named(text, english) in (None, "hotel"):
        said = True  # 我想多住一晚 / 能再续一天吗 after a hotel was booked: that stay, longer
    if not said or re.search(r"(不改|别改|不用改|不要改)", text):
        return None
    numbers = re.findall(r"\d+", text)
    order = next((int(n) for n in numbers if any(str(b.get("order_no")) == n for b in live)), None)
    slots: JSONDict = dict(_booking_domain(text))
    if order is not None:
        slots["order_no"] = order
        text = re.sub(rf"(?<![A-Za-z0-9]){order}(?![0-9])", " ", text)  # (G5281 kept whole with order 5)
    if longer and hotel_booked:
        slots["domain"] = "hotel"
    domain = text_or_none(
        slots.get("domain")
        or next((b["domain"] for b in reversed(live) if order is None or b["order_no"] == order), None)
    )
    m = re.search(r"(改|换|调)\s*(到|成|为)", text)
    if m and _dates(text[m.end() :], today, english, {}):  # 我8号去不了了，能改到9号吗: the date after the verb
        text = text[m.end() :]
    booked = next((b for b in reversed(live) if b.get("domain") == domain and order in (None, b.get("order_no"))), None)
    booked_date = text_or_none(booked.get("date")) if booked else None
    slots.update(_dates(text, today, english, {"date": booked_date} if booked_date else {}))
    step = NEXT_DAY.search(text)
    if "date" not in slots and step and booked_date:  # 改到第二天 / 推迟一天: from the day booked
        back = step.group(0).startswith(("前", "提前", "早"))
        slots["date"] = (dt.date.fromisoformat(booked_date) + dt.timedelta(days=-1 if back else 1)).isoformat()
    time_from, time_to = _time_bounds(text, english)
    if time_from or time_to:
        slots.update({k: v for k, v in (("time_from", time_from), ("time_to", time_to)) if v})
    elif (
        (domain != "hotel" or "domain" not in slots)
        and _period_of(text, english)
        and any(b.get("domain") != "hotel" for b in live)  # (a time of day changes a trip, not a stay)
    ):
        slots["period"] = _period_of(text, english)
    code = _code_of(text)
    if code and domain in ("flight", "train") and code_domain(code) == domain:
        slots["code"] = code  # 改签成MU8570: that flight or train
    value = _class_value(_classes_of(text, english), text, domain)
    if value is not None:
        slots["seat_class"] = value
    berth = _berths_of(text, english)
    if berth:
        slots["berth"] = berth
    if domain == "hotel":
        slots.update({k: v for k, v in _hotel_numbers(text, english).items() if k in ("nights", "rooms")})
        stars, min_stars = _stars_of(text, english)  # 把订单24改成西湖区的四星: the stay elsewhere or better
        slots.update({k: v for k, v in (("stars", stars), ("min_stars", min_stars)) if v})
        district = _district_of(text, gaz, None)
        if district:
            slots["district"] = district
        if longer and hotel_booked:
            slots.pop("nights", None)
            slots.pop("date", None)  # 4号再住一晚: the day said is the night added, not a new check-in
            english_n = longer.group("en") or longer.group("by")
            words = {"one": 1, "a": 1, "an": 1, "two": 2, "three": 3}
            said_n = longer.group("n") or "一"
            more = (words.get(english_n.lower(), 0) or int(english_n)) if english_n else cn_number(said_n)
            slots["longer"] = more or 1
            slots.pop("period", None)  # (one more night: no time of day)
    return slots


def nights_to_check_out(acts: list[Act], ctx: Context) -> None:
    """入住改到周五，还是周日走: a change of a stay booked with the day one leaves is that many nights from the
    check-in (the new one, else the one booked)."""
    live = [b for b in live_bookings(ctx.bookings) if b.get("domain") == "hotel"]
    for act in acts:
        out = text_or_none(act.slots.get("check_out"))
        if act.act != "change_booking" or not out or not live or "nights" in act.slots:
            continue
        order = act.slots.get("order_no")
        booked = next((b for b in reversed(live) if order in (None, b.get("order_no"))), None)
        start = text_or_none(act.slots.get("date")) or (text_or_none(booked.get("date")) if booked else None)
        if start and out > start:
            act.slots.pop("check_out")
            act.slots["nights"] = (dt.date.fromisoformat(out) - dt.date.fromisoformat(start)).days
