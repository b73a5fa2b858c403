"""Two legs asked in one first turn, each with its own conditions: the way out and the way back (周五晚上飞深圳；
周日中午以前再飞回来，回程要商务舱), or a stay and then a trip (16号住两晚…；18号退房后下午坐高铁去广州).

When the reader joined such a turn into one request (the way back's time bound on the way out, the stay's city
as the trip's origin), ``split_legs`` reads each part of the text on its own, in the order said: the first leg is
the request, the second waits for it (a way back as its ``return_leg``, a trip after a stay as its own request).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

from ragdial.jsontypes import JSONDict
from ragdial.task.acts import Act

# where the way back starts: 再飞回上海 / 周日再回来 / 回程… / 返程…
BACK = re.compile(r"(再飞回|再坐回|再回|飞回|坐回|回程|返程|回来|返回|fly back|come back|return)", re.I)
# a trip said after a stay: 坐高铁去广州 / 飞成都 / 的火车票
TRIP = re.compile(r"(坐|乘|飞|高铁|火车|动车|机票|航班|车票|flight|train)", re.I)
STAY = re.compile(r"(住|酒店|宾馆|入住|hotel|stay)", re.I)
# only the way back's (回程要商务舱): a class said with these words is not the way out's
BACK_ONLY = re.compile(r"(回程|返程|回来的|回去的|the way back|return)", re.I)
CLAUSES = re.compile(r"(?<=[，,。；;！!])")
SHARED = ("passengers",)  # said once for both legs (两张 / 我们俩)
BACK_KEYS = (
    *("date", "period", "time_from", "time_to", "seat_class", "berth", "train_kinds"),
    *("passengers", "dep_place", "arr_place", "max_price", "airline", "arr_by"),
)
WEEKDAY = re.compile(
    r"(?<![下这本个])(周|星期|礼拜)[一二三四五六日天1-7]|\b(mon|tues|wednes|thurs|fri|satur|sun)day", re.I
)

Read = Callable[[str], JSONDict]


def _cut(clauses: list[str], pattern: re.Pattern[str]) -> int | None:
    return next((i for i, c in enumerate(clauses) if i and pattern.search(c)), None)


def not_before(day: str, start: str) -> str:
    """A leg said after another (a trip after a stay: 住两晚…周日再飞回成都) never falls before the first one
    starts: a day read as this week's, before it, is the same weekday of the week the first leg is in or after."""
    moved = dt.date.fromisoformat(day)
    while moved.isoformat() < start:
        moved += dt.timedelta(days=7)
    return moved.isoformat()


def split_legs(acts: list[Act], text: str, read: Read) -> list[Act]:
    """The turn's acts with a joined two-leg request split into its legs (the others as they were)."""
    if any(a.act in ("select", "confirm", "cancel_booking", "change_booking") for a in acts):
        return acts
    informs = [a for a in acts if a.act in ("inform", "modify")]
    if len(informs) != 1 or any("return_leg" in a.slots for a in informs):
        return acts
    joined = informs[0]
    clauses = [c for c in CLAUSES.split(text) if c.strip()]
    if len(clauses) < 2:
        return acts
    index = acts.index(joined)
    trip = joined.slots.get("domain") in ("flight", "train") or {"dep_city", "arr_city"} <= set(joined.slots)
    back_at = _cut(clauses, BACK)
    stay_first = STAY.search(clauses[0]) and not TRIP.search(clauses[0])
    if trip and back_at is not None and not stay_first:
        legs = _way_back(joined, clauses, back_at, read)
    else:
        trip_at = _cut(clauses, TRIP) if stay_first else None
        legs = _stay_then_trip(clauses, trip_at, read) if trip_at is not None else None
    if legs is None:
        return acts
    return [*acts[:index], *legs, *acts[index + 1 :]]


def _way_back(joined: Act, clauses: list[str], at: int, read: Read) -> list[Act] | None:
    out = read("".join(clauses[:at]))
    back = read("".join(clauses[at:]))
    if not ({"dep_city", "arr_city"} <= set(out) and isinstance(out.get("date"), str)):
        return None
    if not isinstance(back.get("date"), str):
        return None
    day = dt.date.fromisoformat(str(back["date"]))
    while day.isoformat() <= str(out["date"]) and WEEKDAY.search("".join(clauses[at:])):
        day += dt.timedelta(days=7)  # 周日再回来: the Sunday after the way out
    if day.isoformat() < str(out["date"]):
        return None
    way_back: JSONDict = {k: v for k, v in back.items() if k in BACK_KEYS}
    way_back["date"] = day.isoformat()
    for key in SHARED:
        if key in way_back and key not in out:
            out[key] = way_back[key]
    later = "".join(clauses[at + 1 :])
    if "seat_class" in back and "seat_class" not in out and not BACK_ONLY.search(later) and later:
        out["seat_class"] = back["seat_class"]  # …再回来，一等座两张: said once, for both
    domain = joined.slots.get("domain") or out.get("domain")
    out.pop("return_leg", None)
    return [Act(joined.act, {**({"domain": domain} if domain else {}), **out, "return_leg": way_back})]


def _stay_then_trip(clauses: list[str], at: int, read: Read) -> list[Act] | None:
    stay = read("".join(clauses[:at]))
    trip = read("".join(clauses[at:]))
    if not stay.get("city") and stay.get("arr_city"):
        stay["city"] = stay.pop("arr_city")
    stay = {k: v for k, v in stay.items() if k not in ("dep_city", "arr_city", "domain", "train_kinds")}
    if not stay.get("city") or not ({"dep_city", "arr_city"} & set(trip)):
        return None
    if not trip.get("date") and trip.get("check_out"):
        trip["date"] = trip["check_out"]  # 18号退房后…坐高铁: the day of the check-out
    if not trip.get("date") and stay.get("date"):
        nights = stay.get("nights")
        start = dt.date.fromisoformat(str(stay["date"]))
        trip["date"] = (start + dt.timedelta(days=int(nights) if isinstance(nights, int) else 1)).isoformat()
    if isinstance(trip.get("date"), str) and isinstance(stay.get("date"), str):
        trip["date"] = not_before(str(trip["date"]), str(stay["date"]))
    if not trip.get("dep_city"):
        trip["dep_city"] = stay["city"]
    if trip.get("dep_city") == trip.get("arr_city"):
        return None
    trip.pop("city", None)
    for key in ("stars", "min_stars", "district", "nights", "rooms", "check_out", "brand"):
        trip.pop(key, None)
    if not trip.get("domain"):
        trip["domain"] = "train" if re.search(r"(高铁|火车|动车|train)", "".join(clauses[at:]), re.I) else "flight"
    return [Act("inform", {"domain": "hotel", **stay}), Act("inform", trip)]
