"""Slot parsing for the travel tasks, Chinese first, English too.

``parse(text, gazetteer, today)`` finds cities and stations (from the database's gazetteer, with their role:
departure or arrival), dates (absolute and relative: 今天/明天/后天/下周三/12月3日/tomorrow/next Friday),
departure-time periods (晚上/上午/evening/"after 6pm"), seat and berth classes, price limits, hotel stars,
and the task domain named by keywords. It finds no dialog acts: what a turn does (confirm, deny, select, ...)
is decided in one place, ``ragdial.task.acts``.
Chinese keywords and city names are also matched by toneless pinyin, so homophone ASR errors
(背景 for 北京) still parse.
"""

from __future__ import annotations

import datetime as dt
import re
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from functools import lru_cache

from pypinyin import lazy_pinyin

from ragdial.jsontypes import JSONDict
from ragdial.task.db import Gazetteer

WEEKDAY_WORDS = "一二三四五六日"  # 周一 … 周日, Monday first as date.weekday()
WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
WEEKDAYS_EN = {"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6}
MONTHS_EN = {
    m: i + 1 for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])
}
RELATIVE_DAYS = {"今天": 0, "今日": 0, "明天": 1, "明日": 1, "后天": 2, "大后天": 3}
# days named by a holiday: (month, day) on the solar calendar, or the day in each year for the lunar ones
NAMED_DAYS: dict[str, tuple[int, int]] = {
    "平安夜": (12, 24),
    "圣诞节": (12, 25),
    "圣诞": (12, 25),
    "跨年夜": (12, 31),
    "元旦": (1, 1),
    "情人节": (2, 14),
    "双十二": (12, 12),
    "双12": (12, 12),
    "双十一": (11, 11),
    "双11": (11, 11),
    "国庆节": (10, 1),
    "劳动节": (5, 1),
    "五一": (5, 1),
    "new year's day": (1, 1),
    "christmas eve": (12, 24),
    "christmas": (12, 25),
    "new year's eve": (12, 31),
}
LUNAR_DAYS: dict[str, tuple[str, ...]] = {  # 除夕 and 春节 of 2026-2030, the winter solstice (冬至, Beijing time)
    "除夕": ("2026-02-16", "2027-02-05", "2028-01-25", "2029-02-12", "2030-02-02"),
    "大年三十": ("2026-02-16", "2027-02-05", "2028-01-25", "2029-02-12", "2030-02-02"),
    "大年初一": ("2026-02-17", "2027-02-06", "2028-01-26", "2029-02-13", "2030-02-03"),
    "冬至": ("2025-12-21", "2026-12-22", "2027-12-22", "2028-12-21", "2029-12-21", "2030-12-22"),
}
RELATIVE_DAYS_EN = {"today": 0, "tonight": 0, "tomorrow": 1, "day after tomorrow": 2}

# period -> (from, to) departure-time window, end exclusive
PERIODS = {
    "凌晨": ("00:00", "06:00"),
    "早上": ("06:00", "09:00"),
    "早晨": ("06:00", "09:00"),
    "清早": ("06:00", "09:00"),
    "上午": ("06:00", "12:00"),
    "中午": ("11:00", "14:00"),
    "下午": ("12:00", "18:00"),
    "傍晚": ("17:00", "20:00"),
    "晚上": ("18:00", "24:00"),
    "夜里": ("20:00", "24:00"),
    "夜间": ("20:00", "24:00"),
    "白天": ("06:00", "18:00"),
}
PERIODS_EN = {
    "early morning": ("00:00", "06:00"),
    "morning": ("06:00", "12:00"),
    "noon": ("11:00", "14:00"),
    "afternoon": ("12:00", "18:00"),
    "evening": ("18:00", "24:00"),
    "tonight": ("18:00", "24:00"),
    "night": ("20:00", "24:00"),
}
SEAT_CLASSES = {
    "经济舱": "经济舱",
    "商务舱": "商务舱",
    "头等舱": "头等舱",
    "二等座": "二等座",
    "一等座": "一等座",
    "商务座": "商务座",
    "硬座": "硬座",
    "硬卧": "硬卧",
    "软卧": "软卧",
    "二等": "二等座",
    "一等": "一等座",
}
SEAT_CLASSES_EN = {
    "economy": "经济舱",
    "business class": "business",
    "business": "business",
    "first class": "first",
    "second class": "二等座",
    "second-class": "二等座",
    "first-class": "first",
    "business-class": "business",
    "hard seat": "硬座",
    "hard sleeper": "硬卧",
    "soft sleeper": "软卧",
}
BERTHS = {"上铺": "上铺", "中铺": "中铺", "下铺": "下铺"}
TRAIN_KINDS = {"高铁": "G", "动车": "D", "特快": "T", "直达": "Z", "快速": "K"}
BERTHS_EN = {"upper": "上铺", "middle": "中铺", "lower": "下铺"}
DOMAIN_WORDS = {
    "flight": ["机票", "航班", "飞机", "飞往", "坐飞机", "舱"],
    "train": ["火车", "高铁", "动车", "车票", "列车", "卧铺", "硬卧", "软卧", "二等座", "一等座", "硬座", "座位"],
    "hotel": ["酒店", "宾馆", "住宿", "旅馆", "饭店", "入住", "住一晚", "星级", "房间"],
}
DOMAIN_WORDS_EN = {
    "flight": ["flight", "fly", "plane", "air ticket", "airline"],
    "train": ["train", "rail", "sleeper", "high-speed"],
    "hotel": ["hotel", "room", "stay", "accommodation"],
}
NEGATED_SOUNDS = {("bu", "shi"), ("bu", "qu"), ("bu", "cong"), ("bu", "zai")}
DEP_BEFORE = ("从", "由", "自")
ARR_BEFORE = ("到", "去", "飞", "往", "至", "抵达", "回")
DEP_AFTER = ("出发", "走", "起飞", "发车", "上车")
ARR_AFTER = ("下车",)


EXACT_CUES = sorted(
    w
    for w in {*SEAT_CLASSES, *BERTHS, *PERIODS, *RELATIVE_DAYS, *(w for ws in DOMAIN_WORDS.values() for w in ws)}
    if len(w) >= 2
)


@dataclass
class Parse:
    """Everything one utterance says, in canonical form (cities in Chinese, dates ISO, times HH:MM)."""

    language: str = "zh"
    domains: list[str] = field(default_factory=list)
    cities: list[tuple[str, str | None]] = field(default_factory=list)  # (city, "dep" | "arr" | None)
    negated_cities: list[str] = field(default_factory=list)
    places: dict[str, str] = field(default_factory=dict)  # city -> station/airport named
    date: str | None = None
    time_from: str | None = None
    time_to: str | None = None
    period: str | None = None
    seat_class: str | None = None
    berths: list[str] = field(default_factory=list)
    train_kinds: list[str] = field(default_factory=list)  # 高铁 -> G, 动车 -> D
    max_price: int | None = None
    stars: int | None = None
    min_stars: int | None = None

    def has_slots(self) -> bool:
        """Whether any task slot was found."""
        return bool(
            self.cities
            or self.date
            or self.time_from
            or self.time_to
            or self.seat_class
            or self.berths
            or self.max_price
            or self.stars
            or self.min_stars
        )

    def to_dict(self) -> JSONDict:
        return asdict(self)


_CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
NUM = r"[0-9]+|[零〇一二两三四五六七八九十百千万]+"


def cn_number(text: str) -> int | None:
    """Arabic or simple Chinese numerals ('12', '十二', '一千五百', '一千五' = 1500)."""
    if text.isdigit():
        return int(text)
    total, section, digit, last_unit = 0, 0, None, 1
    for ch in text:
        if ch in _CN_DIGITS:
            digit = _CN_DIGITS[ch]
        elif ch in _CN_UNITS:
            unit = _CN_UNITS[ch]
            if unit == 10000:
                total += (section + (digit or 0)) * unit
                section, digit = 0, None
            else:
                section += (1 if digit is None else digit) * unit
                digit = None
            last_unit = unit
        else:
            return None
    if digit is not None:  # '一千五' -> 1500: a trailing digit is a tenth of the last unit
        section += digit * (last_unit // 10 if last_unit >= 100 else 1)
    return total + section


_BY_SOUND: ContextVar[bool] = ContextVar("by_sound", default=True)


@lru_cache(maxsize=8192)
def _char_pinyin(char: str) -> str:
    return lazy_pinyin(char)[0] if "\u4e00" <= char <= "\u9fff" else char


def _pinyin(text: str) -> tuple[str, ...]:
    """Toneless pinyin of each character (non-Chinese characters stand for themselves); with matching by sound
    switched off, the characters themselves, so every comparison by sound becomes an exact one."""
    if not _BY_SOUND.get():
        return tuple(text)
    return tuple(_char_pinyin(c) for c in text)


# cue characters by sound, for a second reading of date, star, price and choice phrases (ASR homophones)
CANONICAL = {
    "yue": "月",
    "ri": "日",
    "hao": "号",
    "zhou": "周",
    "xia": "下",
    "xing": "星",
    "ji": "级",
    "er": "二",
    "san": "三",
    "si": "四",
    "wu": "五",
    "liu": "六",
    "qi": "七",
    "ba": "八",
    "jiu": "九",
    "tian": "天",
    "di": "第",
    "ge": "个",
    "yuan": "元",
    "kuai": "块",
    "nei": "内",
    "bai": "百",
    "qian": "千",
    "yi": "一",
    "chao": "超",
    "guo": "过",
    "yu": "预",
    "suan": "算",
    "shang": "上",
    "liang": "两",
}


def canonical(text: str, blocked: frozenset[int] = frozenset()) -> str:
    """``text`` with cue characters replaced by the canonical character of the same sound (not in city names)."""
    if not _BY_SOUND.get():
        return text
    out = []
    for i, char in enumerate(text):
        if i not in blocked and "\u4e00" <= char <= "\u9fff":
            char = CANONICAL.get(_char_pinyin(char), char)
        out.append(char)
    return "".join(out)


def _find(
    text: str, vocab: list[str], fuzzy: bool = True, blocked: frozenset[int] = frozenset()
) -> list[tuple[int, int, str]]:
    """Non-overlapping (start, end, word) matches of vocab in text, longest first; then pinyin matches.

    ``blocked`` positions (city names already found) take no pinyin match: 一下无锡 holds no 下午 (xia wu).
    """
    taken = [False] * len(text)
    found: list[tuple[int, int, str]] = []
    for word in sorted(vocab, key=len, reverse=True):
        start = text.find(word)
        while start >= 0:
            end = start + len(word)
            if not any(taken[start:end]):
                found.append((start, end, word))
                for i in range(start, end):
                    taken[i] = True
            start = text.find(word, end)
    if fuzzy:
        chars = _pinyin(text)
        if chars:
            for word in sorted(vocab, key=len, reverse=True):
                if len(word) < 2 or not all("\u4e00" <= c <= "\u9fff" for c in word):
                    continue
                target = _pinyin(word)
                n = len(word)
                for start in range(len(text) - n + 1):
                    if any(taken[start : start + n]) or any(i in blocked for i in range(start, start + n)):
                        continue
                    if chars[start : start + n] == target:
                        found.append((start, start + n, word))
                        for i in range(start, start + n):
                            taken[i] = True
    return sorted(found)


def _week_date(today: dt.date, weekday: int, week_offset: int | None) -> dt.date:
    """'周三' = the next Wednesday from today (today counts); '下周三' = Wednesday of next calendar week."""
    if week_offset is None:
        return today + dt.timedelta(days=(weekday - today.weekday()) % 7)
    monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(weeks=week_offset)
    return monday + dt.timedelta(days=weekday)


def _month_day(today: dt.date, month: int, day: int) -> dt.date | None:
    for year in (today.year, today.year + 1):
        try:
            date = dt.date(year, month, day)
        except ValueError:
            return None
        if date >= today - dt.timedelta(days=1):
            return date
    return None


def _day_of_month_ahead(today: dt.date, day: int) -> dt.date | None:
    """A day said by its number alone (20号): this month's if it is today or later, else the next month that has it
    (20号 said on 11-24 is 12-20, not next November; 31号 in November is 12-31)."""
    first = today.replace(day=1)
    for _ in range(3):
        try:
            date = first.replace(day=day)
        except ValueError:
            date = None
        if date is not None and date >= today:
            return date
        first = (first + dt.timedelta(days=32)).replace(day=1)
    return None


def _english_month_day(lower: str, today: dt.date) -> str | None:
    """A day said as month and day (December 11 / 11th of December) as ISO, "" for an impossible one, None when
    none is said."""
    m = re.search(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b", lower)
    if m:
        date = _month_day(today, MONTHS_EN[m.group(1)], int(m.group(2)))
        return date.isoformat() if date else ""
    m = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)", lower)
    if m:
        date = _month_day(today, MONTHS_EN[m.group(2)], int(m.group(1)))
        return date.isoformat() if date else ""
    m = DAY_OF_MONTH_EN.search(lower)
    if m:  # Monday the 14th / on the 4th: that day of this month (next month once it has passed)
        day = int(m.group(1))
        month = today.month if day >= today.day else today.month % 12 + 1
        date = _month_day(today, month, day)
        return date.isoformat() if date else ""
    return None


# a day of the month without the month: after a weekday (Monday the 14th / Friday 18th) or after "on" (on the 4th);
# no ordinal of an option (the 2nd one)
DAY_OF_MONTH_EN = re.compile(
    r"(?:\b(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+(?:the\s+)?|\b(?:on|from|until|till|to|for)\s+the\s+|^\s*(?:the\s+)?)"
    r"(\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:one|option|flight|train|hotel|choice|of the|in the list))"
)


# a day counted from a named day: 冬至前一天 / 圣诞节后两天 / 元旦的第二天 / the day before Christmas
SHIFT_AFTER = re.compile(rf"^\s*的?\s*(前|后|第)\s*({NUM})\s*天")
SHIFT_NEXT = re.compile(r"^\s*的?\s*(次日|隔天|前夕)")
SHIFT_EN = re.compile(r"\b(?:the\s+)?(day|one day|two days|2 days)\s+(before|after)\s+(?:the\s+)?$")


def _shift_of(lower: str, start: int, end: int) -> int:
    """Days a named day is moved by the words around it (冬至前一天: -1; the day after Christmas: +1; 0 else)."""
    m = SHIFT_AFTER.match(lower[end:])
    if m:
        n = cn_number(m.group(2)) or 0
        return -n if m.group(1) == "前" else (n - 1 if m.group(1) == "第" else n)
    m = SHIFT_NEXT.match(lower[end:])
    if m:
        return -1 if m.group(1) == "前夕" else 1
    m = SHIFT_EN.search(lower[:start])
    if m:
        n = 2 if m.group(1).startswith(("two", "2")) else 1
        return -n if m.group(2) == "before" else n
    return 0


def _named_day(lower: str, today: dt.date) -> str | None:
    """The next day named by a holiday (平安夜 / 圣诞节 / 元旦 / 除夕 / Christmas), as ISO, moved by the days said
    with it (冬至前一天 / 圣诞节后两天 / the day after Christmas)."""
    for name, (month, day) in sorted(NAMED_DAYS.items(), key=lambda kv: -len(kv[0])):
        at = lower.find(name)
        if at >= 0:
            shift = _shift_of(lower, at, at + len(name))
            date = _month_day(today - dt.timedelta(days=shift), month, day)
            return (date + dt.timedelta(days=shift)).isoformat() if date else None
    for name, days in LUNAR_DAYS.items():
        at = lower.find(name)
        if at >= 0:
            moved = dt.timedelta(days=_shift_of(lower, at, at + len(name)))
            return next(
                ((dt.date.fromisoformat(d) + moved).isoformat() for d in days if d >= (today - moved).isoformat()), None
            )
    return None


def _short_airports(gaz: Gazetteer) -> dict[str, str]:
    """Airports by their name without 机场 (双流, 大兴), unless that is also a city, a district (浦东) or a
    station's name (虹桥)."""
    stations = {p.removesuffix("站") for p, (_c, k) in gaz.places.items() if k == "station"}
    out: dict[str, str] = {}
    for place, (_city, kind) in gaz.places.items():
        core = place.removesuffix("机场")
        named_else = core in gaz.cities or core in gaz.districts or any(core in st for st in stations)
        if kind == "airport" and core != place and len(core) >= 2 and not named_else:
            out[core] = place
    return out


def parse_date(text: str, today: dt.date, english: bool = False, blocked: frozenset[int] = frozenset()) -> str | None:
    """The date a phrase names, as ISO, relative to ``today``; None when none is named."""
    lower = text.lower()
    named = _named_day(lower, today)
    if named:
        return named
    if english:
        for phrase, days in sorted(RELATIVE_DAYS_EN.items(), key=lambda kv: -len(kv[0])):
            if re.search(rf"\b{phrase}\b", lower):
                return (today + dt.timedelta(days=days)).isoformat()
        m = re.search(r"\bin\s+(\d|one|two|three|a)\s+(day|week)s?\b", lower)  # in two weeks
        if m:
            n = {"one": 1, "a": 1, "two": 2, "three": 3}.get(m.group(1)) or int(m.group(1))
            return (today + dt.timedelta(days=n * (7 if m.group(2) == "week" else 1))).isoformat()
        dated = _english_month_day(lower, today)  # Friday December 11: the day of the month wins over the weekday
        if dated is not None:
            return dated or None
        m = re.search(r"\b(next|this)?\s*(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", lower)
        if m:
            offset = {"next": 1, "this": 0}.get(m.group(1) or "")
            return _week_date(today, WEEKDAYS_EN[m.group(2)], offset).isoformat()
    m = re.search(
        rf"({NUM})\s*(?:个)?(天|周|星期|礼拜|个星期|个礼拜)(?:以后|之后|后)(?:的今天|的这天|的同一天|的周|的星期|的礼拜)?",
        text,
    )
    if m and not english and cn_number(m.group(1)):  # 两周后的今天 / 三天后
        n = cn_number(m.group(1)) or 0
        later = today + dt.timedelta(days=n * (1 if m.group(2) == "天" else 7))
        rest = text[m.end() - 1 : m.end() + 1]
        weekday = re.match(r"[周期拜]([一二三四五六日天])", rest)
        if weekday:  # 两周后的周五: that week's Friday
            later += dt.timedelta(days=WEEKDAYS_ZH[weekday.group(1)] - later.weekday())
        return later.isoformat()
    m = re.search(r"(\d{4})-(\d{1,2})-(\d{1,2})", text)
    if m:
        try:
            return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat()
        except ValueError:
            return None
    for word, _start in sorted(((w, text.find(w)) for w in RELATIVE_DAYS if w in text), key=lambda x: -len(x[0])):
        return (today + dt.timedelta(days=RELATIVE_DAYS[word])).isoformat()
    for _start, _end, word in _find(text, list(RELATIVE_DAYS), blocked=blocked):
        return (today + dt.timedelta(days=RELATIVE_DAYS[word])).isoformat()
    # "查一下下周三" is 一下 + 下周三, not 下下周三
    m = re.search(r"((?<!一)下下|下|这|本)?(?:个)?(?:周|星[期七]|礼拜)([一二三四五六日天])", text)
    if m:
        offset = {"下下": 2, "下": 1, "这": 0, "本": 0}.get(m.group(1) or "")
        if offset is None and m.start() > 0:  # 夏周五 / 吓周四: the word before 周 heard by sound
            offset = {"xia": 1, "zhe": 0, "ben": 0}.get(_pinyin(text[m.start() - 1])[0])
        return _week_date(today, WEEKDAYS_ZH[m.group(2)], offset).isoformat()
    m = re.search(rf"({NUM})月({NUM})[日号]?", text)
    if m:
        month, day = cn_number(m.group(1)), cn_number(m.group(2))
        if month and day:
            date = _month_day(today, month, day)
            return date.isoformat() if date else None
    m = re.search(rf"({NUM})[日号]", text)
    if m:
        day = cn_number(m.group(1))
        if day and 1 <= day <= 31:
            date = _day_of_month_ahead(today, day)
            return date.isoformat() if date else None
    return None


def _clock_of(hour: int, pm: bool) -> str:
    if pm and hour < 12:
        hour += 12
    return f"{min(hour, 24):02d}:00"


def parse_time(
    text: str, english: bool = False, blocked: frozenset[int] = frozenset()
) -> tuple[str | None, str | None, str | None]:
    """(time_from, time_to, period word) for a departure-time phrase."""
    lower = text.lower()
    if english:
        m = re.search(r"\b(after|before|by)\s+(\d{1,2})(?::00)?\s*(am|pm)?", lower)
        if m:
            clock = _clock_of(int(m.group(2)), m.group(3) == "pm")
            return (clock, None, None) if m.group(1) == "after" else (None, clock, None)
        for word, (a, b) in sorted(PERIODS_EN.items(), key=lambda kv: -len(kv[0])):
            if re.search(rf"\b{word}\b", lower):
                return a, b, word
        return None, None, None
    m = re.search(rf"(早上|上午|下午|晚上)?({NUM})点(?:钟)?(?:以后|之后|后|以前|之前|前)", text)
    if m:
        hour = cn_number(m.group(2)) or 0
        clock = _clock_of(hour, m.group(1) in ("下午", "晚上"))
        tail = text[m.end() - 2 : m.end()]
        after = "后" in tail
        return (clock, None, None) if after else (None, clock, None)
    found = _find(text, list(PERIODS), blocked=blocked)
    if found:
        word = found[0][2]
        return PERIODS[word][0], PERIODS[word][1], word
    return None, None, None


def _roles(text: str, spans: list[tuple[int, int, str]], plain: frozenset[int] = frozenset()) -> list[str | None]:
    """Each city's role by the words around it (从/到/飞/出发…, also by sound unless at a ``plain`` position: a
    district's name such as 道里 holds no 到)."""
    sounds = _pinyin(text)
    roles: list[str | None] = []
    for i, (start, end, _word) in enumerate(spans):
        before, after = text[max(0, start - 2) : start], text[end : end + 2]
        said_before = sounds[start - 1] if start and start - 1 not in plain else ""
        said_after = tuple(sound for k, sound in enumerate(sounds[end : end + 2], end) if k not in plain)
        more = end + 1 < len(text)
        role = None
        if (
            before.endswith(DEP_BEFORE)
            or after.startswith(DEP_AFTER)
            or said_before == "cong"
            or said_after[:2] == ("chu", "fa")
        ):
            role = "dep"
        elif before.endswith(ARR_BEFORE) or after.startswith(ARR_AFTER) or said_before in ("dao", "qu", "fei"):
            role = "arr"
        else:
            between = text[end : spans[i + 1][0]] if i + 1 < len(spans) else ""
            leads_on = after[:1] in ("到", "去", "飞") or said_after[:1] in (("dao",), ("qu",), ("fei",))
            if re.fullmatch(r"\s*(到|去|飞|至|-|—|→|到达)\s*", between) or (more and leads_on):
                role = "dep"
        roles.append(role)
    if len(spans) == 2 and spans[0][2] != spans[1][2]:  # "X … Y": the first is where one leaves from
        first, second = roles
        if first in (None, "dep") and second in (None, "arr") and (first, second) != ("dep", "arr"):
            roles = ["dep", "arr"]
    return roles


def _english_cities(text: str, gaz: Gazetteer) -> tuple[list[tuple[str, str | None]], list[str]]:
    lower = text.lower()
    found, negated = [], []
    names = sorted((k for k in gaz.cities if k.isascii()), key=len, reverse=True)
    for name in names:
        for m in re.finditer(rf"\b{re.escape(name)}\b", lower):
            before = lower[max(0, m.start() - 8) : m.start()]
            city = gaz.cities[name]
            if re.search(r"\bnot\s+$", before):
                negated.append(city)
                continue
            role = (
                "dep" if re.search(r"\bfrom\s+$", before) else "arr" if re.search(r"\b(to|in|at)\s+$", before) else None
            )
            found.append((m.start(), city, role))
    found.sort()
    cities = [(c, r) for _, c, r in found]
    return cities, negated


def _price_of(text: str) -> int | None:
    m = re.search(
        rf"(?:不超过|不高于|低于|少于|预算|最多|不要超过|控制在)\s*({NUM})\s*(?:元|块)?"
        rf"|({NUM})\s*(?:元|块|块钱)?\s*(?:[以一]内|[以一]下|之内|内)",
        text,
    )
    return cn_number(m.group(1) or m.group(2)) if m else None


def _stars_of(text: str) -> tuple[int | None, int | None]:
    """(stars, min_stars) named in a hotel request."""
    m = re.search(rf"({NUM})\s*星(?:级)?(?:酒店)?((?:及)?[以一]上)?", text)
    if m:
        value = cn_number(m.group(1))
        if value and 1 <= value <= 5:
            return (None, value) if m.group(2) else (value, None)
    return None, None


def parse(text: str, gaz: Gazetteer, today: dt.date, by_sound: bool = True) -> Parse:
    """Parse one user utterance against a gazetteer and the current date.

    ``by_sound=False`` switches off matching by pinyin (for the ablation in the benchmark)."""
    token = _BY_SOUND.set(by_sound)
    try:
        return _parse(text, gaz, today)
    finally:
        _BY_SOUND.reset(token)


def _parse(text: str, gaz: Gazetteer, today: dt.date) -> Parse:
    from ragdial.text.tokenize import detect_language

    english = detect_language(text) == "en"
    result = Parse(language="en" if english else "zh")
    blocked: frozenset[int] = frozenset()
    lower = text.lower().strip()
    if english:
        for domain, words in DOMAIN_WORDS_EN.items():
            if any(re.search(rf"\b{re.escape(w)}", lower) for w in words):
                result.domains.append(domain)
        result.cities, result.negated_cities = _english_cities(text, gaz)
        for phrase, value in sorted(SEAT_CLASSES_EN.items(), key=lambda kv: -len(kv[0])):
            if phrase in lower:
                result.seat_class = value
                break
        result.berths = [v for k, v in BERTHS_EN.items() if re.search(rf"\b{k}\b", lower)]
        m = re.search(r"\b(?:under|below|less than|at most|within|max(?:imum)?|budget(?: of)?)\s*[¥$]?\s*(\d+)", lower)
        result.max_price = int(m.group(1)) if m else None
        m = re.search(r"\b(\d|one|two|three|four|five)[- ]star(?:s)?(\s+or\s+(?:above|more|better))?", lower)
        if m:
            stars = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}.get(m.group(1)) or int(m.group(1))
            if m.group(2):
                result.min_stars = stars
            else:
                result.stars = stars
    else:
        short = _short_airports(gaz)  # 落双流的 / 大兴也行: an airport named without 机场
        names = list(gaz.cities) + list(gaz.places) + list(short)
        # single-character aliases (京, 沪) are too ambiguous in free text: only names of two or more characters
        spans = [
            (start, end, short.get(word, word))
            for start, end, word in _find(text, [n for n in names if not n.isascii() and len(n) >= 2])
        ]
        # words said exactly (cities, classes, domain words, ...) take no match by sound: 商务舱 holds no 上午
        exact = spans + _find(text, EXACT_CUES, fuzzy=False)
        blocked = frozenset(i for start, end, _w in exact for i in range(start, end))
        kept = []
        for start, end, word in spans:
            city = gaz.cities.get(word) or gaz.places[word][0]
            if word in gaz.places:
                result.places[city] = word
                kind_domain = "flight" if gaz.places[word][1] == "airport" else "train"
                if kind_domain not in result.domains:
                    result.domains.append(kind_domain)
            said = _pinyin(text[max(0, start - 2) : start])
            if re.search(r"(不是|不去|不从|不在)$", text[max(0, start - 2) : start]) or said in NEGATED_SOUNDS:
                result.negated_cities.append(city)
            else:
                kept.append((start, end, word))
        districts = frozenset(
            i
            for name in gaz.districts
            if len(name) >= 2
            for m in re.finditer(re.escape(name), text)
            for i in range(*m.span())
        )
        for (_start, _end, word), role in zip(kept, _roles(text, kept, districts), strict=True):
            city = gaz.cities.get(word) or gaz.places[word][0]
            result.cities.append((city, role))
        for domain, words in DOMAIN_WORDS.items():
            if _find(text, words, blocked=blocked):
                result.domains.append(domain)
        if re.search(r"(飞|航空)", text) and "flight" not in result.domains:
            result.domains.append("flight")
        if re.search(r"[住]", text) and "hotel" not in result.domains:
            result.domains.append("hotel")
        classes = _find(text, list(SEAT_CLASSES), blocked=blocked)
        # a class heard by sound is longer than a period word: 上务舱 is 商务舱, not 上午
        blocked |= frozenset(i for start, end, _w in classes for i in range(start, end))
        if classes:
            result.seat_class = SEAT_CLASSES[classes[0][2]]
        result.berths = [BERTHS[w] for _s, _e, w in _find(text, list(BERTHS), blocked=blocked)]
        kinds = {TRAIN_KINDS[w] for _s, _e, w in _find(text, list(TRAIN_KINDS), blocked=blocked)}
        result.train_kinds = sorted(kinds)
        heard = canonical(text, blocked)  # a second reading by sound, for ASR homophones
        result.max_price = _price_of(text) or _price_of(heard)
        result.stars, result.min_stars = _stars_of(text) if _stars_of(text) != (None, None) else _stars_of(heard)
    result.date = parse_date(text, today, english, blocked)
    if result.date is None and not english:
        result.date = parse_date(canonical(text, blocked), today, english, blocked)
    result.time_from, result.time_to, result.period = parse_time(text, english, blocked)
    if result.period in ("tonight",) and result.date is None:
        result.date = today.isoformat()
    return result
