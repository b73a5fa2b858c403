"""The task branch: state tracking, database query, replies, booking, failure handling, out-of-scope guidance.

``TaskBranch.respond(state, text)`` is a pure step over plain JSON-serialisable state (a dict), so a session
store can persist it between turns. One turn: parse → route (intent) → update the slots (corrections override,
"不是北京，是天津" replaces the negated city) → ask for the first missing slot, or query the database and list
options, or confirm and book. A goal the database cannot satisfy is said so once, with the nearest alternatives
(a higher budget, other classes or times, other days, the other means of transport), never by asking again.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ragdial.task import replies as R
from ragdial.task.db import TravelDB
from ragdial.task.slots import Parse, parse

FLIGHT_CLASSES = ("经济舱", "商务舱", "头等舱")
TRAIN_CLASSES = ("二等座", "一等座", "商务座", "硬座", "硬卧", "软卧")
REQUIRED = {
    "flight": ("dep_city", "arr_city", "date"),
    "train": ("dep_city", "arr_city", "date"),
    "hotel": ("city", "date"),
}
SHOWN = 3

# SMP2017 task-1 labels the understanding classifier may return, mapped to task domains
SMP_TO_DOMAIN = {"flight": "flight", "train": "train"}
IntentClassifier = Callable[[str], str]


STATE_KEY = "task"  # where a dialog system keeps this branch's state in its session state
UNDER_WAY_KEYS = ("pending", "offers", "asked", "suggest")  # any set: a booking is under way


def under_way(state: dict[str, Any] | None) -> bool:
    """Whether ``state`` is a booking in progress (an offer, a question or a pending booking is open)."""
    return state is not None and any(state.get(key) for key in UNDER_WAY_KEYS)


def new_state() -> dict[str, Any]:
    """The state of a dialog that has not started."""
    return {
        "version": 1,
        "language": "zh",
        "domain": None,
        "slots": {},
        "offers": [],
        "pending": None,
        "asked": None,
        "last_city_slot": None,
        "failures": {},
        "suggest": None,
        "booked": [],
        "turns": 0,
        "done": False,
    }


@dataclass
class TaskTurn:
    """What one ``respond`` step returns: the reply, the new state and what happened."""

    reply: str
    state: dict[str, Any]
    done: bool = False
    booked: dict[str, Any] | None = None
    in_scope: bool = True
    acts: list[str] = field(default_factory=list)

    def __iter__(self):  # allows ``reply, state, info = branch.respond(...)``
        yield self.reply
        yield self.state
        yield {"done": self.done, "booked": self.booked, "in_scope": self.in_scope, "acts": self.acts}


class TaskBranch:
    """Slot-filling dialog manager over a ``TravelDB``.

    ``today`` is the current date relative dates are resolved against (default: the first date of the
    database's timetables, so generated data always has "tomorrow"). ``intent`` optionally maps an utterance to
    an SMP2017 label (``flight``/``train``/``chat``/...); keyword rules are the fallback and cover hotels.
    ``by_sound`` matches names and cue words by toneless pinyin too (robust to homophone ASR errors).
    """

    def __init__(
        self,
        db: TravelDB,
        today: dt.date | None = None,
        intent: IntentClassifier | None = None,
        by_sound: bool = True,
    ) -> None:
        self.by_sound = by_sound
        self.db = db
        self.gazetteer = db.gazetteer()
        self.today = today or dt.date.fromisoformat(db.meta.get("start", dt.date.today().isoformat()))
        self.intent = intent

    # ------------------------------------------------------------------ public
    def claims(self, state: dict[str, Any] | None, text: str) -> bool:
        """Whether the turn ``text`` is this branch's: a booking is under way in ``state``, or it asks for travel."""
        return under_way(state) or self.understands(text)

    def warm_up(self) -> None:
        """Nothing loads lazily (the database and its gazetteer are read at construction)."""
        return None

    def close(self) -> None:
        return None

    def to_config(self) -> dict[str, Any]:
        return {"name": "travel", "db": str(self.db.url), "today": self.today.isoformat()}

    def understands(self, text: str) -> bool:
        """Whether an utterance asks for travel (for a pipeline deciding where to route a new request): a domain
        named (机票/火车/酒店, or the intent classifier's flight/train), a route (北京到上海), or a city with a role
        and a date (明天去上海)."""
        p = parse(text, self.gazetteer, self.today, self.by_sound)
        with_role = [city for city, role in p.cities if role]
        # one city alone ("去北京漫游怎么收费") is not enough: a route, or a city and a date, is a trip
        return bool(self._domain_of(text, p) or (len(p.cities) >= 2 and with_role) or (with_role and p.date))

    def respond(self, state: dict[str, Any] | None, text: str) -> TaskTurn:
        """One dialog step; ``state`` is not modified (a new state is returned)."""
        state = copy.deepcopy(state) if state else new_state()
        state["turns"] += 1
        p = parse(text, self.gazetteer, self.today, self.by_sound)
        lang = state["language"] = p.language
        domain_said = self._domain_of(text, p, use_classifier=state["domain"] is None)
        if p.off_topic and not p.cities and not p.domains:  # "明天天气怎么样" is no travel date
            msg = R.GUIDE[lang] + (" " + self._prompt(state) if state["domain"] else "")
            return TaskTurn(msg, state, in_scope=False, acts=["guide"])

        if "最便宜" in text or "cheapest" in text.lower():
            p.choice = p.choice or 1

        # 1. a pending booking: yes books it, anything else reopens the search
        if state["pending"] is not None:
            if p.affirm and not p.deny and not p.has_slots() and p.choice is None and not domain_said:
                return self._book(state)
            if p.bye and not p.has_slots():
                state["pending"] = None
                return self._finish(state)
            understood = p.affirm or p.deny or p.has_slots() or p.choice is not None or p.code or domain_said
            if not understood:  # misheard or off-topic: keep the booking open and ask again
                msg = R.GUIDE[lang] + " " + self._prompt(state)
                return TaskTurn(msg, state, in_scope=False, acts=["guide"])
            state["pending"] = None
            if p.deny and not p.has_slots() and p.choice is None and not domain_said:
                msg = (
                    "好的，不订这个。您想换哪一个，或者改什么条件？"
                    if lang == "zh"
                    else "OK, not that one. Which one instead, or what should I change?"
                )
                return TaskTurn(msg, state, acts=["reqalts"])

        # 2. choosing one of the listed options
        if state["offers"] and (p.choice is not None or p.code) and not p.has_slots():
            item = self._chosen(state, p)
            if item is not None:
                state["pending"] = {
                    "domain": state["domain"],
                    "id": item["id"],
                    "date": item.get("date") or state["slots"].get("date"),
                }
                return TaskTurn(R.confirm(state["domain"], item, lang), state, acts=["confirm"])

        # 3. goodbye
        if p.bye and not p.has_slots() and not domain_said:
            return self._finish(state)

        # 4. route: a new or changed domain, or a suggested switch accepted
        if domain_said is None and state["suggest"] and p.affirm and not p.has_slots():
            domain_said = state["suggest"]
        if domain_said and domain_said != state["domain"]:
            self._switch(state, domain_said)
        state["suggest"] = None

        # 5. nothing task-related: greet or guide back
        if state["domain"] is None:
            if p.cities or p.seat_class or p.berths or p.stars or p.min_stars or p.max_price:
                state["slots"] = self._merge({}, p, None, state)
                state["domain_hint"] = True
                return TaskTurn(R.SLOT_QUESTIONS[lang]["domain"], state, acts=["request:domain"])
            greeting = any(w in text.lower() for w in ("你好", "您好", "hello", "hi ", "在吗"))
            msg = R.GREETING[lang] if greeting else R.GUIDE[lang]
            return TaskTurn(msg, state, in_scope=False, acts=["guide"])
        if not p.has_slots() and not domain_said and p.choice is None and not p.affirm and not p.deny:
            msg = R.GUIDE[lang] + " " + self._prompt(state)
            return TaskTurn(msg, state, in_scope=False, acts=["guide"])

        # 6. update slots and act
        state["slots"] = self._merge(state["slots"], p, state["domain"], state)
        state["offers"] = [] if p.has_slots() else state["offers"]
        return self._next(state)

    # ------------------------------------------------------------------ routing and slots
    def _domain_of(self, text: str, p: Parse, use_classifier: bool = True) -> str | None:
        """The domain an utterance names: keywords first; the intent classifier only before a task has started
        (mid-task, "从北京出发" must not switch a train booking to flights)."""
        if len(p.domains) == 1:
            return p.domains[0]
        if len(p.domains) > 1:  # "订完机票再订酒店": the first named wins; seat words name trains
            return p.domains[0]
        if self.intent is not None and use_classifier:
            return SMP_TO_DOMAIN.get(str(self.intent(text)))
        return None

    def _switch(self, state: dict[str, Any], domain: str) -> None:
        """Start another domain, carrying over what still applies (route and date; hotel city = destination)."""
        old = state["slots"]
        carried: dict[str, Any] = {}
        if domain in ("flight", "train"):
            for key in ("dep_city", "arr_city", "date", "time_from", "time_to", "period", "max_price"):
                if key in old:
                    carried[key] = old[key]
            if old.get("city") and "arr_city" not in carried and not state.get("domain"):
                carried["arr_city"] = old["city"]
            if old.get("seat_class") in (FLIGHT_CLASSES if domain == "flight" else TRAIN_CLASSES):
                carried["seat_class"] = old["seat_class"]
            for key in ("berths", "train_kinds"):
                if key in old and domain == "train":
                    carried[key] = old[key]
        else:
            city = old.get("arr_city") or old.get("city")
            if city:
                carried["city"] = city
            if old.get("date"):
                carried["date"] = old["date"]
        if state.get("domain") is None:  # slots said before the domain was known all apply
            carried = {**old, **carried}
            if domain == "hotel" and "city" not in carried and old.get("arr_city"):
                carried["city"] = old["arr_city"]
        state["domain"] = domain
        state["slots"] = carried
        state["offers"] = []
        state["pending"] = None
        state["failures"] = {}

    def _merge(self, slots: dict[str, Any], p: Parse, domain: str | None, state: dict[str, Any]) -> dict[str, Any]:
        slots = dict(slots)
        city_keys = ("city",) if domain == "hotel" else ("dep_city", "arr_city")
        for city, role in p.cities:
            key: str | None
            if domain == "hotel":
                key = "city"
            elif role:
                key = f"{role}_city"
            else:
                key = self._city_slot_for(slots, p, state, city)
            if domain is None and role is None and key is None:
                key = "arr_city"
            if key:
                slots[key] = city
                state["last_city_slot"] = key
        del city_keys
        if p.date:
            slots["date"] = p.date
        if p.time_from or p.time_to:
            slots["time_from"], slots["time_to"], slots["period"] = p.time_from, p.time_to, p.period
        if p.seat_class:
            slots["seat_class"] = self._class_for(p.seat_class, domain)
            if slots["seat_class"] is None:
                slots.pop("seat_class")
            if slots.get("seat_class") not in ("硬卧", "软卧"):
                slots.pop("berths", None)
        if p.berths:
            slots["berths"] = p.berths
            if domain == "train" and slots.get("seat_class") not in ("硬卧", "软卧"):
                slots["seat_class"] = "硬卧" if "中铺" in p.berths else slots.get("seat_class") or "软卧"
        if p.train_kinds:
            slots["train_kinds"] = p.train_kinds
        if p.max_price:
            slots["max_price"] = p.max_price
        if p.stars:
            slots["stars"], slots["min_stars"] = p.stars, None
        if p.min_stars:
            slots["min_stars"], slots["stars"] = p.min_stars, None
        return {k: v for k, v in slots.items() if v is not None}

    def _city_slot_for(self, slots: dict[str, Any], p: Parse, state: dict[str, Any], city: str) -> str | None:
        """Which of departure/arrival a city without a role fills."""
        for negated in p.negated_cities:  # "不是北京，是天津"
            for key in ("dep_city", "arr_city"):
                if slots.get(key) == negated:
                    return key
        asked = state.get("asked")
        if asked in ("dep_city", "arr_city"):
            return asked
        if p.correction and state.get("last_city_slot"):
            return state["last_city_slot"]
        if "arr_city" not in slots and slots.get("dep_city") != city:
            return "arr_city"
        if "dep_city" not in slots:
            return "dep_city"
        return state.get("last_city_slot") or "arr_city"

    @staticmethod
    def _class_for(seat: str, domain: str | None) -> str | None:
        if seat == "business":
            return "商务座" if domain == "train" else "商务舱"
        if seat == "first":
            return "一等座" if domain == "train" else "头等舱"
        if domain == "flight" and seat not in FLIGHT_CLASSES:
            return None
        if domain == "train" and seat not in TRAIN_CLASSES:
            return {"经济舱": "二等座", "商务舱": "商务座", "头等舱": "一等座"}.get(seat)
        return seat

    # ------------------------------------------------------------------ acting
    def _missing(self, state: dict[str, Any]) -> str | None:
        for key in REQUIRED[state["domain"]]:
            if not state["slots"].get(key):
                return "hotel_date" if key == "date" and state["domain"] == "hotel" else key
        return None

    def _prompt(self, state: dict[str, Any]) -> str:
        lang = state["language"]
        if state["domain"] is None:
            return R.SLOT_QUESTIONS[lang]["domain"]
        missing = self._missing(state)
        if missing:
            return R.SLOT_QUESTIONS[lang][missing]
        if state["pending"]:
            return "请问确认预订吗？" if lang == "zh" else "Shall I confirm the booking?"
        return "请问您要订哪一个？" if lang == "zh" else "Which one would you like?"

    def _constraints(self, domain: str, slots: dict[str, Any]) -> dict[str, Any]:
        c = {
            k: slots.get(k) for k in ("dep_city", "arr_city", "date", "time_from", "time_to", "seat_class", "max_price")
        }
        if domain == "hotel":
            c = {k: slots.get(k) for k in ("city", "date", "stars", "min_stars", "max_price")}
        else:
            if slots.get("berths"):
                c["berth"] = slots["berths"]
            if domain == "train" and slots.get("train_kinds"):
                c["train_kinds"] = slots["train_kinds"]
        if c.get("time_to") == "24:00":
            c["time_to"] = "24:01"
        return c

    def _next(self, state: dict[str, Any]) -> TaskTurn:
        lang, domain, slots = state["language"], state["domain"], state["slots"]
        missing = self._missing(state)
        if missing:
            state["asked"] = missing.replace("hotel_date", "date")
            return TaskTurn(R.SLOT_QUESTIONS[lang][missing], state, acts=[f"request:{state['asked']}"])
        state["asked"] = None
        if domain != "hotel" and slots["dep_city"] == slots["arr_city"]:
            # keep the city just said, ask again for the other one (never ask the same question in a loop)
            other = "dep_city" if state.get("last_city_slot") == "arr_city" else "arr_city"
            slots.pop(other)
            state["asked"] = other
            msg = (
                "出发地和目的地不能相同。" + R.SLOT_QUESTIONS[lang][other]
                if lang == "zh"
                else "Departure and destination cannot be the same. " + R.SLOT_QUESTIONS[lang][other]
            )
            return TaskTurn(msg, state, acts=[f"request:{other}"])
        constraints = self._constraints(domain, slots)
        rows = self.db.search(domain, constraints, limit=SHOWN)
        if rows:
            state["offers"] = [row["id"] for row in rows]
            state["failures"] = {}
            total = self._count_note(domain, slots, len(rows), lang)
            return TaskTurn(R.options(domain, rows, total, lang), state, acts=["offer"])
        return self._no_result(state, constraints)

    def _count_note(self, domain: str, slots: dict[str, Any], shown: int, lang: str) -> str:
        name = R.DOMAIN_NAMES[lang][domain]
        city = self._city_name
        where = (
            city(slots["city"], lang)
            if domain == "hotel"
            else f"{city(slots['dep_city'], lang)}→{city(slots['arr_city'], lang)}"
        )
        when = R.date_text(slots["date"], lang)
        if lang == "zh":
            return f"为您找到{when}{where}符合条件的{name}，价格最低的{shown}个："
        return f"Here are the {shown} cheapest matching {name} ({where}, {when}):"

    def _city_name(self, city: str, lang: str) -> str:
        return self.gazetteer.english.get(city, city) if lang == "en" else city

    def _no_result(self, state: dict[str, Any], constraints: dict[str, Any]) -> TaskTurn:
        """Say the goal cannot be met as asked and offer the nearest alternatives (never loop on it)."""
        lang, domain = state["language"], state["domain"]
        key = repr(sorted((k, str(v)) for k, v in constraints.items() if v))
        seen = state["failures"].get(key, 0)
        state["failures"][key] = seen + 1
        name = R.DOMAIN_NAMES[lang][domain]
        zh = lang == "zh"
        head = f"抱歉，没有找到满足条件的{name}。" if zh else f"Sorry, no {name} match all your conditions."
        if domain != "hotel":
            route = {k: constraints[k] for k in ("dep_city", "arr_city")}
            if not self.db.search(domain, route, limit=1):
                head = (
                    f"抱歉，没有找到{route['dep_city']}到{route['arr_city']}的{name}。"
                    if zh
                    else f"Sorry, there are no {name} from {self._city_name(route['dep_city'], lang)} to "
                    f"{self._city_name(route['arr_city'], lang)}."
                )
        notes: list[str] = []
        relaxed_rows: list[dict[str, Any]] = []
        for drop, say_zh, say_en in (
            (("max_price",), "放宽预算的话", "with a higher budget"),
            (("berth",), "换个铺位的话", "with another berth"),
            (("seat_class", "berth"), "换个座位等级的话", "in another class"),
            (("train_kinds",), "换个车型的话", "on another kind of train"),
            (("stars", "min_stars"), "换个星级的话", "with another star rating"),
            (("time_from", "time_to"), "换个时段的话", "at another time of day"),
        ):
            if not any(constraints.get(k) for k in drop):
                continue
            relaxed = {k: v for k, v in constraints.items() if k not in drop}
            rows = self.db.search(domain, relaxed, limit=SHOWN)
            if rows:
                relaxed_rows = rows
                notes.append(
                    f"{say_zh}有{len(rows)}个可选，最低{rows[0]['price']}元"
                    if zh
                    else f"{say_en} there are options from {rows[0]['price']} yuan"
                )
                break
        if not relaxed_rows and constraints.get("date"):
            for shift in (1, -1, 2):
                day = dt.date.fromisoformat(constraints["date"]) + dt.timedelta(days=shift)
                if day < self.today:
                    continue
                rows = self.db.search(domain, {**constraints, "date": day.isoformat()}, limit=SHOWN)
                if rows:
                    relaxed_rows = rows
                    notes.append(f"{R.date_text(day.isoformat(), lang)}有" if zh else f"on {day.isoformat()} there are")
                    notes[-1] += "可选的" if zh else " options"
                    break
        other = {"flight": "train", "train": "flight"}.get(domain)
        if other:
            slots = state["slots"]
            other_c = self._constraints(other, {k: v for k, v in slots.items() if k not in ("seat_class", "berths")})
            rows = self.db.search(other, other_c, limit=1)
            if rows:
                state["suggest"] = other
                means = "飞机" if other == "flight" else "火车"
                notes.append(
                    f"改坐{means}的话有符合条件的{R.DOMAIN_NAMES[lang][other]}，最低{rows[0]['price']}元，需要帮您查吗"
                    if zh
                    else f"by {other} there are matching options from {rows[0]['price']} yuan; shall I look?"
                )
        if relaxed_rows:
            state["offers"] = [row["id"] for row in relaxed_rows]
            listing = "\n".join(f"{i}. {R.item_summary(domain, r, lang)}" for i, r in enumerate(relaxed_rows, 1))
        else:
            state["offers"], listing = [], ""
        if not notes:
            tail = (
                "这个条件下确实没有可订的，请您换个日期或目的地试试。"
                if zh
                else "Nothing can be booked under these conditions; please try another date or destination."
            )
        else:
            end = "？" if state["suggest"] else "。"
            tail = (
                ("；".join(notes) + end)
                if zh
                else (" " + "; ".join(notes).rstrip("?") + ("?" if state["suggest"] else "."))
            )
        if seen:  # asked the same again: say plainly that it cannot be done
            tail = (
                "这些条件我已经查过了，确实没有。"
                if zh
                else "I have checked these conditions already: there is nothing."
            ) + tail
        msg = head + tail
        if listing:
            msg += ("\n可选的有：\n" if zh else "\nAlternatives:\n") + listing
        return TaskTurn(msg, state, acts=["nooffer"])

    def _chosen(self, state: dict[str, Any], p: Parse) -> dict[str, Any] | None:
        found = [self.db.get(state["domain"], i) for i in state["offers"]]
        items = [i for i in found if i]
        if p.code:
            for item in items:
                if p.code == (item.get("flight_no") or item.get("train_no")):
                    return item
        if p.choice and 1 <= p.choice <= len(items):
            return items[p.choice - 1]
        return None

    def _book(self, state: dict[str, Any]) -> TaskTurn:
        pending = state["pending"]
        domain, lang = pending["domain"], state["language"]
        item = self.db.get(domain, pending["id"])
        if item is None:
            raise KeyError(f"the pending {domain} booking {pending['id']!r} is not in the travel database")
        if domain == "hotel":
            item = {**item, "date": pending["date"]}
        summary = R.item_summary(domain, item, "zh")
        number = self.db.book(domain, item, pending["date"], summary)
        if number is None:  # taken since it was offered (bookings are all-or-nothing): nothing was booked
            state["pending"] = None
            gone = (
                "抱歉，这个刚刚已经订满了，请换一个。"
                if lang == "zh"
                else "Sorry, that one has just been taken; please pick another."
            )
            return TaskTurn(gone, state, acts=["nooffer"])
        booking = {
            "domain": domain,
            "number": number,
            "item_id": item["id"],
            "date": pending["date"],
            "summary": summary,
        }
        state["booked"].append(booking)
        state["pending"] = None
        state["offers"] = []
        # keep the trip for a following hotel or return leg; clear the preferences of this booking
        state["slots"] = {k: v for k, v in state["slots"].items() if k in ("dep_city", "arr_city", "city", "date")}
        state["domain_done"] = domain
        return TaskTurn(R.booked(domain, item, number, lang), state, booked=booking, acts=["book"])

    def _finish(self, state: dict[str, Any]) -> TaskTurn:
        state["done"] = True
        return TaskTurn(R.BYE[state["language"]], state, done=True, acts=["bye"])
