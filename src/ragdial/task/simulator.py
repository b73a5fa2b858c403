"""Agenda-based user simulator (Chinese) and the SMP2017 task-2 online-test metrics.

The simulator reads the system's replies as text, like a person: it answers the question asked (请问…),
picks the first listed option that meets its goal, confirms a booking only when the summary meets its goal,
switches to its fallback when told the database has nothing (the compound goals), may wander off-topic once
(to measure guidance back to the task) and may misspeak a city once and correct it ("不对，是从北京出发").
Success is judged from the bookings in the database, not from what the system says.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ragdial.task.db import Gazetteer, TravelDB
from ragdial.task.goals import Goal, SubGoal, date_expression, satisfies
from ragdial.task.manager import TaskBranch

MAX_TURNS = 30
OFF_TOPIC_UTTERANCES = (
    "你会唱歌吗",
    "给我讲个笑话吧",
    "你是机器人吗",
    "最近有什么好看的电影",
    "帮我查一下股票行情",
    "你叫什么名字",
)
GUIDE_CUES = ("我可以帮您", "I can help")
Noise = Callable[[str, random.Random], str]


class Channel(Protocol):
    """How the simulator talks to a system: a fresh session per dialog, one reply per message."""

    def reset(self) -> None: ...

    def send(self, text: str) -> str: ...


class InProcessChannel:
    """Talks to a ``TaskBranch`` directly, keeping the JSON state as a session store would."""

    def __init__(self, branch: TaskBranch) -> None:
        self.branch = branch
        self.state: dict[str, Any] | None = None

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


def read_item(line: str) -> dict[str, Any] | None:
    """An option line (or a booking summary) of a reply as a dict with the fields ``satisfies`` checks."""
    text = line if re.match(r"^\s*\d+\.", line) else "0. " + line.strip()
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
        return {"index": int(m.group(1)), "name": m.group(2), "stars": int(m.group(3)), "price": int(m.group(5))}
    return None


@dataclass
class DialogResult:
    """One simulated dialog: its goal, log, outcome and metrics."""

    goal: Goal
    log: list[dict[str, str]] = field(default_factory=list)
    bookings: list[dict[str, Any]] = field(default_factory=list)
    success: bool = False
    turns: int = MAX_TURNS
    guidance: int | None = None  # 0/1 where the user went off-topic, else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "goal": self.goal.to_dict(),
            "goal_text": self.goal.describe(),
            "success": self.success,
            "turns": self.turns,
            "guidance": self.guidance,
            "bookings": self.bookings,
            "log": self.log,
        }


class UserSimulator:
    """The user side of one dialog, driven by an agenda built from its goal."""

    def __init__(self, goal: Goal, today, rng: random.Random, gazetteer: Gazetteer | None = None) -> None:
        self.goal, self.today, self.rng = goal, today, rng
        self.gazetteer = gazetteer
        self.index = 0  # current subgoal
        self.options: list[dict[str, Any]] = []
        self.pending_oos = goal.out_of_scope
        self.pending_correction: str | None = None
        self.oos_turn = False
        self.guided: bool | None = None  # whether the system guided an off-topic user back
        self.restated = 0
        self.bookings: list[tuple[int, int]] = []  # (subgoal index, booking number)

    @property
    def sub(self) -> SubGoal | None:
        return self.goal.subgoals[self.index] if self.index < len(self.goal.subgoals) else None

    # ---------------------------------------------------------------- utterances
    def _date_words(self, sub: SubGoal) -> str:
        import datetime as dt

        return sub.date_expr or date_expression(dt.date.fromisoformat(sub.constraints["date"]), self.today, self.rng)

    def _price(self, value: int, per_night: bool = False) -> str:
        amount = str(value) if value >= 10000 or self.rng.random() < 0.7 else chinese_number(value)
        night = "每晚" if per_night and self.rng.random() < 0.6 else ""
        return self.rng.choice(
            (f"{night}{amount}元以内", f"{night}不超过{amount}元", f"预算{amount}块", f"{night}{amount}块以下")
        )

    def _route(self, domain: str, dep: str, arr: str) -> tuple[str, bool]:
        """A departure+destination phrase, and whether it must come before the ticket word."""
        forms = [f"从{dep}到{arr}", f"{dep}到{arr}", f"{dep}去{arr}", f"{dep}出发去{arr}"]
        if domain == "flight":
            forms.append(f"{dep}飞{arr}")
        return self.rng.choice(forms), True

    def _request(self, sub: SubGoal, full: bool = False, first: bool = True, after_booking: bool = False) -> str:
        c, rng = sub.constraints, self.rng
        keep = (lambda: True) if full else (lambda: rng.random() < 0.8)
        if first:
            opener = rng.choice(("帮我订", "我想订", "我要订", "帮我查一下", "我想买", "请帮我订", ""))
        elif after_booking:
            opener = rng.choice(("再帮我订", "还要订", "再帮我找", "另外订"))
        else:
            opener = rng.choice(("我要", "帮我看看", "我想要", ""))
        if sub.domain == "hotel":
            parts = [opener]
            if sub.date_expr and keep():
                parts.append(sub.date_expr)
            parts.append(rng.choice((f"{c['city']}的酒店", f"一家{c['city']}的酒店", f"{c['city']}的宾馆")))
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
        if self.goal.correction and self.index == 0 and first and not full:
            wrong = rng.choice(
                [x for x in ("北京", "上海", "广州", "成都", "西安", "武汉") if x not in (c["dep_city"], c["arr_city"])]
            )
            self.pending_correction = rng.choice(
                (f"不对，是从{dep}出发", f"不是{wrong}，是{dep}", f"说错了，应该是从{dep}出发")
            )
            dep = wrong
        parts = [opener]
        if full or keep():
            parts.append(self._date_words(sub))
        if c.get("period"):
            parts.append(c["period"])
        if full or keep() or self.pending_correction:
            parts.append(self._route(sub.domain, dep, c["arr_city"])[0])
        else:
            parts.append(f"去{c['arr_city']}")
        name = "机票" if sub.domain == "flight" else rng.choice(("火车票", "火车票", "车票"))
        seat = c.get("seat_class", "")
        if seat and rng.random() < 0.5:
            parts.append(f"的{name}，要{seat}")
        else:
            parts.append(f"的{seat}{name}")
        if c.get("berths"):
            if len(c["berths"]) > 1:
                parts.append("，" + rng.choice(("或者", "或", "和")).join(c["berths"]) + "都行")
            else:
                parts.append(rng.choice(("，要", "，")) + c["berths"][0])
        if c.get("max_price"):
            parts.append("，" + self._price(c["max_price"]))
        return "".join(parts)

    def _answer(self, reply: str) -> str | None:
        sub, rng = self.sub, self.rng
        assert sub is not None
        c = sub.constraints
        asked_domain = "hotel" if "住在哪个城市" in reply or "哪天入住" in reply else "trip"
        if (("从哪个城市出发" in reply or "要去哪个城市" in reply) and sub.domain == "hotel") or (
            asked_domain == "hotel" and sub.domain != "hotel"
        ):
            return None  # the system misheard the domain: restate the request
        if "从哪个城市出发" in reply:
            return rng.choice((f"从{c['dep_city']}出发", c["dep_city"], f"{c['dep_city']}"))
        if "要去哪个城市" in reply:
            return rng.choice((f"去{c['arr_city']}", f"到{c['arr_city']}", c["arr_city"]))
        if "住在哪个城市" in reply:
            return rng.choice((c["city"], f"住{c['city']}"))
        if "哪天" in reply:
            words = self._date_words(sub)
            return rng.choice((words, f"{words}的", f"{words}出发" if sub.domain != "hotel" else f"{words}入住"))
        if "机票、火车票还是酒店" in reply:
            return self._request(sub, full=True, first=False)
        return None

    def _fits(self, item: dict[str, Any], sub: SubGoal) -> bool:
        """Whether an option or booking summary meets the subgoal, as a person reads it: the stations' cities,
        the day, the class and berth, the time, the price, the hotel's city and stars."""
        seen = dict(item)
        gaz = self.gazetteer
        if gaz is not None and "dep_place" in item:
            seen["dep_city"] = gaz.places.get(item["dep_place"], ("?",))[0]
            seen["arr_city"] = gaz.places.get(item["arr_place"], ("?",))[0]
        day_match = re.match(r"(\d+)月(\d+)日", item["day"]) if "day" in item else None
        if day_match is not None:
            month, day = day_match.groups()
            want = sub.constraints.get("date", "")
            seen["date"] = f"{want[:4]}-{int(month):02d}-{int(day):02d}"
        if "name" in item and sub.constraints.get("city"):
            seen["city"] = sub.constraints["city"] if f"({sub.constraints['city']}" in item["name"] else "?"
        return satisfies(seen, sub.constraints)

    # ---------------------------------------------------------------- the agenda
    def start(self) -> str:
        if self.sub is None:
            raise ValueError("the goal has no subgoals")
        return self._request(self.sub, first=True)

    def react(self, reply: str) -> str | None:
        """The next user utterance given the system's reply; None ends the dialog."""
        if self.oos_turn:
            self.guided = any(cue in reply for cue in GUIDE_CUES)
            self.oos_turn = False
        if self.pending_correction:
            text, self.pending_correction = self.pending_correction, None
            return text
        if self.pending_oos and self.sub is not None:
            self.pending_oos = False
            self.oos_turn = True
            return self.rng.choice(OFF_TOPIC_UTTERANCES)
        if self.sub is None:
            return None
        m = re.search(r"预订成功，订单号(\d+)", reply)
        if m:
            self.bookings.append((self.index, int(m.group(1))))
            self.index += 1
            self.options, self.restated = [], 0
            if self.sub is None:
                return None
            return self._request(self.sub, first=False, after_booking=True)
        sub = self.sub
        lines = reply.splitlines()
        listed = [item for item in map(read_item, lines) if item is not None and item["index"] > 0]
        if listed:
            self.options = listed
        if "确认预订吗" in reply:
            summary = re.search(r"为您预订：(.+?)。请问确认预订吗", reply)
            item = read_item(summary.group(1)) if summary else None
            if item is not None and self._fits(item, sub):
                return self.rng.choice(("确认", "好的", "是的", "可以"))
            return "不对，" + self._request(sub, full=True, first=False)
        if "没有找到" in reply and sub.expect_fail:
            self.index += 1
            self.options = []
            nxt = self.sub
            assert nxt is not None
            word = "火车票" if nxt.domain == "train" else "机票"
            return self.rng.choice((f"那帮我看看{word}吧", f"那{word}呢", f"那就订{word}吧"))
        answer = self._answer(reply)
        if answer:
            return answer
        if self.options and ("订哪一个" in reply or "可选的有" in reply or "Which one" in reply):
            for item in self.options:
                if self._fits(item, sub):
                    return self.rng.choice(
                        (f"第{item['index']}个", f"就订第{item['index']}个吧", f"要第{item['index']}个")
                    )
        self.restated += 1
        if self.restated > 4:
            return None
        return self._request(sub, full=True, first=False)


def run_dialog(
    goal: Goal, channel: Channel, db: TravelDB, today, seed: int, noise: Noise | None = None
) -> DialogResult:
    """Simulate one dialog and judge it from the database's bookings."""
    rng = random.Random(seed)
    noise_rng = random.Random(seed + 1_000_003)
    sim = UserSimulator(goal, today, rng, db.gazetteer())
    sim.guided = None
    channel.reset()
    result = DialogResult(goal)
    text = sim.start()
    completed_at: int | None = None
    needed = [i for i, s in enumerate(goal.subgoals) if not s.expect_fail]
    for turn in range(1, MAX_TURNS + 1):
        heard = noise(text, noise_rng) if noise else text
        reply = channel.send(heard)
        result.log.append({"user": text, "heard": heard, "system": reply})
        following = sim.react(reply)
        if completed_at is None and {i for i, _ in sim.bookings} >= set(needed):
            completed_at = turn
        if following is None:
            break
        text = following
    result.bookings = [{"subgoal": i, "number": n} for i, n in sim.bookings]
    result.success = completed_at is not None and _verify(goal, sim.bookings, db)
    result.turns = completed_at if result.success and completed_at is not None else MAX_TURNS
    if goal.out_of_scope:
        result.guidance = int(bool(sim.guided))
    return result


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
        item = db.get(sub.domain, record["item_id"])
        if item is None or not satisfies({**item, "date": record["date"]}, sub.constraints):
            return False
    return True


def summarise(results: list[DialogResult]) -> dict[str, Any]:
    """SMP2017 task-2 online metrics: completion ratio, mean turns (unfinished = 30), guidance rate."""
    n = len(results)
    guided = [r.guidance for r in results if r.guidance is not None]
    return {
        "dialogs": n,
        "completion_ratio": sum(r.success for r in results) / n if n else 0.0,
        "mean_turns": sum(r.turns for r in results) / n if n else 0.0,
        "guidance_rate": sum(guided) / len(guided) if guided else None,
        "off_topic_dialogs": len(guided),
    }
