"""Agenda-based user simulator (Chinese) and the SMP2017 task-2 online-test metrics, plus booking integrity.

The simulated user reads the system's replies as text, like a person: it answers the question asked (请问…),
picks a listed option that meets its goal (by ordinal, code, price, brand, district or "the cheapest"), checks a
read-back (item, nights, rooms, tickets) before confirming, changes its mind about the date once in a while,
wanders off-topic with turns that name cities, dates and numbers, confirms and asks for the next part in one
sentence, and asks about the bookings it made. Its fixed phrases (confirmations, refusals, thanks, greetings,
out-of-scope turns, booking questions, choice and change templates) come from the **dev half** of the
utterance bank (``ragdial.task.phrases``), written by another hand than the parser; requests are composed here.
It is still written by the same hand as the parser: it checks that the parts fit, not how real users talk.

Success is judged from the database's bookings, not from the system's words. Booking-integrity errors: a booking
the user did not confirm, or a confirmed booking that is missing (not made, not in the database, or left out of
the answer to a question about the bookings).
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypedDict, cast

from ragdial.jsontypes import JSONDict, JSONValue
from ragdial.task.db import Gazetteer, TravelDB
from ragdial.task.goals import Goal, GoalConstraints, SubGoal, date_expression, satisfies
from ragdial.task.manager import TaskBranch
from ragdial.task.phrases import Phrases

MAX_TURNS = 30
GUIDE_CUES = ("我可以帮您", "I can help")
# a calendar question answered (今天是12月1日，星期二。) instead of refused: guidance too when the reply returns to
# the task
ANSWERED = re.compile(r"\d+月\d+日，?星期|是星期|Today is ")
RETURN_CUES = ("请问", "确认预订吗", "订哪一个", "还需要", "要按这个来吗", "需要帮您查吗")
Noise = Callable[[str, random.Random], str]
_PHRASES: Phrases | None = None


def default_phrases() -> Phrases:
    global _PHRASES
    if _PHRASES is None:
        _PHRASES = Phrases.load()
    return _PHRASES


class Channel(Protocol):
    """How the simulator talks to a system: a fresh session per dialog, one reply per message."""

    def reset(self) -> None: ...

    def send(self, text: str) -> str: ...


class InProcessChannel:
    """Talks to a ``TaskBranch`` directly, keeping the JSON state as a session store would."""

    def __init__(self, branch: TaskBranch) -> None:
        self.branch = branch
        self.state: JSONDict | None = None

    def reset(self) -> None:
        self.state = None

    def send(self, text: str) -> str:
        turn = self.branch.respond(self.state, text)
        self.state = turn.state
        return turn.reply


def chinese_number(value: int) -> str:
    """Chinese numeral for 1..9999 (1200 -> 一千二百, 5 -> 五), as a speaker would say a price or star rating."""
    digits = "零一二三四五六七八九"
    if value < 10:
        return digits[value]
    out, zero = "", False
    for unit_value, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        d = value // unit_value % 10
        if d:
            if zero and out:
                out += "零"
            out += ("" if (unit == "十" and d == 1 and not out) else digits[d]) + unit
            zero = False
        elif out:
            zero = True
    return out


OPTION_RE = re.compile(
    r"^\s*(\d+)\.\s+(\S+)\s+(\d+月\d+日)\s+(\d\d:\d\d)(\S+?)→(?:次日|第\d天)?(\d\d:\d\d)(\S+)\s+(\S+?)\s+(\d+)元\s*$"
)
HOTEL_RE = re.compile(r"^\s*(\d+)\.\s+(\S+)\s+(\d)星\s+(\S+)\s+每晚(\d+)元\s*$")


class OptionItem(TypedDict, total=False):
    """An option line of a reply (or a booking summary) as the user reads it: the fields ``satisfies`` checks."""

    index: int
    code: str
    day: str
    dep_place: str
    arr_place: str
    dep_time: str
    seat_class: str
    berth: str
    price: int
    name: str
    stars: int
    district: str


def read_item(line: str) -> OptionItem | None:
    """An option line (or a booking summary) of a reply as a dict with the fields ``satisfies`` checks."""
    text = line if re.match(r"^\s*\d+\.", line) else "0. " + line.strip()
    text = text.split("，")[0]
    m = OPTION_RE.match(text)
    if m:
        seat = m.group(8)
        berth = seat[-2:] if seat.endswith("铺") else ""
        return {
            "index": int(m.group(1)),
            "code": m.group(2),
            "day": m.group(3),
            "dep_place": m.group(5),
            "arr_place": m.group(7),
            "dep_time": m.group(4),
            "seat_class": seat[: len(seat) - len(berth)],
            "berth": berth,
            "price": int(m.group(9)),
        }
    m = HOTEL_RE.match(text)
    if m:
        return {
            "index": int(m.group(1)),
            "name": m.group(2),
            "stars": int(m.group(3)),
            "district": m.group(4),
            "price": int(m.group(5)),
        }
    return None


@dataclass
class DialogResult:
    """One simulated dialog: its goal, log, outcome and metrics."""

    goal: Goal
    log: list[dict[str, str]] = field(default_factory=list)
    bookings: list[dict[str, int]] = field(default_factory=list)  # {"subgoal": i, "number": n}
    success: bool = False
    turns: int = MAX_TURNS
    guidance: int | None = None  # 0/1 where the user went off-topic, else None
    integrity_errors: list[str] = field(default_factory=list)
    relaxed: list[str] = field(default_factory=list)  # constraints the user gave up for an alternative offered

    def to_dict(self) -> JSONDict:
        return {
            "goal": self.goal.to_dict(),
            "goal_text": self.goal.describe(),
            "success": self.success,
            "turns": self.turns,
            "guidance": self.guidance,
            "integrity_errors": self.integrity_errors,
            "relaxed": cast(JSONValue, self.relaxed),
            "bookings": self.bookings,
            "log": self.log,
        }


class UserSimulator:
    """The user side of one dialog, driven by an agenda built from its goal."""

    def __init__(
        self,
        goal: Goal,
        today: dt.date,
        rng: random.Random,
        gazetteer: Gazetteer | None = None,
        phrases: Phrases | None = None,
    ) -> None:
        self.goal, self.today, self.rng = goal, today, rng
        self.gazetteer = gazetteer
        self.phrases = phrases or default_phrases()
        self.index = 0  # current subgoal
        self.options: list[OptionItem] = []
        self.pending_oos = goal.out_of_scope
        self.pending_ask = goal.ask_booking
        self.pending_change = goal.change_date
        self.pending_correction: str | None = None
        self.oos_turn = False
        self.guided: bool | None = None
        self.restated = 0
        self.bookings: list[tuple[int, int]] = []  # (subgoal index, booking number)
        self.last_kind = "request"  # what the user's last turn did
        self.errors: list[str] = []
        self.confirms_without_booking = 0
        self.compound_next = False
        self.change_sub: SubGoal | None = None  # the last booking as changed, while the change is under way
        self.change_said = False
        self.change_done = False
        self.change_made = 0  # bookings the change made (the new one of a 改签)
        self.change_refused = False  # a new booking offered instead of the change was refused: ask again
        self.alternatives_refused = 0  # alternatives offered (不限X的话…要按这个来吗) and turned down so far
        self.relaxed: list[str] = []  # constraints given up for an alternative, as people do after one refusal

    @property
    def sub(self) -> SubGoal | None:
        if self.index >= len(self.goal.subgoals):
            return self.change_sub if self.change_said and not self.change_done else None
        return self.goal.subgoals[self.index]

    def _change_request(self) -> str:
        """The change of the last booking, asked in one of several plain ways (no order number, no 改签)."""
        change, rng = self.goal.change or {}, self.rng
        last = self.goal.subgoals[-1]
        c: GoalConstraints = {**last.constraints}
        thing = {"flight": "机票", "train": "火车票", "hotel": "酒店"}[last.domain]
        kind = str(change.get("kind"))
        if kind == "change_date":
            c["date"] = (dt.date.fromisoformat(c["date"]) + dt.timedelta(days=1)).isoformat()  # (the day booked)
            words = date_expression(dt.date.fromisoformat(c["date"]), self.today, rng)
            forms = [f"{thing}能改到{words}吗", f"帮我把{thing}改成{words}的", f"{thing}日期改一下，改到{words}"]
            # and the dev half's date changes (改到{date} / 改成{date}吧) with the booking named: the only change
            # phrasing that half has (it has no lines that change or cancel a booking)
            dev = [t.replace("{date}", words) for t in self.phrases.by_kind.get("modify_date", [])]
            forms += [t if t.startswith(thing) else thing + t for t in dev if not t.startswith(("入住", "酒店"))]
        elif kind == "upgrade":
            c["seat_class"] = "商务舱"
            forms = ["帮我升成商务舱吧，还是这班", "能升舱吗？换成商务舱", "同一班换成商务舱"]
        elif kind == "fewer_nights":
            c["nights"] = c.get("nights", 1) - 1
            forms = ["少住一晚吧", "提前一天退房", f"改成只住{chinese_number(c['nights'])}晚"]
        elif kind == "add_ticket":
            c["passengers"] = 2
            same = "同一班" if last.domain == "flight" else "同一趟"
            forms = [f"{same}再加一张", "再帮我多订一张，一样的", f"还要一张票，{same}"]
        else:
            forms = [f"把刚才订的{thing}退了吧", f"{thing}不要了，帮我取消", f"算了，{thing}帮我退掉"]
        self.change_sub = SubGoal(last.domain, c)
        self.change_said = True
        return rng.choice(forms)

    # ---------------------------------------------------------------- phrasing
    def _date_words(self, sub: SubGoal, iso: str | None = None) -> str:
        if iso is None and sub.date_expr:
            return sub.date_expr
        date = dt.date.fromisoformat(iso or sub.constraints["date"])
        return date_expression(date, self.today, self.rng)

    def _price(self, value: int, per_night: bool = False) -> str:
        said = str(value) if self.rng.random() < 0.6 else chinese_number(value)
        unit = self.rng.choice(("元", "块", ""))
        forms = [f"{said}{unit}以内", f"预算{said}{unit}", f"不超过{said}{unit}"]
        if per_night:
            forms = [f"每晚{said}{unit}以内", f"一晚不超过{said}{unit}", f"预算{said}{unit}一晚"]
        return self.rng.choice(forms)

    def _route(self, domain: str, dep: str, arr: str) -> str:
        forms = [f"从{dep}到{arr}", f"{dep}到{arr}", f"{dep}去{arr}", f"{dep}出发去{arr}"]
        if domain == "flight":
            forms.append(f"{dep}飞{arr}")
        return self.rng.choice(forms)

    def _request(self, sub: SubGoal, full: bool = False, first: bool = True, after_booking: bool = False) -> str:
        c, rng = sub.constraints, self.rng
        keep = (lambda: True) if full else (lambda: rng.random() < 0.8)
        if first:
            opener = rng.choice(("帮我订", "我想订", "我要订", "帮我查一下", "我想买", "请帮我订", "", "嗯 那个 "))
        elif after_booking:
            opener = rng.choice(("再帮我订", "还要订", "再帮我找", "另外订"))
        else:
            opener = rng.choice(("我要", "帮我看看", "我想要", ""))
        date_iso = self.pending_change if (first and self.index == 0 and self.pending_change) else None
        if sub.domain == "hotel":
            parts = [opener]
            if (sub.date_expr or date_iso) and (keep() or date_iso):
                parts.append(self._date_words(sub, date_iso))
            where = c["city"] + (c.get("district", "") if rng.random() < 0.5 else "")
            parts.append(rng.choice((f"{where}的酒店", f"一家{where}的酒店", f"{where}的宾馆", f"{where}住的地方")))
            if c.get("district") and c["district"] not in where:
                parts.append(
                    rng.choice((f"，{c['district']}区的", f"，最好在{c['district']}", f" {c['district']}附近"))
                )
            nights = c.get("nights", 1)
            if nights > 1 or rng.random() < 0.3:
                parts.append(rng.choice((f"，住{chinese_number(nights)}晚", f" {nights}晚", f"，住{nights}个晚上")))
            if c.get("rooms", 1) > 1:
                parts.append(rng.choice(("，要两间", "，订两间房", " 两间")))
            if c.get("stars"):
                stars = str(c["stars"]) if rng.random() < 0.5 else chinese_number(c["stars"])
                parts.append(rng.choice((f"，要{stars}星级的", f"，{stars}星的", f"，最好是{stars}星级")))
            if c.get("min_stars"):
                stars = str(c["min_stars"]) if rng.random() < 0.5 else chinese_number(c["min_stars"])
                parts.append(rng.choice((f"，{stars}星以上", f"，{stars}星及以上")))
            if c.get("max_price"):
                parts.append("，" + self._price(c["max_price"], per_night=True))
            return "".join(parts)
        dep = c["dep_city"]
        if self.goal.correction and self.index == 0 and first and not full and not self.pending_correction:
            wrong = rng.choice(
                [x for x in ("北京", "上海", "广州", "成都", "西安", "武汉") if x not in (c["dep_city"], c["arr_city"])]
            )
            self.pending_correction = rng.choice(
                (f"不对，是从{dep}出发", f"不是{wrong}，是{dep}", f"说错了，应该是从{dep}出发")
            )
            dep = wrong
        parts = [opener]
        if full or keep() or date_iso:
            parts.append(self._date_words(sub, date_iso))
        period = c.get("period")
        said_period = rng.choice(("早班", "一大早", "早上")) if period == "早上" else (period or "")
        parts.append(said_period)
        parts.append(
            self._route(sub.domain, dep, c["arr_city"])
            if (full or keep() or self.pending_correction)
            else f"去{c['arr_city']}"
        )
        if sub.domain == "flight":
            name = "机" if said_period == "早班" else rng.choice(("机票", "航班", "的机票"))
        else:
            name = "车" if said_period == "早班" else rng.choice(("火车票", "火车票", "车票", "的火车"))
        seat = c.get("seat_class", "")
        if seat and rng.random() < 0.5:
            parts.append(f"的{name}，要{seat}")
        else:
            parts.append(f"的{seat}{name}" if not name.startswith("的") else f"{name}，{seat}" if seat else name)
        if c.get("berths"):
            if len(c["berths"]) > 1:
                parts.append("，" + rng.choice(("或者", "或", "和")).join(c["berths"]) + "都行")
            else:
                parts.append(rng.choice(("，要", "，")) + c["berths"][0])
        if c.get("passengers", 1) > 1:
            parts.append(rng.choice(("，两个人", "，两张", "，要两张票")))
        if c.get("max_price"):
            parts.append("，" + self._price(c["max_price"]))
        return "".join(parts)

    def _answer(self, reply: str) -> str | None:
        sub, rng = self.sub, self.rng
        assert sub is not None
        c = sub.constraints
        if "飞机还是坐火车" in reply:
            return "坐飞机" if sub.domain == "flight" else rng.choice(("坐火车", "火车"))
        asked_hotel = "住在哪个城市" in reply or "哪天入住" in reply
        if (("从哪个城市出发" in reply or "要去哪个城市" in reply) and sub.domain == "hotel") or (
            asked_hotel and sub.domain != "hotel"
        ):
            return None  # the system misheard the domain: restate the request
        said = []  # each thing asked is answered (a place and the day asked together: both)
        if "从哪个城市出发" in reply:
            said.append(rng.choice((f"从{c['dep_city']}出发", c["dep_city"], f"{c['dep_city']}走")))
        elif "要去哪个城市" in reply:
            said.append(rng.choice((f"去{c['arr_city']}", f"到{c['arr_city']}", c["arr_city"])))
        elif "住在哪个城市" in reply:
            said.append(rng.choice((c["city"], f"住{c['city']}")))
        if "哪天" in reply:
            words = self._date_words(sub, c["date"])
            said.append(rng.choice((words, f"{words}的", f"{words}出发" if sub.domain != "hotel" else f"{words}入住")))
        if said:
            return "，".join(said)
        if "机票、火车票还是酒店" in reply or "想改哪个条件" in reply:
            return self._request(sub, full=True, first=False)
        return None

    def _relax(self, reply: str, sub: SubGoal) -> bool:
        """Give up the constraints the alternative offered drops (when the goal has any of them)."""
        keys = [k for k in _relaxed_keys(reply) if k in sub.constraints]
        constraints = cast(dict[str, object], sub.constraints)
        for key in keys:
            constraints.pop(key, None)
        self.relaxed += keys
        return bool(keys)

    def _fits(self, item: OptionItem, sub: SubGoal) -> bool:
        """Whether an option or booking summary meets the subgoal, as a person reads it."""
        seen: dict[str, object] = dict(item)
        gaz = self.gazetteer
        if gaz is not None and "dep_place" in item:
            seen["dep_city"] = gaz.places.get(item["dep_place"], ("?",))[0]
            seen["arr_city"] = gaz.places.get(item["arr_place"], ("?",))[0]
        day_said = re.match(r"(\d+)月(\d+)日", item.get("day", ""))
        if day_said:
            month, day = day_said.groups()
            want = sub.constraints.get("date", "")
            seen["date"] = f"{want[:4]}-{int(month):02d}-{int(day):02d}"
        if "name" in item and sub.constraints.get("city"):
            seen["city"] = sub.constraints["city"] if f"({sub.constraints['city']}" in item["name"] else "?"
        return satisfies(seen, sub.constraints)

    def _select(self, item: OptionItem) -> str:
        """Name one listed option the way the bank's dev lines do (ordinal, code, price, brand, district)."""
        rng, phrases = self.rng, self.phrases
        ways = ["ordinal"]
        unique = lambda key: sum(o.get(key) == item.get(key) for o in self.options) == 1  # noqa: E731
        if item.get("code") and unique("code"):
            ways += ["code", "code"]
        if unique("price"):
            ways.append("price")
        if item.get("name") and unique("district"):
            ways.append("district")
        if item.get("name"):
            brand = item["name"].split("(")[0]
            if sum(o.get("name", "").startswith(brand) for o in self.options) == 1:
                ways.append("brand")
        if item is self.options[0] and all(item["price"] < o["price"] for o in self.options[1:]):
            ways.append("cheapest")
        way = rng.choice(ways)
        if way == "ordinal":
            n = item["index"]
            said = str(n) if rng.random() < 0.4 else chinese_number(n)
            template = phrases.pick("select_ordinal", rng)
            if "家" in template and not item.get("name"):
                template = "第{n}个"
            return template.replace("{n}", said)
        if way == "code":
            code = item["code"] if rng.random() < 0.7 else item["code"].lower()
            return phrases.pick("select_code", rng).replace("{code}", code)
        if way == "price":
            template = phrases.pick("select_price", rng)
            if "趟" in template and item.get("name"):
                template = "{price}的那个"
            return template.replace("{price}", str(item["price"]))
        if way == "district":
            return phrases.pick("select_district", rng).replace("{district}", item["district"])
        if way == "brand":
            brand = item["name"].split("(")[0].replace("酒店", "").replace("快捷", "")
            return phrases.pick("select_brand", rng).replace("{brand}", brand)
        return phrases.pick("select_cheapest", rng)

    def _readback_mismatch(self, reply: str, sub: SubGoal) -> str | None:
        """A change to ask for when the read-back has the wrong nights, rooms or tickets ("是两间吧？")."""
        c = sub.constraints
        if sub.domain == "hotel":
            m = re.search(r"住(\d+)晚", reply)
            if m and int(m.group(1)) != c.get("nights", 1):
                return self.rng.choice((f"住{chinese_number(c.get('nights', 1))}晚", f"是住{c.get('nights', 1)}晚吧？"))
            m = re.search(r"，(\d+)间", reply)
            if m and int(m.group(1)) != c.get("rooms", 1):
                return self.rng.choice(("是两间吧？", "要两间")) if c.get("rooms", 1) == 2 else "一间就够"
            return None
        m = re.search(r"，(\d+)张", reply)
        if m and int(m.group(1)) != c.get("passengers", 1):
            return "两张" if c.get("passengers", 1) == 2 else "就一张"
        return None

    # ---------------------------------------------------------------- the agenda
    def start(self) -> str:
        sub = self.sub
        assert sub is not None, "a goal has at least one part"
        if self.rng.random() < 0.15:
            return self.phrases.pick("greeting", self.rng) + "，" + self._request(sub, first=True)
        return self._request(sub, first=True)

    def _say(self, kind: str, text: str) -> str:
        self.last_kind = kind
        return text

    def react(self, reply: str) -> str | None:
        """The next user utterance given the system's reply; None ends the dialog."""
        numbers = [int(n) for n in re.findall(r"预订成功，订单号(\d+)", reply)]
        if numbers and self.last_kind != "confirm":
            self.errors.append("booking made without confirmation")
        if self.last_kind == "confirm" and not numbers and "已经订满" not in reply and "已取消订单" not in reply:
            if not any(asked in reply for asked in ("确认预订吗", "确认改签吗", "确认取消吗", "没有预订")):
                self.errors.append("confirmation dropped: neither booked nor asked again")
            else:
                self.confirms_without_booking += 1
        answered = "订单号" in reply or "还没有成功" in reply
        if self.last_kind == "ask_booking" and answered:
            made = [n for _i, n in self.bookings]
            if made and not all(f"订单号{n}" in reply for n in made):
                self.errors.append("a confirmed booking missing from the answer about bookings")
        if self.oos_turn:
            guide = any(cue in reply for cue in GUIDE_CUES) or bool(ANSWERED.search(reply))
            self.guided = guide and any(cue in reply for cue in RETURN_CUES)
            self.oos_turn = False
        if self.change_said and not self.change_done:
            if numbers or "已取消订单" in reply:
                self.change_done = True
                if numbers and self.bookings:
                    self.bookings[-1] = (self.bookings[-1][0], numbers[-1])
                    self.change_made += len(numbers)
                    if self.change_sub is not None:
                        self.goal.subgoals[-1].constraints = self.change_sub.constraints
                return None
            if "确认取消吗" in reply:
                return self._say("confirm", self.phrases.pick("confirm", self.rng))
            numbers = []
        compound = False
        arrives = re.search(r"预订成功，订单号\d+：\S+ (\d+)月(\d+)日 \S+?→(次日|第(\d)天)?", reply)
        for number in numbers:
            sub = self.goal.subgoals[self.index]
            following = self.goal.subgoals[self.index + 1] if self.index + 1 < len(self.goal.subgoals) else None
            if (
                arrives
                and sub.domain != "hotel"
                and following
                and following.domain == "hotel"
                and not following.date_expr
            ):
                # the hotel is for the night one arrives (after an overnight train, the next day)
                days = 0 if not arrives.group(3) else (1 if arrives.group(3) == "次日" else int(arrives.group(4)) - 1)
                following.constraints["date"] = (
                    dt.date.fromisoformat(sub.constraints["date"]) + dt.timedelta(days=days)
                ).isoformat()
            self.bookings.append((self.index, number))
            self.index += 1
            self.options, self.restated = [], 0
            if self.compound_next:
                self.compound_next = False
                compound = True  # the next request went with the confirmation: read on
        if self.pending_correction and self.last_kind == "request":
            text, self.pending_correction = self.pending_correction, None
            return self._say("modify", text)
        if self.pending_oos and self.sub is not None and self.rng.random() < 0.5:
            self.pending_oos = False
            self.oos_turn = True
            return self._say("oos", self.phrases.pick("oos", self.rng))
        if self.pending_ask and self.bookings and self.rng.random() < 0.6:
            self.pending_ask = False
            domain = self.goal.subgoals[self.bookings[-1][0]].domain
            return self._say("ask_booking", self.phrases.ask_booking(domain, self.rng))
        if self.sub is None:
            if self.pending_oos:  # still owes its aside: say it now, then close
                self.pending_oos = False
                self.oos_turn = True
                return self._say("oos", self.phrases.pick("oos", self.rng))
            if self.goal.change and not self.change_said:
                return self._say("change", self._change_request())
            return None
        sub = self.sub
        if numbers and not compound:
            return self._say("request", self._request(sub, first=False, after_booking=True))
        listed = [item for item in map(read_item, reply.splitlines()) if item is not None and item["index"] > 0]
        if listed:
            self.options = listed
        changing = self.change_said and not self.change_done
        if changing and "确认预订吗" in reply and "确认改签吗" not in reply:
            # a new booking read back while the user wants the one made changed: no (and the change again next)
            self.change_refused = True
            return self._say("deny", self.phrases.pick("deny", self.rng))
        if changing and self.change_refused:
            self.change_refused = False
            return self._say("change", self._change_request())
        if "确认预订吗" in reply or "确认改签吗" in reply:
            summary = re.search(r"(?:为您预订|，改为)：(.+?)。请问确认(?:预订|改签)吗", reply)
            item = read_item(summary.group(1)) if summary else None
            said_date = re.search(r"(\d+)月(\d+)日(?:入住| )", summary.group(1)) if summary else None
            if said_date and item is not None:
                want = sub.constraints["date"]
                if f"{int(want[5:7])}月{int(want[8:10])}日" != f"{said_date.group(1)}月{said_date.group(2)}日":
                    self.pending_change = None
                    words = self._date_words(sub, want)
                    return self._say("modify", self.phrases.pick("modify_date", self.rng).replace("{date}", words))
            if item is not None and self._fits(item, sub):
                change = self._readback_mismatch(reply.split("，改为：")[-1], sub)  # (not the booking replaced)
                if change:
                    return self._say("modify", change)
                confirm = self.phrases.pick("confirm", self.rng)
                following = self.goal.subgoals[self.index + 1] if self.index + 1 < len(self.goal.subgoals) else None
                if self.goal.compound and following is not None and not following.expect_fail:
                    self.goal.compound = False
                    self.compound_next = True
                    self.last_kind = "confirm"
                    return confirm + "，然后" + self._request(following, first=False, after_booking=True)
                return self._say("confirm", confirm)
            return self._say("deny", self.phrases.pick("deny", self.rng) + "，" + self._request(sub, True, False))
        failed = any(
            cue in reply
            for cue in ("没有找到", "不能满足", "抱歉，没有", "查过了", "没有同时满足", "已经售完", "已经订满", "只剩")
        )
        if failed and sub.expect_fail:
            self.index += 1
            self.options = []
            nxt = self.sub
            assert nxt is not None
            if "需要帮您查吗" in reply and ("火车" in reply) == (nxt.domain == "train"):
                return self._say("confirm_suggestion", self.rng.choice(("好的", "可以", "好，那就坐火车吧")))
            word = "火车票" if nxt.domain == "train" else "机票"
            return self._say("modify", self.rng.choice((f"那帮我看看{word}吧", f"那{word}呢", f"那就订{word}吧")))
        if self.pending_change and listed and self.index == 0:
            iso, self.pending_change = sub.constraints["date"], None
            return self._say(
                "modify", self.phrases.pick("modify_date", self.rng).replace("{date}", self._date_words(sub, iso))
            )
        if changing and any(cue in reply for cue in ("机票、火车票还是酒店", "想改哪个条件", "要改什么", "帮不上忙")):
            self.restated += 1  # the change not understood: asked again (never a new booking instead)
            return None if self.restated > 4 else self._say("change", self._change_request())
        answer = self._answer(reply)
        if answer:
            return self._say("inform", answer)
        if self.options and ("订哪一个" in reply or "可选的有" in reply or "Which one" in reply):
            for item in self.options:
                if self._fits(item, sub):
                    return self._say("select", self._select(item))
        if failed and "要按这个来吗" in reply and not changing:
            # an alternative that does not fit the goal: refused once (restated), then taken as people do
            if self.alternatives_refused >= 1 and self._relax(reply, sub):
                self.alternatives_refused = 0
                taken = self.rng.choice(("好吧，那就按这个来", "行吧，就这样吧", "可以，按这个来"))
                return self._say("confirm_suggestion", taken)
            self.alternatives_refused += 1
        self.restated += 1
        if self.restated > 4:
            return None
        if changing:
            return self._say("change", self._change_request())
        return self._say("request", self._request(sub, full=True, first=False))


RELAXED_KEYS = {
    **{"出发时段": ("period", "time_from", "time_to"), "出发时间": ("period", "time_from", "time_to")},
    **{"座位等级": ("seat_class", "berths"), "铺位": ("berths",), "预算": ("max_price",), "区域": ("district",)},
    **{"星级": ("stars", "min_stars"), "连住晚数": ("nights",), "房间数": ("rooms",), "票数": ("passengers",)},
}


def _relaxed_keys(reply: str) -> list[str]:
    """The goal's constraints an alternative offered drops (不限出发时段、预算的话有可订的 → period, max_price)."""
    m = re.search(r"不限(.+?)的话", reply)
    if m is None:
        return []
    return [key for name in re.split(r"[、和]", m.group(1)) for key in RELAXED_KEYS.get(name, ())]


def run_dialog(
    goal: Goal,
    channel: Channel,
    db: TravelDB,
    today: dt.date,
    seed: int,
    noise: Noise | None = None,
    phrases: Phrases | None = None,
) -> DialogResult:
    """Simulate one dialog and judge it from the database's bookings."""
    rng = random.Random(seed)
    noise_rng = random.Random(seed + 1_000_003)
    sim = UserSimulator(goal, today, rng, db.gazetteer(), phrases)
    channel.reset()
    result = DialogResult(goal)
    before = _booking_count(db)
    text = sim.start()
    completed_at: int | None = None
    needed = [i for i, s in enumerate(goal.subgoals) if not s.expect_fail]
    for turn in range(1, MAX_TURNS + 1):
        heard = noise(text, noise_rng) if noise else text
        reply = channel.send(heard)
        result.log.append({"user": text, "heard": heard, "system": reply})
        following = sim.react(reply)
        booked_all = {i for i, _ in sim.bookings} >= set(needed)
        if completed_at is None and booked_all and (goal.change is None or sim.change_done):
            completed_at = turn
        if following is None:
            break
        text = following
    result.bookings = [{"subgoal": i, "number": n} for i, n in sim.bookings]
    made = _booking_count(db) - before
    errors = list(sim.errors)
    if made > len(sim.bookings) + sim.change_made:
        errors.append("booking in the database that the user was never told about")
    for _i, number in sim.bookings:
        if db.booking(number) is None:
            errors.append("a booking announced but not in the database")
    result.integrity_errors = errors
    result.relaxed = list(sim.relaxed)
    result.success = completed_at is not None and _verify(goal, sim.bookings, db)
    if goal.change is not None and sim.bookings:
        number = sim.bookings[-1][1]
        if goal.change.get("kind") == "cancel":
            record = db.booking(number)
            result.success = result.success and record is not None and record["status"] == "cancelled"
        else:  # the booking changed, not another one made beside it
            with db.lock:
                old = db.conn.execute("SELECT status FROM bookings WHERE changed_into = ?", (number,)).fetchone()
            result.success = result.success and old is not None and old[0] == "changed"
    result.turns = completed_at if result.success and completed_at is not None else MAX_TURNS
    if goal.out_of_scope and sim.guided is not None:
        result.guidance = int(bool(sim.guided))
    return result


def _booking_count(db: TravelDB) -> int:
    with db.lock:
        return int(db.conn.execute("SELECT COUNT(*) FROM bookings").fetchone()[0])


def _verify(goal: Goal, bookings: list[tuple[int, int]], db: TravelDB) -> bool:
    """Every subgoal the user needs is booked, and each booking meets its subgoal."""
    booked = dict(bookings)
    for index, sub in enumerate(goal.subgoals):
        if sub.expect_fail:
            if index in booked:
                return False
            continue
        record = db.booking(booked[index]) if index in booked else None
        if record is None or record["domain"] != sub.domain:
            return False
        if goal.change is not None and goal.change.get("kind") == "cancel" and index == len(goal.subgoals) - 1:
            continue  # (cancelled afterwards: checked by the caller)
        item = db.get(sub.domain, record["item_id"])
        if item is None or not satisfies({**item, "date": record["date"]}, sub.constraints):
            return False
        if sub.domain == "hotel":
            nights, rooms = sub.constraints.get("nights", 1), sub.constraints.get("rooms", 1)
            if f"住{nights}晚" not in record["summary"] or f"，{rooms}间" not in record["summary"]:
                return False
        elif f"，{sub.constraints.get('passengers', 1)}张" not in record["summary"]:
            return False
    return True


def summarise(results: list[DialogResult]) -> JSONDict:
    """SMP2017 task-2 online metrics (completion ratio, mean turns with unfinished = 30, guidance rate) and
    booking-integrity errors."""
    n = len(results)
    guided = [r.guidance for r in results if r.guidance is not None]
    return {
        "dialogs": n,
        "completion_ratio": sum(r.success for r in results) / n if n else 0.0,
        "mean_turns": sum(r.turns for r in results) / n if n else 0.0,
        "guidance_rate": sum(guided) / len(guided) if guided else None,
        "off_topic_dialogs": len(guided),
        "integrity_errors": sum(len(r.integrity_errors) for r in results),
        "dialogs_with_integrity_errors": sum(bool(r.integrity_errors) for r in results),
        "relaxed_dialogs": sum(bool(r.relaxed) for r in results),
    }
