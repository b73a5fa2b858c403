"""Questions about the calendar (今天几号来着 / 下下周二是几号 / 12月5号是星期几): the one fact of the world the
travel branch knows, answered from its 'today' also as the first turn of a dialog."""

from __future__ import annotations

import datetime as dt
import re

from ragdial.task.replies import date_text
from ragdial.task.slots import WEEKDAY_WORDS, parse_date

DATE_ASKED = re.compile(
    r"(?P<when>[^，,。！!？?\s]{0,10}?)\s*(?:是)?\s*(?:几号|几月几号|几月几日|星期几|周几|礼拜几|什么日子)"
    r"|what('s| is) (the )?date|what day is (it|today)|what (date|day)( of the week)? (is|was|will)|"
    r"which (date|day)( of the week)? is",
    re.I,
)


def asked_day(text: str, today: dt.date) -> tuple[str, dt.date] | None:
    """(the words for the day, the day) a calendar question in ``text`` asks about, or None."""
    m = DATE_ASKED.search(text)
    if m is None or re.search(r"(农历|阴历|lunar)", text, re.I):
        return None  # (the lunar calendar is not this branch's)
    if text.isascii():  # what day is next Friday? / what's the date tomorrow?: the day named anywhere in the question
        iso = parse_date(text, today, english=True)
        day = dt.date.fromisoformat(iso) if iso else today
        return ("today" if day == today and not iso else text, day)
    when = re.sub(r"^(那|请问|问一下|问下|我想问|你知道)", "", (m.group("when") or "").strip())
    if re.fullmatch(r"(今天|今儿|今日)?", when):
        return "今天", today
    iso = parse_date(when, today)
    return (when, dt.date.fromisoformat(iso)) if iso else None


def date_answer(text: str, today: dt.date, lang: str) -> str | None:
    """The answer to a calendar question in ``text`` (今天是12月1日，星期二。), or None when there is none."""
    asked = asked_day(text, today)
    if asked is None:
        return None
    name, day = asked
    if lang != "zh":
        said = day.strftime("%A, %d %B %Y")
        return f"Today is {said}." if day == today else f"That is {said} (today is {today.strftime('%A, %d %B')})."
    if re.search(r"[号日]", name):  # 12月5号是周几: the weekday is what is asked
        return f"{date_text(day.isoformat(), 'zh')}是星期{WEEKDAY_WORDS[day.weekday()]}。"
    return f"{name}是{date_text(day.isoformat(), 'zh')}，星期{WEEKDAY_WORDS[day.weekday()]}。"
