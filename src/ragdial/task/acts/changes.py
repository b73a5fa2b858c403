"""Changes of bookings said plainly, without 改签 or an order number, right after a booking: a better class on the
same flight or train (升舱 / 换成商务舱), a shorter stay (少住一晚 / 改成住两晚 / cut the stay to two nights), one
more ticket or room on the same booking (再加一张 / one more ticket on the same flight), the departure just before
or after the one booked (改早一班 / an earlier train), another hotel (换一家吧) and several bookings cancelled in one
sentence (机票和酒店都退了 / 两个都取消).

``plain_changes`` reads them from the turn and the bookings of the context and gives the acts the booking
handlers know: ``change_booking`` naming the booking (``domain``, ``order_no``) and what changes, or
``cancel_booking`` with ``orders``. What only the database knows is left as a mark for
``ragdial.task.plain_changes.resolve_changes``: ``same_trip`` (the booked flight or train: its code, and its
class unless another is said), ``upgrade`` (the class one up from the booked one), ``adjacent`` (``earlier`` /
``later``; ``at`` a clock said with it) and ``other_hotel`` (another brand for the same stay).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence

from ragdial.jsontypes import JSONDict
from ragdial.task.acts.booked import OTHER_HOTEL
from ragdial.task.acts.context import Act, Context
from ragdial.task.acts.finders import _hotel_numbers, _period_of, _time_bounds
from ragdial.task.acts.text import _is_english
from ragdial.task.acts.words import CANCEL
from ragdial.task.db import Gazetteer
from ragdial.task.orders import live_bookings
from ragdial.task.slots import NUM, cn_number
from ragdial.task.slots import parse as parse_slots
from ragdial.task.values import as_int

Booking = Mapping[str, object]

# the kind of booking a clause names (机票 / 火车票 / 酒店), Chinese and English
NAMED = {
    "flight": re.compile(r"(机票|航班|飞机|flight|plane)", re.I),
    "train": re.compile(r"(火车|高铁|动车|车票|train)", re.I),
    "hotel": re.compile(r"(酒店|宾馆|房间|住宿|hotel|room|stay)", re.I),
}
# a booking kept in the same sentence: 酒店留着 / 火车票别退 / 酒店不动 / keep the hotel
KEPT = re.compile(r"(留着|保留|不退|别退|不用退|不要退|不取消|别取消|不动|别动|照旧|keep)", re.I)
# all of them: 都退了 / 两个都取消 / 全部取消 / cancel both
EVERY = re.compile(r"(都|两个|俩|全部|全都|所有|一起|统统|both|all|everything)", re.I)
# a better class on the same trip: 升舱 / 升成商务舱 / 换成一等座 / 改成头等舱 / upgrade
UPGRADE = re.compile(
    r"(升舱|升级|升个舱|升(成|到|为)|(换|改|调)(成|到|为)?\s*(头等舱|商务舱|公务舱|一等座|商务座|软卧|硬卧|卧铺|下铺|中铺|上铺)|upgrade)",
    re.I,
)
# fewer nights: 少住一晚 / 提前一天退房 / 早一天走 / one night less / check out a day early
FEWER = re.compile(rf"(少住|少订|少待|减少|提前|早)\s*(?P<n>{NUM})?\s*(个)?\s*(晚|天|夜)\s*(退房|走|离店)?")
FEWER_EN = re.compile(
    r"(?P<n>one|a|two|three|\d)\s+(night|day)s?\s+(less|fewer|shorter)|check(ing)?\s*out\s+(?P<m>one|a|two|\d)\s+days?"
    r"\s+(early|earlier|sooner)|(shorten|cut|reduce)\s+(my|the|our)\s+stay\s+by\s+(?P<k>one|a|two|three|\d)\s+nights?",
    re.I,
)
SHORTER_TO = re.compile(r"(改成|改为|只住|就住|住)\s*\S{0,2}\s*(晚|天|夜)")
SHORTER_TO_EN = re.compile(
    r"\b(cut|shorten|reduce|change|make|only|just)\b.{0,30}\b(?P<n>one|two|three|four|five|\d)\s+nights?\b", re.I
)
# one more ticket or room on the same booking: 再加一张 / 多订一张 / 再来一间 / one more ticket
MORE = re.compile(
    rf"(再|多|加|还要|还得|还想)\s*(帮我|给我|帮忙)?\s*(加|订|买|要|来|开)?\s*(?P<n>{NUM})\s*(?P<unit>张|间)"
)
MORE_EN = re.compile(
    r"\b(?:add|book|get|buy|need|want)?\s*(?P<n>one|a|two|another|\d)\s+(?:more|extra|additional)?\s*"
    r"(?P<unit>tickets?|seats?|rooms?)\b.{0,40}\b(same|this|that|the booked)\b|\b(?P<n2>one|two|\d|another)\s+"
    r"(?:more|extra|additional)\s+(?P<unit2>tickets?|seats?|rooms?)\b|\banother\s+(?P<unit3>ticket|seat|room)\b",
    re.I,
)
# the departure just before or after the one booked: 改早一班 / 晚一班的 / 提前一班 / an earlier train
ADJACENT = re.compile(r"(?P<way>早|晚|提前|推后|延后)\s*(一|1)?\s*(班|趟|点的?(班|趟|航班|车|飞机)?)(?!天)")
ADJACENT_EN = re.compile(r"\b(?P<way>earlier|later)\s+(one|train|flight|departure|plane|connection)\b", re.I)
# another hotel for the stay booked, in English: I'd rather have a different hotel / switch to another hotel
OTHER_HOTEL_EN = re.compile(r"\b(a different|another|some other) hotel\b", re.I)
# taking another way to travel instead: 改坐火车 / 换成高铁 / 还是坐飞机
OTHER_WAY = re.compile(r"(改坐|改乘|换成|改成|换坐|坐|乘)\s*(?P<way>火车|高铁|动车|飞机|航班)")
EN_NUMBER = {"one": 1, "a": 1, "an": 1, "another": 1, "two": 2, "three": 3, "four": 4, "five": 5}

Finder = Callable[[str, list[Booking], Gazetteer, dt.date], JSONDict | None]


def plain_changes(acts: list[Act], text: str, ctx: Context, gaz: Gazetteer, today: dt.date) -> list[Act]:
    """The turn's acts, with a plainly said change of a booking made in this session turned into the change or
    cancellation act (the others as they were)."""
    acts = _order_named(_changes(acts, text, ctx, gaz, today), text, ctx)
    if any(a.act in ("cancel_booking", "change_booking") for a in acts) and KEPT.search(text):
        acts = [a for a in acts if not (a.act in ("inform", "modify") and set(a.slots) <= {"domain"})]  # 酒店留着
    return change_after_cancel(kind_named(acts, text), text)


def _order_named(acts: list[Act], text: str, ctx: Context) -> list[Act]:
    """I mean booking 13, the Hangzhou train. Change it to…: the order number said in another clause of the turn
    names the booking changed (or cancelled); the clause naming it asks nothing."""
    changes = [a for a in acts if a.act in ("change_booking", "cancel_booking") and "orders" not in a.slots]
    if not changes:
        return acts
    live = live_bookings(ctx.bookings)
    m = re.search(r"(?:订单号?|单号|booking|reservation|order)\s*(?:no\.?|number|#)?\s*(\d+)", text, re.I)
    named = next((b for b in live if m and str(b.get("order_no")) == m.group(1)), None)
    if named is None:
        return acts
    for act in changes:
        if "order_no" not in act.slots:
            act.slots["order_no"] = as_int(named["order_no"])
            act.slots.setdefault("domain", str(named["domain"]))
    if not re.search(r"(\?|？|吗|\b(did|is|was|what|which|where)\b)", text, re.I):
        acts = [a for a in acts if a.act != "ask_about_booking"]
    return acts


def _changes(acts: list[Act], text: str, ctx: Context, gaz: Gazetteer, today: dt.date) -> list[Act]:
    live = live_bookings(ctx.bookings)
    if ctx.open_question not in (None, "anything_else", "choose_change") or not live:
        return acts
    if ctx.open_question == "choose_change":  # 少住一晚吧 while "which booking?" is asked: said anew, it answers
        for find in (_fewer_nights, _upgrade, _more, _adjacent):
            found = find(text, live, gaz, today)
            if found is not None:
                return [Act("change_booking", {**found, "said_anew": True})]  # (what was asked before is dropped)
        return acts
    early_out = _fewer_nights(text, live, gaz, today, checkout_only=True)
    if early_out is not None:  # 提前一天退房: fewer nights, not the stay moved a day earlier
        return [Act("change_booking", early_out)]
    bare = [a for a in acts if a.act == "change_booking" and set(a.slots) <= {"domain", "order_no"}]
    if bare:  # 把订单5改签到早一班 / 订单5换成商务舱: which booking is said, what is new is read here
        named = [b for b in live if bare[0].slots.get("order_no") in (None, b.get("order_no"))]
        named = [b for b in named if bare[0].slots.get("domain") in (None, b.get("domain"))]
        for find in (_upgrade, _fewer_nights, _more, _adjacent):
            found = find(text, named, gaz, today) if named else None
            if found is not None:
                bare[0].slots.update(found)
                return acts
    if any(a.act in ("change_booking", "select", "confirm") for a in acts):
        return acts
    several = _several_cancelled(text, live)
    if several is not None:
        return [several]
    if any(a.act == "cancel_booking" for a in acts) and CANCEL.search(text):
        return acts
    branded = any(a.act in ("inform", "modify") and a.slots.get("brand") for a in acts)
    finders: tuple[Finder, ...] = (_other_hotel, _upgrade, _fewer_nights, _more, _adjacent)
    for finder in finders:
        if finder is _other_hotel and branded:
            continue  # 换一家吧，亚朵那种的: that brand (the swap of ``TaskBranch._swapping``)
        found = finder(text, live, gaz, today)
        if found is not None:
            return [Act("change_booking", found)]
    return acts


def kind_named(acts: list[Act], text: str) -> list[Act]:
    """cancel my train ticket (no order number, the kind named in a way the reader did not take): the booking
    of that kind is meant, not whichever was booked last."""
    named = _named(text)
    if len(named) != 1:
        return acts
    for act in acts:
        if act.act in ("cancel_booking", "change_booking") and not {"domain", "order_no", "orders"} & set(act.slots):
            act.slots["domain"] = named[0]
    return acts


def change_after_cancel(acts: list[Act], text: str) -> list[Act]:
    """把这张机票退了，改坐火车。另外日期改成后天: a change said after the cancellation of the same turn is no
    change of the booking going away but the request replacing it (the way to travel said, on the day said)."""
    names = [a.act for a in acts]
    if "cancel_booking" not in names or "change_booking" not in names[names.index("cancel_booking") + 1 :]:
        return acts
    m = OTHER_WAY.search(text)
    way = {"火车": "train", "高铁": "train", "动车": "train", "飞机": "flight", "航班": "flight"}.get(
        m.group("way") if m else ""
    )
    out: list[Act] = []
    for act in acts:
        if act.act == "change_booking" and "cancel_booking" in [a.act for a in out]:
            slots = {k: v for k, v in act.slots.items() if k not in ("order_no", "domain")}
            out.append(Act("inform", {**({"domain": way} if way else {}), **slots}))
        else:
            out.append(act)
    return out


def _named(text: str) -> list[str]:
    return [domain for domain, pattern in NAMED.items() if pattern.search(text)]


def _last(live: Sequence[Booking], domains: tuple[str, ...]) -> Booking | None:
    return next((b for b in reversed(live) if b.get("domain") in domains), None)


def _trip_booking(text: str, live: Sequence[Booking]) -> Booking | None:
    named = [d for d in _named(text) if d != "hotel"]
    return _last(live, tuple(named) if named else ("flight", "train"))


def _which(booking: Booking) -> JSONDict:
    return {"domain": str(booking.get("domain")), "order_no": as_int(booking.get("order_no"))}


def _count(word: str | None) -> int:
    if not word:
        return 1
    return EN_NUMBER.get(word.lower()) or cn_number(word) or 1


def _several_cancelled(text: str, live: Sequence[Booking]) -> Act | None:
    """机票和酒店都帮我退了 / 两个都取消掉吧: every booking meant, in one cancellation (none silently left)."""
    if not CANCEL.search(text) or len(live) < 2:
        return None
    named = _named(text)
    kept = {d for part in re.split(r"[，,。；;！!]", text) if KEPT.search(part) for d in _named(part)}
    if kept:  # 机票退了，酒店留着: the kind kept is not cancelled
        named = [d for d in named if d not in kept]
        live = [b for b in live if b.get("domain") not in kept]
    if len(named) >= 2:
        meant = [b for b in live if b.get("domain") in named]
        if not EVERY.search(text):  # 机票和酒店退了: each kind named, its latest booking
            meant = [b for d in named if (b := _last(live, (d,))) is not None]
    elif EVERY.search(text):
        meant = [b for b in live if not named or b.get("domain") in named]
    else:
        return None
    if len(meant) < 2:
        return None
    return Act("cancel_booking", {"orders": [as_int(b.get("order_no")) for b in meant]})


def _other_hotel(text: str, live: list[Booking], gaz: Gazetteer, today: dt.date) -> JSONDict | None:
    """换一家吧 after a hotel was booked: another hotel for the same stay (read back as a change of it)."""
    if not (OTHER_HOTEL.search(text) or OTHER_HOTEL_EN.search(text)) or re.search(r"(退|取消|cancel)", text, re.I):
        return None
    booking = _last(live, ("hotel",))
    if booking is None:
        return None
    said = parse_slots(text, gaz, today)
    if said.cities or (said.date and said.date != booking.get("date")):
        return None  # I need another hotel in Beijing tomorrow: another stay, not this one swapped
    found: JSONDict = {**_which(booking), "other_hotel": True}
    for key in ("stars", "min_stars", "max_price"):
        if getattr(said, key, None):
            found[key] = getattr(said, key)
    return found


def _upgrade(text: str, live: list[Booking], gaz: Gazetteer, today: dt.date) -> JSONDict | None:
    """升舱 / 换成商务舱，同一班: the same flight or train in the class said (or the next one up)."""
    if not UPGRADE.search(text):
        return None
    booking = _trip_booking(text, live)
    if booking is None:
        return None
    said = parse_slots(text, gaz, today)
    found: JSONDict = {**_which(booking), "same_trip": True}
    if said.seat_class:
        found["seat_class"] = said.seat_class.replace("公务舱", "商务舱")
    elif "公务舱" in text:
        found["seat_class"] = "商务舱"
    elif said.berths:
        found["berth"] = said.berths[0]  # (a seat booked: a sleeper, ``resolve_changes``)
    else:
        found["upgrade"] = True
    return found


def _fewer_nights(
    text: str, live: list[Booking], gaz: Gazetteer, today: dt.date, checkout_only: bool = False
) -> JSONDict | None:
    """少住一晚 / 提前一天退房 / 改成住两晚 / cut the stay to two nights after a hotel was booked: the same hotel,
    fewer nights."""
    booking = _last(live, ("hotel",))
    if booking is None:
        return None
    booked = as_int(booking.get("nights") or 1)
    m = FEWER.search(text)
    english = FEWER_EN.search(text)
    nights: int | None = None
    if checkout_only and not (m and m.group(5)) and not (english and english.group("m")):
        return None
    if m and (m.group(1) in ("少住", "少订", "少待", "减少") or m.group(5)):
        nights = booked - (cn_number(m.group("n")) or 1 if m.group("n") else 1)
    elif english:
        nights = booked - _count(english.group("n") or english.group("m") or english.group("k"))
    elif SHORTER_TO.search(text) and re.search(r"(改|只|就|少)", text):
        nights = as_int(_hotel_numbers(text, False).get("nights") or 0) or None
    elif (shorter := SHORTER_TO_EN.search(text)) is not None and (
        NAMED["hotel"].search(text) or re.search(r"\b(cut|shorten|reduce)\b", text, re.I)
    ):
        nights = _count(shorter.group("n"))
    if nights is None or not 0 < nights < booked:
        return None
    return {"domain": "hotel", "order_no": as_int(booking.get("order_no")), "nights": nights}


def _more(text: str, live: list[Booking], gaz: Gazetteer, today: dt.date) -> JSONDict | None:
    """同一趟车再加一张 / 再开一间 / one more ticket on the same flight: one booking holding more tickets or rooms
    (the same train, flight or hotel)."""
    m = MORE.search(text)
    english = MORE_EN.search(text) if m is None else None
    if m is None and english is None:
        return None
    if m is not None:
        rooms, more = m.group("unit") == "间", cn_number(m.group("n")) or 1
    else:
        assert english is not None
        unit = english.group("unit") or english.group("unit2") or english.group("unit3") or ""
        rooms, more = unit.lower().startswith("room"), _count(english.group("n") or english.group("n2"))
    booking = _last(live, ("hotel",)) if rooms else _trip_booking(text, live)
    if booking is None:
        return None
    said = parse_slots(text, gaz, today)
    if (said.date and said.date != booking.get("date")) or said.cities:
        return None  # (再订一张周日去上海的: another trip, not this one)
    total = as_int(booking.get("quantity") or 1) + more
    found: JSONDict = _which(booking)
    if rooms:
        found["rooms"] = total
    else:
        found |= {"passengers": total, "same_trip": True}
    return found


def _adjacent(text: str, live: list[Booking], gaz: Gazetteer, today: dt.date) -> JSONDict | None:
    """机票改成早一班的 / 火车换晚一班 / an earlier train: the departure just before (after) the one booked, same
    route, day and class; a clock time said with it (7点40那班) picks that departure."""
    m = ADJACENT.search(text)
    english = ADJACENT_EN.search(text) if m is None else None
    if m is not None and not re.search(r"(改|换|调|挪|要|订)", text):
        return None
    if m is None and (english is None or not re.search(r"\b(move|change|switch|swap|put|want|take)\b", text, re.I)):
        return None
    way = m.group("way") if m is not None else english.group("way").lower() if english is not None else ""
    booking = _trip_booking(text, live)
    if booking is None:
        return None
    in_english = _is_english(text)
    time_from, time_to = _time_bounds(text, in_english)
    period = _period_of(text, in_english)
    if (time_from and time_to) or period:  # an earlier train around noon: the window said, on the day booked
        window: JSONDict = {"time_from": time_from, "time_to": time_to} if time_from and time_to else {"period": period}
        return {**_which(booking), **window}
    found: JSONDict = {**_which(booking), "adjacent": "earlier" if way in ("早", "提前", "earlier") else "later"}
    said = parse_slots(text, gaz, today)
    if said.time_from and not said.time_to:
        found["at"] = said.time_from
    return found
