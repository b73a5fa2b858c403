"""Limits as data: a budget for the whole order (四个人一共不超过三千 → ``max_total``), a price range (三四百一晚 /
三百到五百之间 → ``min_price`` + ``max_price``), a longest ride (坐车别超过五个小时 → ``max_duration`` in minutes), and
an arrival deadline said in English (must arrive by 8:30 → ``arr_by``). Each finder returns its slots and the text
with what it read blanked out, so no other finder reads the same words again (三四百一晚 is no 410 nights)."""

from __future__ import annotations

import re

from ragdial.jsontypes import JSONDict
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


def limits(text: str, english: bool) -> tuple[JSONDict, str]:
    """Every limit above said in ``text``, and the text with each blanked out."""
    out: JSONDict = {}
    for finder in (total_budget, price_range, longest_ride):
        said, text = finder(text, english)
        out.update(said)
    if english:
        said, text = arrive_by_en(text)
        out.update(said)
    return out, text
