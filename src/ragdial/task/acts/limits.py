"""Limits as data: a budget for the whole order (四个人一共不超过三千 → ``max_total``), a price range (三四百一晚 /
三百到五百之间 → ``min_price`` + ``max_price``), a longest ride (坐车别超过五个小时 → ``max_duration`` in minutes), and
an arrival deadline said in English (must arrive by 8:30 → ``arr_by``). Each finder returns its slots and the text
with what it read blanked out, so no other finder reads the same words again (三四百一晚 is no 410 nights)."""

from __future__ import annotations

import re

from ragdial.jsontypes import JSONDict
from ragdial.task.acts.finders import CLOCK, PERIOD_SAID, _clock_of
from ragdial.task.slots import NUM, cn_number

EN_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
EN_NUMBERS |= {"ten": 10, "eleven": 11, "twelve": 12}
MONEY = r"(?:元|块钱|块|rmb|yuan)?"
NOT_MONEY = r"(?!\s*(?:个|人|位|张|间|晚|天|夜|号|日|点|星|小时|钟|分|岁|公里|站|月))"
# a budget for everything ordered: 一共不超过三千 / 总共三千以内 / 加起来三千以内 / 总价别超过3000
TOTAL_CUE = r"(?:一共|总共|加起来|加一块|总价|合计|总计|全部|总预算|一起|总的)"
TOTAL = re.compile(
    rf"{TOTAL_CUE}\s*(?:的?预算|的?价钱|的?钱)?\s*(?:不超过|不要超过|别超过|不能超过|最多|控制在|在)?\s*(?:是|就)?\s*"
    rf"(?P<n>(?:{NUM}))\s*{MONEY}{NOT_MONEY}\s*(?:以内|之内|内|以下)?"
)
TOTAL_EN = re.compile(
    r"(?:(?:total|in total|altogether|all together|overall|for (?:all of us|everyone|the (?:two|three|four|five) of us)"
    r"|for everything)[^\d,.;]{0,30}?[¥$]?\s*(?P<a>\d{3,6})|[¥$]?(?P<b>\d{3,6})\s*(?:yuan|rmb)?\s*"
    r"(?:in total|total|altogether|all together|overall|for all of us|for everyone|for everything))",
    re.I,
)
# a price range: 三四百 (300-400) / 三百到五百之间 / 300-500 / 300到400块一晚
PER = r"(?:\s*(?:一|每)\s*(?:晚|间|夜|天))?"  # 三四百一晚: per night, no count of nights
NEIGHBOURS = re.compile(
    rf"(?P<a>[一二两三四五六七八九])(?P<b>[二三四五六七八九])(?P<u>百|千)(?:块钱|块|元|来块)?(?!\s*[个人位张间晚天号]){PER}"
)
RANGE = re.compile(
    rf"(?P<a>(?:{NUM}))\s*{MONEY}\s*(?:到|至|-|~|～|—)\s*(?P<b>(?:{NUM}))\s*{MONEY}{NOT_MONEY}\s*(?:之间|以内|的|左右)?{PER}"
)
RANGE_EN = re.compile(
    r"(?:between\s+)?[¥$]?(?P<a>\d{2,5})\s*(?:-|to|and)\s*[¥$]?(?P<b>\d{2,5})\s*(?:yuan|rmb)?(?!\s*(?:am|pm|:|hours?|nights?|rooms?|people|tickets?))",
    re.I,
)
# a longest ride: 坐车别超过五个小时 / 五个钟头以内 / 飞行时间不超过三小时
DURATION = re.compile(
    rf"(?:(?:别|不要|不能|不|最好别|最多|不想)\s*(?:超过|超出|多于|坐)?\s*(?P<a>(?:{NUM}))\s*(?:个)?\s*(?P<ha>半)?\s*(?:小时|钟头|个钟)"
    rf"(?P<hb>半)?|(?P<b>(?:{NUM}))\s*(?:个)?\s*(?P<hc>半)?\s*(?:小时|钟头|个钟)(?P<hd>半)?\s*(?:以内|之内|内|以下|左右以内))"
)
HOURS_EN = r"\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
DURATION_EN = re.compile(
    r"(?:no (?:more|longer) than|not (?:more|longer) than|at most|under|less than|within|max(?:imum)?(?: of)?|"
    rf"shorter than)\s+(?P<a>{HOURS_EN})(?P<half>\s+and a half)?\s*(?:-\s*)?hours?"
    rf"|(?P<b>{HOURS_EN})\s+hours?\s+(?:max|maximum|tops|or less|at most)",
    re.I,
)
ARRIVE_EN = re.compile(
    r"\b(?:arriv\w*|get (?:there|in)|be there|land\w*|reach \w+|in \w+)\s+(?:no later than|before|by)\s+"
    r"(?P<h>\d{1,2})(?::(?P<m>\d\d))?\s*(?P<ap>am|pm)?",
    re.I,
)


# arriving too early refused: 六点以前到站的不要 / 半夜到的不要 / 七点以后到就行 (``arr_after``: not before then)
_ARRIVE = r"(?:到站|到达|到|落地|抵达)"
_REFUSE = r"的?\s*(?:都|也|就|我)?\s*(?:不要|不行|不考虑|不坐|免了|pass)"
EARLY_ARRIVAL = re.compile(
    rf"{PERIOD_SAID}?\s*{CLOCK}\s*(?:钟)?\s*(?:以前|之前|前)\s*{_ARRIVE}{_REFUSE}"
    rf"|{PERIOD_SAID}?\s*{CLOCK}\s*(?:钟)?\s*(?:以后|之后|后)\s*(?:再|才)?{_ARRIVE}"
)
NIGHT_ARRIVAL = re.compile(
    rf"(?:半夜|大半夜|深夜|凌晨)\s*{_ARRIVE}{_REFUSE}|(?:不要|别)\s*(?:半夜|大半夜|深夜|凌晨)\s*{_ARRIVE}"
)
EARLY_ARRIVAL_EN = re.compile(
    r"\b(?:(?:arriv\w*|get(?:ting)? (?:there|in)|land\w*)\s+(?:after|no earlier than|not before)"
    r"|(?:nothing|none|no \w+|not)\s+(?:arriving|landing|getting in)\s+before)\s+"
    r"(?P<h>\d{1,2})(?::(?P<m>\d\d))?\s*(?P<ap>am|pm)?",
    re.I,
)


def arrive_after(text: str, english: bool) -> tuple[JSONDict, str]:
    """``arr_after`` ("HH:MM", arriving no earlier than) and the text without it."""
    if english:
        m = EARLY_ARRIVAL_EN.search(text)
        if m is None:
            return {}, text
        hour = int(m.group("h")) + (12 if (m.group("ap") or "").lower() == "pm" and int(m.group("h")) < 12 else 0)
        return ({"arr_after": f"{hour:02d}:{int(m.group('m') or 0):02d}"}, _blank(text, m)) if hour < 24 else ({}, text)
    m = NIGHT_ARRIVAL.search(text)
    if m:
        return {"arr_after": "06:00"}, _blank(text, m)
    m = EARLY_ARRIVAL.search(text)
    if m is None:
        return {}, text
    if m.group(2):
        clock = _clock_of(m.group(2), m.group(3), m.group(4), m.group(1))
    else:
        clock = _clock_of(m.group(6), m.group(7), m.group(8), m.group(5))
    return {"arr_after": clock}, _blank(text, m)


# a deadline said with a time of day: 中午前到 / 最好天黑前到 / 晚饭前能到 / be there before noon
PERIOD_DEADLINE = re.compile(
    r"(?P<p>中午|天黑|傍晚|晚饭|午饭)\s*(?:以前|之前|前)\s*(?:要|得|能|必须|需要|就|最好)?\s*(?:赶)?(?:到|抵达|到达|落地)"
)
DEADLINE_AT = {"中午": "12:00", "午饭": "12:00", "天黑": "18:00", "傍晚": "18:00", "晚饭": "18:00"}
NOON_EN = re.compile(
    r"\b(?:arriv\w*|get (?:there|in)|be there|land\w*|reach \w+|in \w+)\s+(?:no later than|before|by)\s+"
    r"(?:noon|midday)",
    re.I,
)


def _blank(text: str, m: re.Match[str]) -> str:
    return text[: m.start()] + "□" * (m.end() - m.start()) + text[m.end() :]


def _number(word: str | None) -> int | None:
    if not word:
        return None
    return EN_NUMBERS.get(word.lower()) or cn_number(word)


def total_budget(text: str, english: bool) -> tuple[JSONDict, str]:
    """``max_total`` (a budget for the whole order, whatever the count) and the text without it."""
    m = (TOTAL_EN if english else TOTAL).search(text)
    if m is None:
        return {}, text
    value = int(m.group("a") or m.group("b")) if english else _number(m.group("n"))
    if value is None or not 100 <= value <= 500_000:
        return {}, text
    return {"max_total": value}, _blank(text, m)


def price_range(text: str, english: bool) -> tuple[JSONDict, str]:
    """``min_price`` and ``max_price`` of a range said (三四百 / 三百到五百之间 / 300 to 400), and the text without
    it."""
    if english:
        m = RANGE_EN.search(text)
        if m and 30 <= int(m.group("a")) < int(m.group("b")):
            return {"min_price": int(m.group("a")), "max_price": int(m.group("b"))}, _blank(text, m)
        return {}, text
    m = NEIGHBOURS.search(text)
    if m and (cn_number(m.group("b")) or 0) == (cn_number(m.group("a")) or 0) + 1:
        unit = 100 if m.group("u") == "百" else 1000
        first, last = (cn_number(m.group("a")) or 0) * unit, (cn_number(m.group("b")) or 0) * unit
        return {"min_price": first, "max_price": last}, _blank(text, m)
    for m in RANGE.finditer(text):
        low, high = cn_number(m.group("a")), cn_number(m.group("b"))
        if low and high and 30 <= low < high <= 100_000:
            return {"min_price": low, "max_price": high}, _blank(text, m)
    return {}, text


def longest_ride(text: str, english: bool) -> tuple[JSONDict, str]:
    """``max_duration`` (minutes) of a bound on how long the ride or flight takes, and the text without it."""
    if english:
        m = DURATION_EN.search(text)
        if m is None:
            return {}, text
        hours = _number(m.group("a") or m.group("b"))
        half = bool(m.group("half"))
    else:
        m = DURATION.search(text)
        if m is None:
            return {}, text
        hours = _number(m.group("a") or m.group("b"))
        half = any(m.group(k) for k in ("ha", "hb", "hc", "hd"))
    if not hours or hours > 48:
        return {}, text
    return {"max_duration": hours * 60 + (30 if half else 0)}, _blank(text, m)


def arrive_by_period(text: str, english: bool) -> tuple[JSONDict, str]:
    """``arr_by`` of a deadline said with a time of day (中午前到 / be there before noon), and the text without it."""
    if english:
        m = NOON_EN.search(text)
        return ({"arr_by": "12:00"}, _blank(text, m)) if m else ({}, text)
    m = PERIOD_DEADLINE.search(text)
    return ({"arr_by": DEADLINE_AT[m.group("p")]}, _blank(text, m)) if m else ({}, text)


def arrive_by_en(text: str) -> tuple[JSONDict, str]:
    """``arr_by`` ("HH:MM") of an English arrival deadline (must arrive by 8:30 / get in before 6pm)."""
    m = ARRIVE_EN.search(text)
    if m is None:
        return {}, text
    hour, minute = int(m.group("h")), int(m.group("m") or 0)
    if (m.group("ap") or "").lower() == "pm" and hour < 12:
        hour += 12
    if hour > 23 or minute > 59:
        return {}, text
    return {"arr_by": f"{hour:02d}:{minute:02d}"}, _blank(text, m)


# a price per night or room said as a number (七百九一间 / 680一晚): a price, never a count of rooms or nights
PER_UNIT = re.compile(rf"(?P<n>(?:{NUM}))\s*(?:块钱|块|元)?\s*(?:一|每)\s*(?:晚|间|夜)(?!\s*(?:以内|以下|之内|内))")
# …a budget per night or room: 五百一晚以内 (max_price 500, no 510 nights)
PER_UNIT_BOUND = re.compile(rf"(?P<n>(?:{NUM}))\s*(?:块钱|块|元)?\s*(?:一|每)\s*(?:晚|间|夜)\s*(?:以内|以下|之内|内)")


def _unit_prices(text: str) -> str:
    """``text`` with each price per night or room blanked out."""
    for m in PER_UNIT.finditer(text):
        if (cn_number(m.group("n")) or 0) >= 30:
            text = _blank(text, m)
    return text


def limits(text: str, english: bool) -> tuple[JSONDict, str]:
    """Every limit above said in ``text``, and the text with each blanked out (and prices per night or room)."""
    out: JSONDict = {}
    m = PER_UNIT_BOUND.search(text) if not english else None
    if m and 30 <= (cn_number(m.group("n")) or 0) <= 100_000:
        out["max_price"] = cn_number(m.group("n"))
        text = _blank(text, m)
    for finder in (total_budget, price_range, longest_ride, arrive_after, arrive_by_period):
        said, text = finder(text, english)
        out.update(said)
    if english:
        said, text = arrive_by_en(text)
        out.update(said)
    return out, text if english else _unit_prices(text)
