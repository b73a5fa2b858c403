"""Slot finders: the normalised value of one kind of slot in a clause (dates, times, prices, classes, counts)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping

from ragdial.jsontypes import JSONDict
from ragdial.task.acts.words import (
    AIRLINES_EN,
    BERTH_WORDS,
    CLASS_EN,
    CLASS_WORDS,
    DATE_SHIFT,
    DOMAIN_CUES,
    DOMAIN_SOUNDS,
    KIND_WORDS,
    PERIOD_EN,
    PERIOD_WORDS,
    SLEEPERS,
    WINDOWS,
)
from ragdial.task.db import Gazetteer
from ragdial.task.slots import _BY_SOUND, NUM, Parse, _char_pinyin, _find, canonical, cn_number, parse_date
from ragdial.task.slots import parse as parse_slots
from ragdial.task.values import as_str


def parse(text: str, gaz: Gazetteer, today: dt.date) -> Parse:
    """The slot parser, matching by sound as the current ``understand`` call says."""
    return parse_slots(text, gaz, today, _BY_SOUND.get())


def _offer_code(offer: Mapping[str, object]) -> str:
    return str(offer.get("code") or offer.get("flight_no") or offer.get("train_no") or "")


# how a character sounds in a place name where its common reading differs (朝阳 Chaoyang, 长宁 Changning)
NAME_SOUNDS = {"朝": "(?:chao|zhao)", "长": "(?:chang|zhang)", "重": "(?:chong|zhong)", "厦": "(?:xia|sha)"}
# hotel brands as English speakers name them (the names the English replies show)
BRANDS_EN = {  # as patterns: Home Inn(s) / Han Ting / Jin Jiang Inn / Orange Crystal
    **{r"home\s?inns?": "如家快捷酒店", r"han\s?ting": "汉庭酒店", r"jin\s?jiang(?:\s?inns?)?": "锦江之星"},
    **{r"ji\s(?:hotel)": "全季酒店", r"a\s?tour": "亚朵酒店", r"vienna": "维也纳酒店"},
    **{
        r"(?:crystal\s)?orange(?:\scrystal)?": "桔子水晶酒店",
        r"mercure": "美居酒店",
        r"crowne\s?plaza": "皇冠假日酒店",
    },
    **{r"marriott": "万豪酒店", r"hilton": "希尔顿酒店", r"inter\s?continental": "洲际酒店"},
}


def _brand_of(text: str, gaz: Gazetteer) -> str | None:
    lower = text.lower()
    for name, brand in sorted(BRANDS_EN.items(), key=lambda kv: -len(kv[0])):
        if brand in gaz.brands and re.search(rf"\b{name}\b", lower):
            return brand
    for brand in sorted(gaz.brands, key=len, reverse=True):
        short = brand.replace("酒店", "").replace("快捷", "")
        for form in {brand, short, short[:2] if len(short) >= 3 and short not in ("锦江之星",) else short}:
            if len(form) >= 2 and form in text:
                if form == "锦江" and "锦江之星" not in text:
                    continue
                return brand
    return None


def _district_of(text: str, gaz: Gazetteer, city: str | None) -> str | None:
    for name in sorted(gaz.districts, key=len, reverse=True):
        if name in text:
            if name == "锦江" and "锦江之星" in text:
                continue
            if name == "浦东" and "浦东机场" in text:
                continue
            if city and city not in gaz.districts[name] and any(city in gaz.districts[n] for n in gaz.districts):
                pass
            return name
    if re.search(r"[a-zA-Z]{3}", text):  # Panlong district / in Wuhou: a district said in pinyin
        lower = text.lower()
        for pattern in BRANDS_EN:  # (Jin Jiang Inn is a brand, not the Jinjiang district)
            lower = re.sub(rf"\b{pattern}\b", " ", lower)
        for name in sorted(gaz.districts, key=len, reverse=True):
            sound = r"['\s-]?".join(NAME_SOUNDS.get(c) or _char_pinyin(c) for c in name)  # (Jing'an)
            if re.search(rf"\b{sound}\b", lower):
                return name
    return None


def _airline_of(text: str, gaz: Gazetteer) -> str | None:
    lower = text.lower()
    for name in gaz.airlines or {"国航": "CA", "东航": "MU", "南航": "CZ", "海航": "HU", "川航": "3U", "深航": "ZH"}:
        if name in text:
            return name
    for en, name in AIRLINES_EN.items():
        if re.search(rf"\b{en}\b", lower):
            return name
    return None


def _code_of(text: str) -> str | None:
    m = re.search(r"(?<![A-Za-z0-9])([A-Za-z0-9]{2}\d{3,4}|[GDKTZgdktz]\d{1,4})(?![A-Za-z0-9])", text)
    if m and re.search(r"[A-Za-z]", m.group(1)):
        return m.group(1).upper()
    return None


def code_domain(code: str) -> str:
    """Whether a code names a train (G4990, D6912, K423) or a flight (CA1234, 3U3892)."""
    return "train" if re.fullmatch(r"[GDCKTZ]\d{1,4}", code.upper()) else "flight"


def _classes_of(text: str, english: bool) -> list[str]:
    if english:
        lower = text.lower()
        for phrase, value in sorted(CLASS_EN.items(), key=lambda kv: -len(kv[0])):
            if phrase in lower:
                return [value]
        return []
    return [CLASS_WORDS[w] for _s, _e, w in _find(text, list(CLASS_WORDS))]


def _class_value(found: list[str], text: str, domain: str | None) -> str | list[str] | None:
    if not found:
        return None
    if len(found) > 1 and re.search(r"(没有就|不行就|没有的话|要不就|太贵|换成|改成|还是)", text):
        found = [found[-1]] if not re.search(r"还是.*(太贵|不要)", text) else [found[0]]
    elif len(found) > 1 and re.search(r"(或|还是|都行|都可以)", text):
        values: list[str] = []
        for f in found:
            values += SLEEPERS if f == "卧铺" else [f]
        return sorted(set(values), key=values.index)
    value = found[0]
    if value == "卧铺" and any(f in SLEEPERS for f in found):  # 卧铺，软卧下铺: the sleeper named
        value = next(f for f in found if f in SLEEPERS)
    if value == "卧铺":
        return list(SLEEPERS)
    if value == "business":
        return "商务座" if domain == "train" else "商务舱"
    if value == "first":
        return "一等座" if domain == "train" else "头等舱"
    return value


def _berths_of(text: str, english: bool) -> str | list[str] | None:
    if english:
        found = [v for k, v in {"upper": "上铺", "middle": "中铺", "lower": "下铺"}.items() if k in text.lower()]
    else:
        found = [BERTH_WORDS[w] for _s, _e, w in _find(text, list(BERTH_WORDS))]
    if not found:
        return None
    return found[0] if len(found) == 1 else found


def _kinds_of(text: str) -> list[str] | None:
    kinds: list[str] = []
    for word, letters in sorted(KIND_WORDS.items(), key=lambda kv: -len(kv[0])):
        if word in text:
            kinds += [k for k in letters if k not in kinds]
            text = text.replace(word, "")
    if re.search(r"(?<![A-Za-z])G字头", text):
        kinds.append("G")
    return kinds or None


def _clock(hour: int, minute: int, period: str | None) -> str:
    if period in ("下午", "晚上", "傍晚") and hour < 12:
        hour += 12
    if period == "中午" and hour < 5:
        hour += 12
    return f"{min(hour, 23):02d}:{minute:02d}"


CLOCK = rf"({NUM})\s*[点:：时]\s*(半|一刻|三刻|({NUM})\s*分?)?"
PERIOD_SAID = r"(凌晨|早上|上午|中午|下午|傍晚|晚上|今晚|明晚|明早|早晨|清早)"
# a window between two clock times: 下午2点到5点之间 / 10点至12点 / 两点到四点
CLOCK_RANGE = re.compile(
    rf"{PERIOD_SAID}?\s*{CLOCK}\s*(?:钟)?\s*(?:到|至|-|~|～|—)\s*{PERIOD_SAID}?\s*{CLOCK}\s*(?:钟)?\s*(?:之间|以内|中间)?"
)
# a bound from a named window without a clock time: 中午前 / 中午以后 / 下午之前 / 傍晚以后
PERIOD_BOUND = re.compile(rf"{PERIOD_SAID}\s*(以前|之前|前(?!后)|以后|之后|后)(?!天)")
# after work: leaving from 18:00 (下班后 / 下班以后 / 下了班)
NO_RED_EYE = re.compile(
    r"(不要|不坐|别|不想坐|不想要|不考虑)\s*(订|给我|坐)?\s*红眼|红眼(航班|的|那种|机)?\s*(就|也|都|我)?\s*(不要|不行|不坐|算了|免了|不考虑)"
)
AFTER_WORK = re.compile(r"(下班|下了班)(以后|之后|后)?(?!了)")
# an arrival deadline: 晚上十点前要到 / 8点之前得到天津 / 十点以前能落地 (not a departure window)
ARRIVE_BY = re.compile(
    rf"(?:最晚|最迟|不晚于)?\s*{PERIOD_SAID}?\s*{CLOCK}\s*(?:钟)?\s*"
    r"(?:(?:以前|之前|前)\s*(?:要|得|能|必须|需要|就|必需)?|(?:要|得|必须|需要)|(?<=点)(?=到)|(?<=半)(?=到))"
    r"\s*(?:赶)?(?:到|抵达|到达|落地)(?![0-9零一二两三四五六七八九十]+\s*[点:：])"
)


def _arrive_by(text: str) -> tuple[str | None, str]:
    """(the arrival deadline said, "HH:MM", the text without it) — 晚上十点前要到 is no departure window."""
    m = ARRIVE_BY.search(text)
    if not m:
        return None, text
    clock = _clock_of(m.group(2), m.group(3), m.group(4), m.group(1))
    return clock, text[: m.start()] + "□" * (m.end() - m.start()) + text[m.end() :]


NOON = {"中午": "12:00"}
# a window refused: 下午不行 / 晚上的不要 / 不要早上的 (no constraint; it refuses what was offered)
NEGATED_PERIOD = re.compile(
    rf"^(?:我们?|咱们?)?(?:(?:不要|不考虑|别给我|不想要){PERIOD_SAID}(?:的|那些|那班|那趟|出发)?|"
    rf"{PERIOD_SAID}(?:的|那些|那班|那趟|的话|出发)?(?:也|都|肯定|真的|可)?"
    r"(?:不行|不可以|不要|不方便|没空|不合适|不考虑|来不及|赶不上|不太行|走不了|去不了))(?:了|啊|吧|呢|哦)*$"
)  # 中午前 / 中午以后: before or after noon itself, not the lunch window
REFUSED_PERIOD = re.compile(NEGATED_PERIOD.pattern.removeprefix("^").removesuffix("$"))
"""The same refusal anywhere in a turn (上午不行，我下午才有空)."""


def _clock_of(hour_word: str, extra: str | None, minute_word: str | None, period: str | None) -> str:
    hour = cn_number(hour_word) or 0
    minute = {"半": 30, "一刻": 15, "三刻": 45}.get(extra or "")
    if minute is None:
        minute = (cn_number(minute_word) or 0) if minute_word else 0
    return _clock(hour, minute, PERIOD_WORDS.get(period or "", period))


# a departure time refused as too early or too late: 六点多那种太早的不要 / 七点那班太早了 / 晚上十点多的太晚了不要
REFUSED_TIME = re.compile(
    rf"{PERIOD_SAID}?\s*{CLOCK}\s*(?:钟)?\s*(多)?(?:的|那种|那班|那趟|出发的|走的|这种|那个)*\s*(?:都|也|就)?\s*"
    r"(?:太|有点|有些|过于|偏)?(早|晚)了?(?:的|那种)?\s*(?:都|也|就|我)?\s*(?:不要|不行|不考虑|不坐|算了|免了|pass)"
)


# a side of a bound refused: 九点半以前起飞的不要 (from 09:30) / 下午六点以后的也不要 (until 18:00)
REFUSED_SIDE = re.compile(
    rf"{PERIOD_SAID}?\s*{CLOCK}\s*(?:钟)?\s*(以前|之前|前|以后|之后|后)\s*(?:起飞|出发|发车|开|走|到|落地|到达)?的?"
    r"(?:航班|飞机|车|车次|班次|那种|这种)?\s*(?:都|也|我)?\s*(?:都|也)?\s*(?:不要|不行|不考虑|不坐|免了|pass)"
)


REFUSED_AT = re.compile(
    rf"(?:别给我订|别给我|别订|不要订|不要|不想要)\s*{PERIOD_SAID}?\s*{CLOCK}\s*(?:钟)?\s*(?:多)?\s*(?:那种|那班|那趟|的)"
)


def _refused_time(text: str) -> tuple[str | None, str | None, tuple[int, int] | None]:
    """(time_from, time_to, span) when a departure time is refused as too early (from the next hour when said as
    六点多, else just after it) or too late (before it), or a side of a bound refused (九点半以前的不要: from 09:30;
    六点以后的也不要: until 18:00); (None, None, None) otherwise."""
    at = REFUSED_AT.search(text)
    if at:  # 别给我订早上六点那种: an early one refused (from the next hour), or a late one (before it)
        clock = _clock_of(at.group(2), at.group(3), at.group(4), at.group(1))
        hour = int(clock[:2])
        if hour < 12:
            return f"{hour + 1:02d}:00", None, at.span()
        return None, f"{hour:02d}:00", at.span()
    side = REFUSED_SIDE.search(text)
    if side:
        clock = _clock_of(side.group(2), side.group(3), side.group(4), side.group(1))
        if side.group(1) is None and clock < "07:00":  # 两点半以前发车的都不要: the afternoon, not the night
            clock = f"{int(clock[:2]) + 12:02d}{clock[2:]}"
        return (clock, None, side.span()) if "前" in side.group(5) else (None, clock, side.span())
    m = REFUSED_TIME.search(text)
    if not m:
        return None, None, None
    clock = _clock_of(m.group(2), m.group(3), m.group(4), m.group(1))
    hour, minute = map(int, clock.split(":"))
    if m.group(6) == "早":
        later = (hour + 1, 0) if m.group(5) else divmod(hour * 60 + minute + 1, 60)
        return f"{min(later[0], 23):02d}:{later[1]:02d}", None, m.span()
    return None, f"{hour:02d}:00" if m.group(5) else clock, m.span()


REFUSED_BOUND_EN = re.compile(
    r"\b(nothing|none|not|no(?:\s+[a-z]+){0,2}?)\s+(?:leaving\s+|departing\s+|that leaves\s+)?"
    r"(before|after|earlier than|later than)\s+(\d{1,2})(?::(\d\d))?\s*(am|pm)?"
    r"(\s+(?:in the (?:evening|afternoon)|at night|tonight))?"
)


def _time_bounds(text: str, english: bool) -> tuple[str | None, str | None]:
    """(time_from, time_to) of a departure window said as clock times or a bound: 3点以后 / 10点前 /
    下午2点到5点之间 / 中午前 / 晚上8点以后 / 十点左右 (an hour either side) / after 6pm / between 2 and 5 pm."""
    if english:
        lower = text.lower()
        m = re.search(
            r"\bbetween\s+(\d{1,2})(?::(\d\d))?\s*(am|pm)?\s+(?:and|to)\s+(\d{1,2})(?::(\d\d))?\s*(am|pm)?", lower
        )
        if m:
            pm = "下午" if "pm" in (m.group(3), m.group(6)) else None
            first = _clock(int(m.group(1)), int(m.group(2) or 0), pm if m.group(3) != "am" else None)
            return first, _clock(int(m.group(4)), int(m.group(5) or 0), pm if m.group(6) != "am" else None)
        m = REFUSED_BOUND_EN.search(lower)
        if m:  # nothing before 10 / no trains after 6 pm / no earlier than 9: the other side of the bound
            pm = "下午" if m.group(5) == "pm" or m.group(6) else None
            clock = _clock(int(m.group(3)), int(m.group(4) or 0), pm)
            return (clock, None) if m.group(2) in ("before", "earlier than") else (None, clock)
        m = re.search(r"\b(after|before|by)\s+(\d{1,2})(?::(\d\d))?\s*(am|pm)?", lower)
        if m:
            clock = _clock(int(m.group(2)), int(m.group(3) or 0), "下午" if m.group(4) == "pm" else None)
            return (clock, None) if m.group(1) == "after" else (None, clock)
        m = re.search(r"\bbefore\s+noon\b", lower)
        if m:
            return None, "12:00"
        if re.search(r"\bno (?:red[- ]?eyes?|overnight flights?|night flights?)\b", lower):
            return "06:00", "22:00"  # no red-eye: as 不要红眼航班
        return None, None
    if AFTER_WORK.search(text) and not re.search(r"[点:：]", text):
        return "18:00", None
    if NO_RED_EYE.search(text) and not re.search(r"[点:：]", text):
        return "06:00", "22:00"  # 不要红眼航班: neither in the small hours nor late at night
    m = CLOCK_RANGE.search(text)
    if m:
        first_period = m.group(1)
        second_period = m.group(5) or first_period
        start = _clock_of(m.group(2), m.group(3), m.group(4), first_period)
        end = _clock_of(m.group(6), m.group(7), m.group(8), second_period)
        if end <= start and not m.group(5) and first_period is None:
            end = _clock_of(m.group(6), m.group(7), m.group(8), "下午")  # 10点到2点: the end is after noon
        if end > start:
            return start, end
    m = re.search(
        rf"{PERIOD_SAID}?\s*{CLOCK}\s*(?:钟)?\s*(以后|之后|后|以前|之前|前|以内|左右|上下)",
        text,
    )
    if m:
        clock = _clock_of(m.group(2), m.group(3), m.group(4), m.group(1))
        if m.group(5) in ("左右", "上下"):  # 十点左右: an hour either side
            hour, minute = map(int, clock.split(":"))
            return f"{max(hour - 1, 0):02d}:{minute:02d}", f"{min(hour + 1, 23):02d}:{minute:02d}"
        return (clock, None) if "后" in m.group(5) else (None, clock)
    m = PERIOD_BOUND.search(text)
    if m:
        period = PERIOD_WORDS.get(m.group(1), m.group(1))
        if period in WINDOWS:
            start, end = WINDOWS[period]
            if "前" in m.group(2):
                return None, NOON.get(period, start)
            return NOON.get(period, start), None
    return None, None


def _period_of(text: str, english: bool) -> str | None:
    if english:
        lower = text.lower()
        for word, name in sorted(PERIOD_EN.items(), key=lambda kv: -len(kv[0])):
            if re.search(rf"\b{word}\b", lower):
                return name
        return None
    if re.search(r"(早上好|晚上好|下午好)", text):
        return None
    for word in CLASS_WORDS:  # 商务舱 sounds like 上午 (shang wu): words said exactly take no match by sound
        text = text.replace(word, "□" * len(word))
    # 上午不行，我下午才有空: a window refused inside a longer turn is no window asked for
    text = REFUSED_PERIOD.sub(lambda m: "□" * len(m.group(0)), text)
    found = _find(text, list(PERIOD_WORDS))
    return PERIOD_WORDS[found[0][2]] if found else None


def _price_of(text: str, open_question: str | None, english: bool) -> int | None:
    if english:
        m = re.search(r"\b(?:under|below|less than|at most|within|max(?:imum)?|budget(?: of)?)\s*[¥$]?\s*(\d+)", text)
        return int(m.group(1)) if m else None
    for source in (text, canonical(text)):
        m = re.search(
            rf"(?:不超过|不高于|低于|少于|预算|最多|不要超过|别超过|控制在|价格在)"
            rf"(?:可以|能|就)?(?:提到|提高到|加到|放宽到|放到|降到|调到|调整到|升到|涨到|增加到|改成|改到|到|是|为|大概)?"
            rf"\s*({NUM})\s*(?:元|块)?"
            rf"|({NUM})\s*(?:元|块|块钱)?\s*(?:[以一]内|[以一]下|之内|内|左右)",
            source,
        )
        if m:
            value = cn_number(m.group(1) or m.group(2))
            if value and 30 <= value <= 100_000:
                return value
    if open_question == "max_price":
        m = re.search(rf"({NUM})\s*(?:元|块)", text) or re.fullmatch(rf"\s*({NUM})\s*(?:吧|左右|的|呢|啊)?\s*", text)
        if m:
            return cn_number(m.group(1))
    return None


def _count(text: str, pattern: str) -> int | None:
    m = re.search(pattern, text)
    if not m:
        return None
    return cn_number(m.group(1))


def _hotel_numbers(text: str, english: bool) -> dict[str, int]:
    out: dict[str, int] = {}
    if english:
        lower = text.lower()
        words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
        for slot, pattern in (
            ("nights", r"(\d|one|two|three|four|five)\s+nights?"),
            ("rooms", r"(\d|one|two|three|four|five)\s+rooms"),
            ("guests", r"(\d|one|two|three|four|five)\s+(?:guests|people|persons|adults)"),
        ):
            m = re.search(pattern, lower)
            if m:
                out[slot] = words.get(m.group(1)) or int(m.group(1))
        return out
    n = _count(text, rf"住\s*({NUM})\s*(?:个)?晚") or _count(text, rf"({NUM})\s*(?:个)?晚(?:上)?(?!上好)")
    said = list(
        re.finditer(rf"({NUM})\s*(?:个)?晚(?:上)?(?!上好)(?P<no>\s*可?(?:不行|不够|不可以|太少|太短|不要))?", text)
    )
    if said and said[0].group("no"):  # 一晚不行，得两晚: a number of nights refused is none wanted
        wanted = [m for m in said if not m.group("no")]
        n = cn_number(wanted[-1].group(1)) if wanted else None
    if n and not re.search(rf"({NUM})\s*点", text[max(0, text.find("晚") - 3) : text.find("晚") + 3]):
        out["nights"] = n
    week = re.search(rf"(?:住|待|呆|入住)\s*({NUM})?\s*(?:个)?(?:礼拜|星期|周)(?![一二三四五六日天1-7])", text)
    if week and not re.search(rf"({NUM})\s*(?:个)?晚", text[week.end() :]):  # 住一个礼拜: seven nights
        out["nights"] = 7 * ((cn_number(week.group(1)) or 1) if week.group(1) else 1)
    if re.search(rf"({NUM})\s*间.{{0,4}}({NUM})\s*间", text):
        out["rooms"] = len(re.findall(rf"({NUM})\s*间", text))
    else:
        rooms = _count(text, rf"({NUM})\s*间")
        if rooms and (rooms > 1 or re.search(r"(就|只要|只|一间就|一间够)", text)):
            out["rooms"] = rooms
    guests = _count(text, rf"({NUM})\s*(?:个)?(?:人|位)") or _count(text, rf"我们\s*({NUM})\s*(?:个)") or _people(text)
    if re.search(r"(就我一个|就我自己|我一个人|一个人住|就一个人)", text):
        guests = 1
    if guests:
        out["guests"] = guests
    return out


def _people(text: str) -> int | None:
    """How many travel, said in words: 我们俩 / 咱仨 / 一家三口 / 两个大人一个小孩 / 两大一小 / 我和老婆."""
    m = re.search(
        rf"({NUM})\s*(?:个|位|名)?\s*(?:大人|成人|成年人)[，,、\s和加带还有]*({NUM})\s*(?:个|位|名)?\s*(?:小孩|孩子|儿童|小朋友|娃)",
        text,
    )
    m = m or re.search(rf"({NUM})大({NUM})小", text)
    if m:
        return (cn_number(m.group(1)) or 0) + (cn_number(m.group(2)) or 0) or None
    m = re.search(rf"(?:我们|咱们|咱|我俩|他们|一共|总共)\s*({NUM})\s*个(?!晚|小时|钟|月|星期|礼拜|工作日)", text)
    if m and (cn_number(m.group(1)) or 0) > 1:
        return cn_number(m.group(1))
    m = re.search(r"一家(?:子)?\s*([三四五六3-6])\s*(?:口|个)", text)  # 一家三口 / 我们一家仨 (仨 read as 三个)
    if m:
        return cn_number(m.group(1))
    if re.search(r"(我们|咱们|咱|我)仨|仨人|我们三个(?!晚)", text):
        return 3
    if re.search(r"(我们|咱们|咱|我|他|她|你)俩|俩人|两口子|小两口", text):
        return 2
    if re.search(
        r"我(和|跟|带|带着)(我)?(老婆|老公|爱人|媳妇|女朋友|男朋友|对象|妈妈?|爸爸?|同事|朋友|孩子|儿子|女儿)(?!.{0,4}[0-9两二三四五]\s*[个位张人])",
        text,
    ):
        return 2
    return None


PARTNER_EN = (
    r"(?:wife|husband|partner|girlfriend|boyfriend|son|daughter|kid|child|mum|mom|dad|mother|father|friend|"
    r"colleague|boss|brother|sister)"
)


def _people_en(lower: str) -> int | None:
    """How many travel, said in English words: me and my wife / my husband and I / both of us / a family of three."""
    m = re.search(r"\b(?:family|group|party) of (two|three|four|five|\d)\b|\bthe (two|three|four|five) of us\b", lower)
    if m:
        word = m.group(1) or m.group(2)
        return {"two": 2, "three": 3, "four": 4, "five": 5}.get(word) or int(word)
    pair = rf"\b(me|i) (?:and|&) my {PARTNER_EN}\b|\bmy {PARTNER_EN} (?:and|&) (i|me)\b|\bboth of us\b|\bfor us two\b"
    if re.search(pair, lower):
        return 2
    return None


def _passengers(text: str, english: bool) -> int | None:
    if english:
        m = re.search(
            r"\b(\d|two|three|four|five)\s+(?:(?:first|second|business|economy|premium)[- ]class\s+|adult\s+)?"
            r"(?:people|passengers|tickets|adults|seats|of us)",
            text.lower(),
        )
        m = m or re.search(
            r"\b(\d|two|three|four|five)\s+(?:[a-z-]+\s+){1,3}?(?:tickets|seats|passengers)\b", text.lower()
        )
        if m:
            return {"two": 2, "three": 3, "four": 4, "five": 5}.get(m.group(1)) or int(m.group(1))
        return _people_en(text.lower())

    n = _people(text)
    if n:
        return n
    n = (
        _count(text, rf"({NUM})\s*(?:个)?(?:人|位)")
        or _count(text, rf"({NUM})\s*张")
        or _count(text, rf"(?:一共|总共|共)\s*({NUM})\s*(?:个|位)?$")
    )
    return n if n and n > 1 else None


def _stars_of(text: str, english: bool) -> tuple[int | None, int | None]:
    if english:
        m = re.search(r"\b(\d|one|two|three|four|five)[- ]star(?:s)?(\s+or\s+(?:above|more|better)|\+)?", text.lower())
        if m:
            value = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}.get(m.group(1)) or int(m.group(1))
            return (None, value) if m.group(2) else (value, None)
        return None, None
    below = re.search(rf"({NUM})\s*星(?:级)?(?:及)?以下的?(?:都|就|我)?(?:不要|不行|不考虑|不住|算了|免了)", text)
    if below and 1 <= (cn_number(below.group(1)) or 0) <= 4:
        return None, (cn_number(below.group(1)) or 0) + 1  # 三星以下的不要: four stars or more
    for source in (text, canonical(text)):
        m = re.search(
            rf"(至少|起码|不低于|不要低于|不能低于|最少)?\s*({NUM})\s*星(?:级)?(?:酒店)?\s*((?:及)?[以一]上|起)?",
            source,
        )
        if m:
            stars = cn_number(m.group(2))
            if stars and 1 <= stars <= 5:
                return (None, stars) if (m.group(1) or m.group(3)) else (stars, None)
    return None, None


def _dates(text: str, today: dt.date, english: bool, state: JSONDict) -> dict[str, str]:
    """date (departure / check-in) and check_out named in a clause."""
    out: dict[str, str] = {}
    m = re.search(r"(住到|待到|退房|到(?=.{1,6}退房))(.{0,8})", text)
    checkout_text = None
    leave = re.search(r"(?:check(?:ing)?[- ]?out|leav(?:e|ing))\s+(?:on\s+|the\s+)*([^,.;]{2,24})", text, re.I)
    if english and leave:  # check in December 18 and check out December 20 / checking out on the 10th
        day = re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)?", leave.group(1).strip())
        checkout = _date_in(f"{day.group(1)}号" if day else leave.group(1), today, not day)
        if checkout:
            out["check_out"] = checkout
            text = text[: leave.start()] + text[leave.end() :]
        m = None
    if m:
        if m.group(1) == "退房":
            checkout_text = text[max(0, m.start() - 8) : m.start()]
            rest = text[: max(0, m.start() - 8)] + text[m.end() :]
            checkout_text = re.split(r"(入住|住|[，,。；;])", checkout_text)[-1]  # (周五，还是周日退房: 周日)
            rest = text[: m.start() - len(checkout_text)]
        else:
            checkout_text = m.group(2)
            rest = text[: m.start()]
        checkout = _date_in(checkout_text, today, english)
        if checkout:
            out["check_out"] = checkout
            text = rest
    if re.search(r"(这周末|这个周末|周末|本周末)", text) and not re.search(r"下(个)?周末", text):
        out["date"] = (today + dt.timedelta(days=(5 - today.weekday()) % 7)).isoformat()
    elif re.search(r"下(个)?周末", text):
        monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(weeks=1)
        out["date"] = (monday + dt.timedelta(days=5)).isoformat()
    else:
        said = SELF_CORRECTED.split(text)  # 这周六哦不对是周日: the day said after the correction holds
        date = (_date_in(said[-1], today, english) if len(said) > 1 else None) or _date_in(text, today, english)
        if date:
            out["date"] = date
    m = DATE_SHIFT.search(text)
    if m and state.get("date") and "date" not in out:
        days = cn_number(m.group(2)) or 0
        sign = -1 if m.group(1) in ("提前", "早", "往前") else 1
        out["date"] = (dt.date.fromisoformat(as_str(state["date"])) + dt.timedelta(days=sign * days)).isoformat()
    next_day = re.search(r"(第二天|次日|隔天)", text)
    if out.get("date") and next_day and DAY_SAID.search(text[: next_day.start()]):  # 5号出发第二天到: after it
        # (第二天啊，11号: the day said after 第二天 is that next day itself)
        out["date"] = (dt.date.fromisoformat(out["date"]) + dt.timedelta(days=1)).isoformat()
    return out


SELF_CORRECTED = re.compile(
    r"(?:哦不对|噢不对|啊不对|不对不对|不对|说错了|说错|搞错了|口误|我是说|应该是|更正一下|sorry)"
)


DAY_SAID = re.compile(rf"((?:{NUM})\s*[号日]|周|星期|礼拜|今天|明天|后天|今晚|明晚|明早)")
DAY_NUMBERED = re.compile(rf"(?:(?:{NUM})\s*月\s*)?(?:{NUM})\s*[号日](?!.{{0,1}}(?:前|后|以前|以后|之前|之后))")
WEEKDAY_SAID = re.compile(r"(周|星期|礼拜)[一二三四五六日天]")


def _date_in(text: str, today: dt.date, english: bool) -> str | None:
    if re.search(r"(明早|明晚)", text):
        return (today + dt.timedelta(days=1)).isoformat()
    if re.search(r"今晚", text):
        return today.isoformat()
    date = parse_date(text, today, english)
    if date is None and not english:
        date = parse_date(canonical(text), today, english)
    numbered = DAY_NUMBERED.search(text) if not english else None
    if date and numbered and WEEKDAY_SAID.search(text):  # 下下周日，13号那个周日: the day's number is the plainer
        return parse_date(numbered.group(0), today) or date
    return date


def _domain_named(text: str, english: bool) -> str | None:
    lower = text.lower()
    if re.search(r"不(飞|坐飞机)了?", text):
        text = re.sub(r"不(飞|坐飞机)了?", "", text)
    best: tuple[int, str] | None = None
    for domain, words in DOMAIN_CUES.items():
        for word in words:
            if word.isascii():
                m = re.search(rf"\b{word}", lower)
                pos = m.start() if m else -1
            else:
                pos = text.rfind(word) if domain != "flight" or word != "飞" else _fly_pos(text)
            if pos >= 0 and (best is None or pos > best[0]):
                best = (pos, domain)
    if best is None and not english:
        for domain, sounds in DOMAIN_SOUNDS.items():
            for start, end, _w in _find(text, sounds, fuzzy=True):
                if not re.search(r"[零一二两三四五六七八九十0-9]", text[start:end]):
                    return domain
    return best[1] if best else None


def _fly_pos(text: str) -> int:
    starts = [m.start() for m in re.finditer(r"飞(?!快)", text)]
    return starts[-1] if starts else -1


# what the user does not want: 别给我如家汉庭那种 / 不要如家 / 除了汉庭都行 / 不坐东航 / 如家的就算了 / 不要绿皮车
EXCLUDING_BEFORE = re.compile(
    r"(别给我|别给|别订|别选|别要|别找|别是|别在|别住在?|不要在|不要住在?|不要|不想在|不想要|不想住在?|不想坐|不想订|不住在?|不坐|"
    r"不订|不选|不考虑|不喜欢|不太喜欢|讨厌|除了|除去|排除|去掉|不包括)([^，,。；;！!？?]{0,16})"
)
EXCLUDING_AFTER = re.compile(
    r"([^，,。；;！!？?]{1,16}?)(?:的|那种|那类|这种|这类|那些|系列)*(?:就|也|都|我)?"
    r"(?:算了|别给我|别给|别订|别要|不要|不行|不考虑|不住|不坐|不订|免了|不用|pass|除外|以外|之外)"
)


def _brands_in(text: str, gaz: Gazetteer) -> list[tuple[int, int, str]]:
    """Every hotel brand named in ``text``: (start, end, full brand name), in the order said."""
    found: list[tuple[int, int, str]] = []
    rest = text
    for brand in sorted(gaz.brands, key=len, reverse=True):
        short = brand.replace("酒店", "").replace("快捷", "")
        forms = {brand, short, short[:2] if len(short) >= 3 and short not in ("锦江之星",) else short}
        for form in sorted(forms, key=len, reverse=True):
            at = rest.find(form)
            if len(form) >= 2 and at >= 0 and not (form == "锦江" and "锦江之星" not in text):
                found.append((at, at + len(form), brand))
                rest = rest[:at] + "□" * len(form) + rest[at + len(form) :]
                break
    return sorted(found)


BUDGET_OR_BOUND = r"(超过|高于|低于|贵|便宜|以上|以下|以内|及以|或以|没有的话|的话|也行|也可以)"
ONE_NEXT_TO_CUE = ("not_berth", "not_stars", "not_district")


def _named_in(text: str, gaz: Gazetteer) -> dict[str, list[tuple[int, int, str]]]:
    """Brands, airlines, train kinds, berths, star ratings and hotel districts named in ``text``, each as
    (start, end, value)."""
    airlines = gaz.airlines or {"国航": "CA", "东航": "MU", "南航": "CZ", "海航": "HU", "川航": "3U", "深航": "ZH"}
    lower = text.lower()
    named: dict[str, list[tuple[int, int, str]]] = {"not_brand": _brands_in(text, gaz)}
    named["not_airline"], named["not_train_kinds"] = [], []
    named["not_berth"] = [(s, e, BERTH_WORDS[w]) for s, e, w in _find(text, list(BERTH_WORDS))]
    named["not_stars"] = [
        (m.start(), m.end(), str(cn_number(m.group(1))))
        for m in re.finditer(rf"({NUM})\s*星(?:级)?", text)
        if 1 <= (cn_number(m.group(1)) or 0) <= 5
    ]
    named["not_district"] = []
    for name in sorted(gaz.districts, key=len, reverse=True):
        at = text.find(name)
        taken = any(s <= at < e for s, e, _d in named["not_district"])
        if (
            at >= 0
            and not taken
            and not (name == "锦江" and "锦江之星" in text)
            and not (name == "浦东" and "浦东机场" in text)
        ):
            named["not_district"].append((at, at + len(name), name))
    for name in airlines:
        for m in re.finditer(re.escape(name), lower):
            named["not_airline"].append((m.start(), m.end(), name))
    for pattern, name in AIRLINES_EN.items():
        for m in re.finditer(rf"\b{pattern}\b", lower):
            named["not_airline"].append((m.start(), m.end(), name))
    for word, letters in KIND_WORDS.items():
        for m in re.finditer(re.escape(word), text):
            if not any(s <= m.start() < e for s, e, _k in named["not_train_kinds"]):
                named["not_train_kinds"] += [(m.start(), m.end(), k) for k in letters]
    return named


def _exclusions(text: str, gaz: Gazetteer, english: bool = False) -> tuple[dict[str, list[str]], str]:
    """(excluded brands / airlines / train kinds / berths / star ratings / districts as ``not_brand`` /
    ``not_airline`` / ``not_train_kinds`` / ``not_berth`` / ``not_stars`` / ``not_district``, the text with the
    excluded names blanked out so no finder reads them as wanted)."""
    spans: list[tuple[int, int, bool]] = []  # (start, end, whether the value next to the cue is at the end)
    if english:
        for m in re.finditer(r"\b(?:no|not|except|avoid|anything but|other than)\s+([a-z ]{2,30})", text.lower()):
            spans.append((m.start(1), m.end(1), False))
    else:
        spans += [(m.start(2), m.end(2), False) for m in EXCLUDING_BEFORE.finditer(text)]
        spans += [(m.start(1), m.end(1), True) for m in EXCLUDING_AFTER.finditer(text)]
    out: dict[str, list[str]] = {}
    blanked = list(text)
    for start, end, cue_after in spans:
        cut = re.search(BUDGET_OR_BOUND, text[start:end])  # 不要超过300: a budget
        end = start + cut.start() if cut else end
        bound = bool(cut and re.match(r"(超过|高于|低于|以上|以下|及以|或以)", cut.group(0)))
        for key, found in _named_in(text[start:end], gaz).items():
            if key == "not_stars" and bound:
                continue  # 三星以下的不要 / 不要低于三星: a bound, not one rating refused
            every = cue_after and re.match(r"(的|那种|那类|这种|这类|那些)*都", text[end:])  # 上铺中铺都不要: both
            if key in ONE_NEXT_TO_CUE and found and not every:  # 江汉区的二星不要: only the value next to the cue
                found = [max(found) if cue_after else min(found)]
            for s, e, value in found:
                if value not in out.setdefault(key, []):
                    out[key].append(value)
                blanked[start + s : start + e] = "□" * (e - s)
    return {k: v for k, v in out.items() if v}, "".join(blanked)
