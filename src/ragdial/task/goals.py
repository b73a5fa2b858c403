"""User goals for the simulator, sampled from the database so that each one is achievable.

Kinds: a single flight, train or hotel; a trip plus a hotel at the destination; and the compound goal
"the flight is too dear → take the train, then a hotel" whose first part the database cannot satisfy.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from collections.abc import Callable, Container, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import TypedDict, cast

from ragdial.jsontypes import JSONDict
from ragdial.task.db import Row, TravelDB
from ragdial.task.slots import PERIODS, WEEKDAY_WORDS

GOAL_KINDS = {"flight": 0.22, "train": 0.22, "hotel": 0.14, "trip+hotel": 0.22, "flight>train+hotel": 0.20}
PERIOD_WORDS = ("早上", "上午", "下午", "晚上")


class GoalConstraints(TypedDict, total=False):
    """What a subgoal asks for: the route and date (or city), and the optional wishes a user states."""

    dep_city: str
    arr_city: str
    city: str
    district: str
    date: str
    period: str
    time_from: str
    time_to: str
    seat_class: str
    berths: list[str]
    max_price: int
    passengers: int
    nights: int
    rooms: int
    stars: int
    min_stars: int


@dataclass
class SubGoal:
    """One booking the user wants (or tries: ``expect_fail`` marks a part the database cannot satisfy)."""

    domain: str
    constraints: GoalConstraints
    date_expr: str = ""
    expect_fail: bool = False


@dataclass
class Goal:
    """A user's whole goal: subgoals in order, plus whether the user will wander off-topic or misspeak once."""

    id: int
    kind: str
    subgoals: list[SubGoal]
    out_of_scope: bool = False
    correction: bool = False
    extra: JSONDict = field(default_factory=dict)
    change_date: str | None = None  # first says this date, then changes it to the real one (a mid-dialog change)
    ask_booking: bool = False  # asks about a booking already made
    compound: bool = False  # confirms and asks for the next part in one sentence
    change: JSONDict | None = None  # after booking, changes the last booking (``kind``: cancel, change_date, …)

    def to_dict(self) -> JSONDict:
        return asdict(self)

    def describe(self) -> str:
        """The goal in words, for a human tester."""
        parts = []
        for sub in self.subgoals:
            c = sub.constraints
            if sub.domain == "hotel":
                text = f"{sub.date_expr}在{c['city']}{c.get('district', '')}住酒店{c.get('nights', 1)}晚"
                if c.get("rooms", 1) > 1:
                    text += f"，{c['rooms']}间"
                if c.get("stars"):
                    text += f"，{c['stars']}星级"
                if c.get("min_stars"):
                    text += f"，{c['min_stars']}星及以上"
            else:
                name = "机票" if sub.domain == "flight" else "火车票"
                text = f"{sub.date_expr}{c.get('period', '')}从{c['dep_city']}到{c['arr_city']}的{name}"
                if c.get("seat_class"):
                    text += f"，{c['seat_class']}"
                if c.get("berths"):
                    text += "，" + "或".join(c["berths"])
            if c.get("max_price"):
                text += f"，{c['max_price']}元以内"
            if sub.expect_fail:
                text += "（如果订不到就改别的方式）"
            parts.append(text)
        return "；然后".join(parts)


def date_expression(date: dt.date, today: dt.date, rng: random.Random) -> str:
    """How a user would name a date: 今天/明天/后天, 下周三, or 12月5日."""
    offset = (date - today).days
    words = {0: "今天", 1: "明天", 2: "后天"}
    if offset in words and rng.random() < 0.8:
        return words[offset]
    next_monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(weeks=1)
    if 0 <= (date - next_monday).days < 7 and rng.random() < 0.5:
        return f"下周{WEEKDAY_WORDS[date.weekday()]}"
    if 0 < offset < 7 and date < next_monday and rng.random() < 0.5:
        return "这周末" if date.weekday() == 5 and rng.random() < 0.5 else f"周{WEEKDAY_WORDS[date.weekday()]}"
    if date.month == today.month and rng.random() < 0.3:
        return f"{date.day}号"
    return f"{date.month}月{date.day}日" if rng.random() < 0.5 else f"{date.month}月{date.day}号"


FIELD_OF = {
    "dep_city": "dep_city",
    "arr_city": "arr_city",
    "city": "city",
    "date": "date",
    "district": "district",
    "time_from": "dep_time",
    "time_to": "dep_time",
    "seat_class": "seat_class",
    "berths": "berth",
    "max_price": "price",
    "stars": "stars",
    "min_stars": "stars",
}


def _order(got: object, want: object) -> int:
    """-1, 0 or 1 as ``got`` is before, equal to or after ``want`` (two texts, or two numbers)."""
    if isinstance(got, str) and isinstance(want, str):
        return (got > want) - (got < want)
    if isinstance(got, int | float) and isinstance(want, int | float):
        return (got > want) - (got < want)
    raise TypeError(f"cannot compare {type(got).__name__} with {type(want).__name__}")


def _among(got: object, want: object) -> bool:
    if isinstance(want, Container):
        return got in want
    raise TypeError(f"argument of type '{type(want).__name__}' is not iterable")


def satisfies(item: Mapping[str, object], constraints: Mapping[str, object]) -> bool:
    """Whether a database row (or an option read from a reply) meets a subgoal's constraints.

    Constraints on fields the item does not carry are not checked (an option line shows no city names).
    """
    checks: dict[str, Callable[[object, object], bool]] = {
        "dep_city": lambda got, want: got == want,
        "arr_city": lambda got, want: got == want,
        "city": lambda got, want: got == want,
        "date": lambda got, want: got == want,
        "district": lambda got, want: got == want,
        "time_from": lambda got, want: _order(got, want) >= 0,
        "time_to": lambda got, want: _order(got, want) < 0 or want == "24:00",
        "seat_class": lambda got, want: got == want,
        "berths": _among,
        "max_price": lambda got, want: _order(got, want) <= 0,
        "stars": lambda got, want: got == want,
        "min_stars": lambda got, want: _order(got, want) >= 0,
    }
    for key, want in constraints.items():
        if key not in checks or want in (None, "", []) or FIELD_OF[key] not in item:
            continue
        if not checks[key](item[FIELD_OF[key]], want):
            return False
    return True


def _random_row(
    db: TravelDB, table: str, dates: list[str], rng: random.Random, where: str = "", args: tuple[object, ...] = ()
) -> Row | None:
    date = rng.choice(dates)
    cond = "date = ? AND seats > 0" + (f" AND {where}" if where else "")
    count = db.conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {cond}", (date, *args)).fetchone()[0]
    if not count:
        return None
    row = db.conn.execute(
        f"SELECT * FROM {table} WHERE {cond} LIMIT 1 OFFSET ?", (date, *args, rng.randrange(count))
    ).fetchone()
    return cast(Row, dict(row))  # a row of ``table`` (dbgen.SCHEMA)


def _period_of(clock: str, rng: random.Random | None = None) -> str | None:
    words = PERIOD_WORDS if rng is None or rng.random() < 0.5 else PERIOD_WORDS[1:]
    for word in words:
        start, end = PERIODS[word]
        if start <= clock < end:
            return word
    return None


def _budget(price: int, rng: random.Random) -> int:
    return int(math.ceil(price * rng.uniform(1.05, 1.5) / 100) * 100)


def _trip(db: TravelDB, domain: str, row: Row, today: dt.date, rng: random.Random) -> SubGoal:
    c: GoalConstraints = {"dep_city": row["dep_city"], "arr_city": row["arr_city"], "date": row["date"]}
    period = _period_of(row["dep_time"], rng)
    if period and rng.random() < 0.5:
        c["period"] = period
        c["time_from"], c["time_to"] = PERIODS[period]
    if rng.random() < 0.6:
        c["seat_class"] = row["seat_class"]
        if row["berth"] and rng.random() < 0.7:
            others = [b for b in ("上铺", "中铺", "下铺") if b != row["berth"]]
            c["berths"] = (
                sorted({row["berth"], rng.choice(others)}, key=lambda b: "上中下".index(b[0]))
                if rng.random() < 0.6
                else [row["berth"]]
            )
            if row["seat_class"] == "软卧":
                c["berths"] = [b for b in c["berths"] if b != "中铺"]
    if rng.random() < 0.4:
        c["max_price"] = _budget(row["price"], rng)
    if row["seats"] >= 2 and rng.random() < 0.2:
        c["passengers"] = 2
    date = dt.date.fromisoformat(row["date"])
    return SubGoal(domain, c, date_expression(date, today, rng))


def _hotel(
    db: TravelDB, city: str | None, date: str | None, dates: list[str], today: dt.date, rng: random.Random
) -> SubGoal | None:
    date = date or rng.choice(dates)
    sql = "SELECT h.* FROM hotels h JOIN hotel_rooms r ON r.hotel_id = h.id WHERE r.date = ? AND r.rooms > 0"
    args: list[object] = [date]
    if city:
        sql += " AND h.city = ?"
        args.append(city)
    rows = [cast(Row, dict(r)) for r in db.conn.execute(sql, args)]  # hotels rows (dbgen.SCHEMA)
    if not rows:
        return None
    row = rng.choice(rows)
    c: GoalConstraints = {"city": row["city"], "date": date}
    nights = rng.choice((1, 1, 2, 2, 3))
    # leave a night of slack at the end of the timetables: the trip booked may arrive a day later than planned
    nights = max(1, min(nights, (dt.date.fromisoformat(db.dates()[-1]) - dt.date.fromisoformat(date)).days))
    rooms = 2 if rng.random() < 0.25 else 1
    if db.search("hotel", {"city": row["city"], "date": date, "nights": nights, "rooms": rooms}, limit=500):
        c["nights"], c["rooms"] = nights, rooms
        free = db.search("hotel", {"city": row["city"], "date": date, "nights": nights, "rooms": rooms}, limit=500)
        row = rng.choice(free)
    if rng.random() < 0.3:
        c["district"] = row["district"]
    roll = rng.random()
    if roll < 0.5:
        c["stars"] = row["stars"]
    elif roll < 0.75 and row["stars"] >= 3:
        c["min_stars"] = row["stars"] - 1
    if rng.random() < 0.4:
        c["max_price"] = _budget(row["price"], rng)
    return SubGoal("hotel", c, date_expression(dt.date.fromisoformat(date), today, rng))


def sample_goal(db: TravelDB, goal_id: int, today: dt.date, rng: random.Random, days_ahead: int = 10) -> Goal:
    """One achievable goal (retries internally until the database supports it)."""
    dates = [d for d in db.dates() if today.isoformat() <= d <= (today + dt.timedelta(days=days_ahead)).isoformat()]
    kinds, weights = zip(*GOAL_KINDS.items(), strict=True)
    while True:
        kind = rng.choices(kinds, weights)[0]
        subs: list[SubGoal] = []
        if kind in ("flight", "train", "trip+hotel"):
            domain = kind if kind != "trip+hotel" else rng.choice(("flight", "train"))
            row = _random_row(db, "flights" if domain == "flight" else "trains", dates, rng)
            if row is None:
                continue
            subs.append(_trip(db, domain, row, today, rng))
            if kind == "trip+hotel":
                arrival = dt.date.fromisoformat(row["date"]) + dt.timedelta(days=int(row.get("arr_days") or 0))
                if arrival.isoformat() not in db.dates():
                    continue
                hotel = _hotel(db, row["arr_city"], arrival.isoformat(), dates, today, rng)
                if hotel is None:
                    continue
                hotel.date_expr = ""  # the hotel is for the day of arrival: said implicitly
                subs.append(hotel)
        elif kind == "hotel":
            hotel = _hotel(db, None, None, dates, today, rng)
            if hotel is None:
                continue
            subs.append(hotel)
        else:  # flight too dear -> train -> hotel
            train = _random_row(db, "trains", dates, rng)
            if train is None:
                continue
            cheapest = db.conn.execute(
                "SELECT MIN(price) FROM flights WHERE dep_city = ? AND arr_city = ? AND date = ? AND seats > 0",
                (train["dep_city"], train["arr_city"], train["date"]),
            ).fetchone()[0]
            budget = int(math.floor((cheapest or 0) * 0.8 / 50) * 50) if cheapest else 0
            if not cheapest or budget < train["price"]:
                continue
            date = dt.date.fromisoformat(train["date"])
            expr = date_expression(date, today, rng)
            route: GoalConstraints = {
                "dep_city": train["dep_city"],
                "arr_city": train["arr_city"],
                "date": train["date"],
                "max_price": budget,
            }
            subs.append(SubGoal("flight", route.copy(), expr, expect_fail=True))
            subs.append(SubGoal("train", route.copy(), ""))
            arrival = dt.date.fromisoformat(train["date"]) + dt.timedelta(days=int(train.get("arr_days") or 0))
            if arrival.isoformat() not in db.dates():
                continue
            hotel = _hotel(db, train["arr_city"], arrival.isoformat(), dates, today, rng)
            if hotel is None:
                continue
            hotel.date_expr = ""
            subs.append(hotel)
        goal = Goal(goal_id, kind, subs, out_of_scope=rng.random() < 0.3, correction=rng.random() < 0.2)
        first = subs[0]
        if not first.expect_fail and rng.random() < 0.25:
            wrong = dt.date.fromisoformat(first.constraints["date"]) + dt.timedelta(days=rng.choice((-1, 1, 2)))
            if wrong >= today and wrong.isoformat() in dates:
                goal.change_date = wrong.isoformat()
        goal.ask_booking = rng.random() < 0.3
        goal.compound = len([s for s in subs if not s.expect_fail]) > 1 and rng.random() < 0.5
        return goal


CHANGE_KINDS = ("cancel", "change_date", "upgrade", "fewer_nights", "add_ticket")


def booking_change(db: TravelDB, goal: Goal, rng: random.Random) -> JSONDict | None:
    """A change of the goal's last booking the user asks for once everything is booked (cancel it, move it a day
    later, a better class on the same flight, one night fewer, one more ticket), among those the database allows."""
    last = goal.subgoals[-1]
    c = last.constraints
    later = (dt.date.fromisoformat(c["date"]) + dt.timedelta(days=1)).isoformat()
    kinds = ["cancel"]
    if later in db.dates()[:-1]:
        wanted = {**c, "date": later, "berth": c.get("berths"), "seat_class": c.get("seat_class")}
        if db.search(last.domain, {k: v for k, v in wanted.items() if v is not None}, limit=1):
            kinds.append("change_date")
    if last.domain == "hotel" and c.get("nights", 1) > 1:
        kinds.append("fewer_nights")
    if last.domain == "flight" and c.get("seat_class", "经济舱") == "经济舱" and not c.get("max_price"):
        kinds.append("upgrade")
    if last.domain != "hotel" and c.get("passengers", 1) == 1:
        kinds.append("add_ticket")
    kind = rng.choice(kinds)
    return {"kind": kind, "date": later} if kind == "change_date" else {"kind": kind}


def sample_goals(db: TravelDB, n: int, seed: int, today: dt.date, changes: float = 0.0) -> list[Goal]:
    """``n`` goals, the same for the same database, seed and date. ``changes``: the share of goals that change
    their last booking afterwards (drawn apart, so the goals themselves are the same whatever the share)."""
    rng = random.Random(seed)
    goals = [sample_goal(db, i, today, rng) for i in range(n)]
    if changes > 0:
        pick = random.Random(seed * 7919 + 17)
        for goal in goals:
            if pick.random() < changes:
                goal.change = booking_change(db, goal, pick)
    return goals


def goals_as_booked(db: TravelDB, n: int, seed: int, today: dt.date, changes: float = 0.0) -> Iterator[Goal]:
    """``n`` goals, each sampled when it is taken, against the database as the dialogs before it left it (so no
    goal asks for a room or seat an earlier simulated dialog has booked): the same streams as ``sample_goals``, so
    on an untouched database the two give the same goals."""
    rng = random.Random(seed)
    pick = random.Random(seed * 7919 + 17)
    for i in range(n):
        goal = sample_goal(db, i, today, rng)
        if changes > 0 and pick.random() < changes:
            goal.change = booking_change(db, goal, pick)
        yield goal
