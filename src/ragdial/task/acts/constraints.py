"""Constraint slots of an inform/modify clause and of a request, and which of them change the state."""

from __future__ import annotations

import datetime as dt
import re

from ragdial.jsontypes import JSONDict, JSONValue, as_text_or_none
from ragdial.task.acts.aside import _has_constraints
from ragdial.task.acts.choice import _reference
from ragdial.task.acts.context import Context
from ragdial.task.acts.finders import (
    CLOCK,
    PERIOD_SAID,
    _airline_of,
    _arrive_by,
    _berths_of,
    _brand_of,
    _class_value,
    _classes_of,
    _clock_of,
    _count,
    _dates,
    _district_of,
    _domain_named,
    _exclusions,
    _hotel_numbers,
    _kinds_of,
    _passengers,
    _period_of,
    _price_of,
    _refused_time,
    _stars_of,
    _time_bounds,
    parse,
)
from ragdial.task.acts.limits import limits
from ragdial.task.acts.words import (
    CHANGE_CUES,
    CLASS_WORDS,
    FALLBACK,
    NEGATED_CLASS,
    PERIOD_WORDS,
    REQUEST_CUES,
    SAME_DAY,
    WINDOWS,
)
from ragdial.task.acts.yes import _asks
from ragdial.task.db import Gazetteer
from ragdial.task.orders import live_bookings
from ragdial.task.places import OTHER_CITIES
from ragdial.task.slots import NUM, _find, cn_number
from ragdial.task.values import as_str, items, listed


def _place_for(place: str | None, city: str, domain: str | None, gaz: Gazetteer) -> str | None:
    """The place named, as the kind of place the trip uses: 上海虹桥 for a flight is 虹桥机场, not the station."""
    if place is None or domain not in ("flight", "train"):
        return place
    kind = "airport" if domain == "flight" else "station"
    if gaz.places.get(place, ("", kind))[1] == kind:
        return place
    core = place.removeprefix(city).removesuffix("站").removesuffix("机场")
    same = [n for n, (c, k) in gaz.places.items() if c == city and k == kind and core and core in n]
    return same[0] if len(same) == 1 else place


def _request_slots(text: str, ctx: Context, gaz: Gazetteer, english: bool) -> JSONDict | None:
    lower = text.lower()
    if re.search(r"(太|有点|有些|稍微|略)(贵|高|慢|晚|早|远|差)", text) and not _asks(text, False):
        return None  # 出发时间有点早: a comment on the offer, no question
    wanted: list[str] = []
    for pattern, slot in REQUEST_CUES:
        if re.search(pattern, lower):
            if slot == "price" and (
                re.search(r"(多少度|多少钱以内)", text)
                or wanted
                or _price_of(text, None, english) is not None
                or limits(text, english)[0]
            ):
                continue
            if slot == "district" and not (
                re.search(r"(哪个区|在哪|位置|which district|where)", lower) or _district_of(text, gaz, None)
            ):
                continue
            wanted.append(slot)
    if not wanted:
        if re.search(r"(落地|降落).{0,3}(还是)", text):
            wanted.append("arr_place")
        else:
            return None
    if "district" in wanted and ctx.domain in ("flight", "train"):  # where is the first one?: where it leaves from
        wanted = ["dep_place" if w == "district" else w for w in wanted if w != "dep_place" or "district" not in wanted]
    if "seats_left" in wanted and ctx.domain == "hotel":
        wanted = ["rooms_left" if w == "seats_left" else w for w in wanted]
    if "seats_left" in wanted and (
        ctx.open_question in (None, "anything_else")
        or (
            _dates(text, dt.date(2026, 12, 1), english, {})
            and ctx.open_question not in ("choose_offer", "confirm_booking")
        )
    ):
        return None  # "下周末从沈阳飞上海还有票吗" asks for a search, not a seat count
    if not ctx.offers and ctx.open_question in (None, "anything_else") and _has_constraints(text, gaz, english):
        return None  # 明天武汉飞北京的机票多少钱: a search (the list shows the prices), not a question about an offer
    slots: JSONDict = {w: "?" for w in wanted}  # (price is asked alone: it is skipped once anything else is)
    if ctx.offers:
        slots.update(_reference(text, ctx, gaz, english, asking=set(slots)))
    return slots


def _constraints(
    text: str,
    ctx: Context,
    gaz: Gazetteer,
    today: dt.date,
    english: bool,
    hotelish: bool,
    negated_elsewhere: list[str] = (),  # type: ignore[assignment]
    base_date: str | None = None,
    change_said: bool = False,
) -> JSONDict:
    """Constraint slots a clause states (before deciding inform vs modify)."""
    slots: JSONDict = {}
    fallback = FALLBACK.search(text)
    if fallback and (fallback.group("pre") or fallback.group("what")):
        # 五星没有的话四星也行: the value after the condition is the one wanted; 下午没商务座的话一等座也行: what
        # the condition holds besides what may fail (下午) stays
        args = (ctx, gaz, today, english, hotelish, negated_elsewhere, base_date, change_said)
        held = _constraints(fallback.group("pre"), *args) if fallback.group("what") else {}
        after = text[fallback.end() :]
        slots = _constraints(after, *args) if re.sub(r"[，,。\s吧呢啊]", "", after) else {}
        before = set(parse(fallback.group("pre") or "", gaz, today).places.values()) | {held.get("dep_place")}
        for key in ("dep_place", "arr_place"):
            if slots.get(key) and before - {None, slots[key]} and ctx.state.get(key) in before:
                slots[key] = None  # 首都机场没有的话大兴也行: either airport of the city
                held.pop(key, None)
        return {**held, **slots}
    limited, text = limits(text, english)  # 一共不超过三千 / 三四百一晚 / 别超过五个小时: read once, as limits
    p = parse(text, gaz, today)
    refused_from, refused_to, refused_span = (None, None, None) if english else _refused_time(text)
    if refused_span:  # 六点多那种太早的不要: a bound on the departure, not a comment on the offer
        text = text[: refused_span[0]] + "□" * (refused_span[1] - refused_span[0]) + text[refused_span[1] :]
    if (
        re.search(r"(太|有点|有些|稍微|略)(贵|慢|晚|早|远|累|麻烦|折腾|差)", text)
        and not re.search(r"(改|换)", text)
        and not (not english and _exclusions(text, gaz)[0])  # 五星太贵也不要: a rating refused, with its reason
    ):
        return {}  # "商务舱太贵了", "卧铺太慢了": the reason for a change, not a constraint
    domain = _domain_named(text, english)
    if english and not domain and _brand_of(text, gaz) and not re.search(r"\b(fly|flight|train|plane)", text, re.I):
        domain = "hotel"  # I want a Crowne Plaza in Kunming: a hotel
    if english and not domain and not ctx.domain and _airline_of(text, gaz):
        domain = "flight"  # Sichuan Air from Hangzhou to Beijing: a flight
    if domain:
        slots["domain"] = domain
    excluded, wanted_text = _exclusions(text, gaz, english)  # 别给我如家汉庭那种: not wanted, never searched for
    oq = ctx.open_question
    cities = list(p.cities)
    roles = {role for _c, role in cities if role}
    trip = bool(roles) or len(cities) > 1 or bool(re.search(r"(回程|返程|往返)", text))
    if ctx.domain == "hotel" and oq != "anything_else" and roles <= {"arr"} and len(cities) <= 1:
        trip = False  # "换到重庆吧" while choosing a hotel moves the hotel
    target = domain or ("hotel" if hotelish and not trip else None)
    if target is None:
        target = (
            "train" if trip and ctx.domain == "hotel" else (ctx.domain if oq != "anything_else" or not trip else None)
        )
    hotel = target == "hotel"
    negated = list(p.negated_cities) + [c for c in negated_elsewhere if c not in p.negated_cities]
    if (
        cities
        and not roles
        and not hotel
        and oq not in ("dep_city", "arr_city", "city")
        and not negated
        and not re.search(CHANGE_CUES, text)
        and not change_said
        and len(cities) == 1
        and not (_dates(text, today, english, {}) or _classes_of(text, english))
        and not p.places
    ):
        cities = []  # "我在武汉": a city said in passing is no constraint
    for city, role in cities:
        place = _place_for(p.places.get(city), city, target, gaz)
        if hotel:
            slots["city"] = city
            continue
        if role is None:
            if oq in ("dep_city", "arr_city"):
                role = "dep" if oq == "dep_city" else "arr"
            elif re.search(r"(目的地|到达地|终点)", text):
                role = "arr"
            elif re.search(r"(出发地|起点|出发站)", text):
                role = "dep"
            elif negated:
                negated_role = (ctx.state.get("dep_city") == negated[0] and "dep") or "arr"
                role = negated_role
            elif change_said and ctx.state.get("last_city_slot") in ("dep_city", "arr_city"):
                role = "dep" if ctx.state["last_city_slot"] == "dep_city" else "arr"
            elif ctx.state.get("dep_city") and not ctx.state.get("arr_city"):
                role = "arr"
            elif (ctx.state.get("arr_city") and not ctx.state.get("dep_city")) or (
                len(cities) == 1 and re.search(r"(出发|走)", text)
            ):
                role = "dep"
            else:
                role = "arr" if "dep_city" in slots else ("dep" if len(cities) > 1 else "arr")
        if place and len(cities) == 1 and not p.cities[0][1]:
            known_dep, known_arr = ctx.state.get("dep_city"), ctx.state.get("arr_city")
            if city == known_dep != known_arr:
                role = "dep"  # 改成大兴机场 while flying from 北京: the airport one leaves from
            elif city == known_arr != known_dep:
                role = "arr"
        key = "dep" if role == "dep" else "arr"
        slots[f"{key}_city"] = city
        if place:
            slots[f"{key}_place"] = place
    slots.update(_dates(text, today, english, ctx.state))
    _after_outbound(slots, text, ctx)
    if "date" not in slots and re.search(r"(第二天|次日|隔天)", text) and (base_date or ctx.state.get("date")):
        base = dt.date.fromisoformat(base_date or as_str(ctx.state["date"]))
        slots["date"] = (base + dt.timedelta(days=1)).isoformat()
    if "date" not in slots and SAME_DAY.search(text):  # 同一天 / 当天: the day of the trip talked about
        known = [ctx.state.get("date"), ctx.state.get("said_date")] + [b.get("date") for b in reversed(ctx.bookings)]
        day = next((d for d in known if isinstance(d, str) and d), None)
        if day:
            slots["date"] = day
    arr_by, timed = (None, text) if english or hotel else _arrive_by(text)
    if arr_by:
        slots["arr_by"] = arr_by
    time_from, time_to = _time_bounds(timed, english)
    time_from, time_to = refused_from or time_from, refused_to or time_to
    if time_from or time_to:
        if time_from:
            slots["time_from"] = time_from
        if time_to:
            slots["time_to"] = time_to
    elif not hotel or (not hotelish and oq == "anything_else"):  # 当天上午的 (after a hotel): a trip's window
        period = _period_of(timed, english)
        unclassed = re.sub("|".join(CLASS_WORDS), lambda m: "□" * len(m.group(0)), timed)  # 商务 sounds like 上午
        said = {PERIOD_WORDS[w] for _s, _e, w in _find(unclassed, list(PERIOD_WORDS))} if not english else set()
        if len(said) > 1 and re.search(r"(或|也行|都行|都可以|和|跟|还是)", text):
            # 下午晚上的也行: one window from the earliest start to the latest end of the periods said
            slots["time_from"] = min(WINDOWS[p][0] for p in said)
            slots["time_to"] = max(WINDOWS[p][1] for p in said)
        elif period:
            slots["period"] = period
    classes = _classes_of(NEGATED_CLASS.sub(" ", text), english)  # 不要经济舱，公务舱的话…: not the refused one
    value = _class_value(classes, text, target)
    asked_class = ctx.state.get("seat_class")
    also = re.search(r"(也行|也可以|也成)", text)
    if isinstance(value, str) and isinstance(asked_class, str) and asked_class != value and also:
        slots["seat_class"] = [asked_class, value]  # 一等座也行 after 商务座: either
    elif value is not None:
        slots["seat_class"] = value
    berth = _berths_of(wanted_text, english)
    if berth:
        slots["berth"] = berth
    kinds = _kinds_of(wanted_text)
    if kinds and re.search(r"(也行|也可以|也成|也没问题)", text) and ctx.state.get("train_kinds"):
        asked = [str(kind) for kind in items(ctx.state["train_kinds"])]
        kinds = sorted({*asked, *kinds}, key="GDZTK".find)  # 动车也行: as well as the kind asked
    if kinds:
        slots["train_kinds"] = kinds
    airline = _airline_of(wanted_text, gaz)
    if airline:
        slots["airline"] = airline
    price = _price_of(text, oq, english)
    if price:
        slots["max_price"] = price
    if hotel:
        stars, min_stars = _stars_of(wanted_text, english)
        if stars:
            slots["stars"] = stars
        if min_stars:
            slots["min_stars"] = min_stars
        brand = _brand_of(wanted_text, gaz)
        if brand:
            slots["brand"] = brand
        district = _district_of(wanted_text, gaz, as_text_or_none(slots.get("city") or ctx.state.get("city")))
        if district:
            slots["district"] = district
        slots.update(_hotel_numbers(text, english))
        _extension(text, slots, ctx)
        if oq == "guests" and "guests" not in slots:
            n = _count(text, rf"({NUM})\s*(?:个)")
            if n:
                slots["guests"] = n
        if oq == "rooms" and "rooms" not in slots:
            n = _count(text, rf"({NUM})\s*间")
            if n:
                slots["rooms"] = n
    else:
        n = _passengers(text, english)
        if n:
            slots["passengers"] = n
        if not slots.get("seat_class") and _stars_of(text, english) != (None, None) and not domain:
            stars, min_stars = _stars_of(text, english)
            slots.update({k: v for k, v in (("stars", stars), ("min_stars", min_stars)) if v})
    _excluded(slots, excluded, text, ctx, hotel, target)
    slots.update({k: v for k, v in limited.items() if not (hotel and k in ("max_duration", "arr_by", "arr_after"))})
    unserved = [c for c in OTHER_CITIES if c in text and c not in gaz.cities]
    if unserved and not english:
        slots["unserved"] = unserved[0]  # 去三亚: named back to the user, never searched as another city
    return slots


# the reason for a trip said with its place and time: 下周一上午十点我得在西安开会 (the place is where one goes, the
# time when one must be there), said next to a request (从广州飞过去)
PURPOSE = re.compile(
    r"在(?P<place>[^，,。在]{2,8}?)(?:那边|这边)?(?:开会|开个会|出差|办事|办点事|见客户|见个客户|面试|参加|报到|考试|上班|谈事|谈生意|培训|"
    r"签合同|演出|比赛)"
)
GOING = re.compile(r"(过去|飞|去|坐|机票|高铁|火车|动车|航班|赶到|订|酒店|住)")


def _purpose(clause: str, whole: str, gaz: Gazetteer, today: dt.date) -> JSONDict | None:
    """The trip a reason clause implies when the turn also asks for travel: where to (or where to stay), which
    day, and the time one must be there (arr_by); None when the clause names no such reason or city."""
    m = PURPOSE.search(clause)
    rest = whole.replace(clause, "")
    if not m or not GOING.search(rest):
        return None
    cities = [c for c, _role in parse(m.group("place"), gaz, today).cities]
    if len(cities) != 1:
        return None
    hotel = bool(re.search(r"(酒店|宾馆|住)", rest)) and not re.search(r"(飞|机票|火车|高铁|动车|航班)", rest)
    slots: JSONDict = {"city" if hotel else "arr_city": cities[0]}
    slots.update(_dates(clause, today, False, {}))
    clock = re.search(rf"{PERIOD_SAID}?\s*{CLOCK}", clause[: m.start()])
    if clock and not hotel:
        slots["arr_by"] = _clock_of(clock.group(2), clock.group(3), clock.group(4), clock.group(1))
    return slots


RETURN_LEG = re.compile(r"(回来|回程|返程|返回|回去|飞回|坐回|回家|return|back)", re.I)
BARE_WEEKDAY = re.compile(
    r"(?<![下这本个])(周|星期|礼拜)[一二三四五六日天1-7]|(?<!(next|this) )\b(mon|tues|wednes|thurs|fri|satur|sun)day",
    re.I,
)


def _after_outbound(slots: JSONDict, text: str, ctx: Context, whole: str = "") -> None:
    """The way back said with a bare weekday (周日回来) is the first such day after the outbound trip (the date
    under way or the last trip booked), not the next one from today."""
    said = slots.get("date")
    if not isinstance(said, str) or not RETURN_LEG.search(whole or text) or not BARE_WEEKDAY.search(text):
        return
    known = [ctx.state.get("date")] + [b.get("date") for b in live_bookings(ctx.bookings)]
    outbound = max((d for d in known if isinstance(d, str) and d), default=None)
    day = dt.date.fromisoformat(said)
    while outbound and day.isoformat() < outbound:
        day += dt.timedelta(days=7)
    slots["date"] = day.isoformat()


EXCLUDED_OF = {
    "not_brand": "brand",
    "not_airline": "airline",
    "not_train_kinds": "train_kinds",
    "not_stars": "stars",
    "not_district": "district",
}
HOTEL_EXCLUSIONS = ("not_brand", "not_stars", "not_district")
BERTHS = ("上铺", "中铺", "下铺")


def _excluded(
    slots: JSONDict, excluded: dict[str, list[str]], text: str, ctx: Context, hotel: bool, target: str | None
) -> None:
    """The exclusions a clause says, added to those in force (不要如家 … 汉庭也不要), or replacing them (除了汉庭都行);
    a value excluded before and now said to be fine (国航也行) is no longer excluded, and not the only one wanted.
    A berth refused (除了上铺都行) is the other berths wanted; a star rating refused (二星不要) is ``not_stars``."""
    for key, values in excluded.items():
        if (key in HOTEL_EXCLUSIONS) != hotel or (key == "not_airline" and target == "train"):
            continue  # 不要高铁 in a hotel request, 不要如家 for a flight: nothing to exclude there
        if key == "not_berth":
            if "berth" not in slots:
                slots["berth"] = [b for b in BERTHS if b not in values]
            continue
        said: list[JSONValue] = [int(v) for v in values] if key == "not_stars" else list(values)
        before = [v for v in listed(ctx.state.get(key)) if isinstance(v, str | int)]
        slots[key] = said if re.search(r"(除了|除去|以外|之外)", text) else list(dict.fromkeys(before + said))
        wanted = slots.get(EXCLUDED_OF[key])
        if wanted is not None and str(wanted) in {str(v) for v in said}:
            slots.pop(EXCLUDED_OF[key])  # 不要四星的: never the refused value itself
    if re.search(r"(也行|也可以|也成|也没问题|也没关系|也无所谓)", text):
        for key, wanted_key in EXCLUDED_OF.items():
            before_said = [str(v) for v in listed(ctx.state.get(key))]
            wanted_now = [str(v) for v in listed(slots.get(wanted_key))]
            if before_said and wanted_now and set(wanted_now) & set(before_said):
                kept: list[JSONValue] = [
                    v for v in listed(ctx.state.get(key)) if isinstance(v, str | int) and str(v) not in wanted_now
                ]
                slots[key] = kept or None
                slots.pop(wanted_key)


# staying longer: 周日还要再待一天 / 再住一晚 / 多住两天 (a day said with it is the last night, not a new check-in)
EXTEND = re.compile(r"(再待|再住|再呆|多住|多待|多呆|还要待|还要住|还得住|续住|延住|加住|延长|也住|也要住)")


def _extension(text: str, slots: JSONDict, ctx: Context) -> None:
    """The stay under way made longer: ``nights`` up to the day said, or more by the nights said (default 1);
    the day said is no check-in."""
    checkin = ctx.state.get("date")
    if not isinstance(checkin, str) or not EXTEND.search(text):
        return
    nights = int(str(ctx.state.get("nights") or 1))
    said = slots.pop("date", None)
    if isinstance(said, str) and said >= checkin:
        last = (dt.date.fromisoformat(said) - dt.date.fromisoformat(checkin)).days + 1
        slots["nights"] = max(nights, last)
        return
    m = re.search(rf"({NUM})\s*(?:晚|天|夜)", text[EXTEND.search(text).end() :])  # type: ignore[union-attr]
    more = cn_number(m.group(1)) if m else 1
    slots["nights"] = nights + (more or 1)


def _split_changes(slots: JSONDict, ctx: Context, fresh: bool) -> tuple[JSONDict, JSONDict]:
    """(inform, modify) parts: a slot changing a value already known is a modification; a repeated value is
    not labelled (nothing changes), unless this starts a new request."""
    inform: JSONDict = {}
    modify: JSONDict = {}
    state = ctx.state
    new_request = fresh
    for key, value in slots.items():
        if key == "domain":
            if fresh:
                inform[key] = value
            elif ctx.domain and value != ctx.domain:
                modify[key] = value
            continue
        known = state.get(key)
        if new_request or known is None or known == "":
            inform[key] = value
        elif same_value(known, value):
            continue
        else:
            modify[key] = value
    return inform, modify


def same_value(a: JSONValue, b: JSONValue) -> bool:
    """Whether two slot values say the same (a one-item list and its item do)."""
    if isinstance(a, list) or isinstance(b, list):
        return sorted(a if isinstance(a, list) else [a]) == sorted(b if isinstance(b, list) else [b])
    return a == b
