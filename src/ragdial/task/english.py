"""English names for the database's Chinese values, so an English reply has no Chinese in it: seat classes and
berths (经济舱 → economy), airports and stations (上海虹桥站 → Shanghai Hongqiao Station), hotels (汉庭酒店(昆明盘龙店)
→ Hanting Hotel (Kunming Panlong)), districts and airlines. Names without a table entry are spelt in pinyin.
"""

from __future__ import annotations

import re
from functools import cache

from pypinyin import lazy_pinyin

from ragdial.task.places import CITIES

CLASSES = {
    **{"经济舱": "economy", "商务舱": "business", "头等舱": "first class"},
    **{"二等座": "second class", "一等座": "first class", "商务座": "business seat", "硬座": "hard seat"},
    **{"硬卧": "hard sleeper", "软卧": "soft sleeper", "上铺": "upper berth", "中铺": "middle berth"},
    "下铺": "lower berth",
}
BRANDS = {
    **{"如家快捷酒店": "Home Inn", "汉庭酒店": "Hanting Hotel", "锦江之星": "Jinjiang Inn", "全季酒店": "JI Hotel"},
    **{"亚朵酒店": "Atour Hotel", "维也纳酒店": "Vienna Hotel", "桔子水晶酒店": "Crystal Orange Hotel"},
    **{"美居酒店": "Mercure", "皇冠假日酒店": "Crowne Plaza", "万豪酒店": "Marriott", "希尔顿酒店": "Hilton"},
    "洲际酒店": "InterContinental",
}
AIRLINES = {"国航": "Air China", "东航": "China Eastern", "南航": "China Southern", "海航": "Hainan Airlines"}
AIRLINES |= {"川航": "Sichuan Airlines", "深航": "Shenzhen Airlines"}
SPELT = {"长水": "Changshui", "长乐": "Changle", "重庆": "Chongqing", "首都": "Capital"}  # (长 alone: zhang)
SPELT |= {"朝阳": "Chaoyang", "工业园区": "Industrial Park"}
OTHER = {
    **{"上午": "morning", "下午": "afternoon", "晚上": "evening", "早上": "early morning", "中午": "around noon"},
    **{"凌晨": "small hours", "傍晚": "early evening", "夜里": "night", "白天": "daytime", "高铁": "high-speed"},
    **{"动车": "D-train", "快速": "fast", "特快": "express", "直达": "direct", "卧铺": "sleeper"},
}
SIDES = {"东": "East", "西": "West", "南": "South", "北": "North"}
HAN = re.compile(r"[\u4e00-\u9fff]")


@cache
def _cities() -> dict[str, str]:
    return {c.name: c.name_en for c in CITIES}


def pinyin(text: str) -> str:
    """A Chinese name in pinyin, capitalised as one word (盘龙 → Panlong, 宝安 → Bao'an)."""
    if text in SPELT:
        return SPELT[text]
    syllables = lazy_pinyin(text)
    word = "".join(s if i == 0 or s[:1] not in "aoe" else "'" + s for i, s in enumerate(syllables))
    return word[:1].upper() + word[1:]


def _city_prefix(name: str) -> tuple[str, str]:
    for city, english in sorted(_cities().items(), key=lambda kv: -len(kv[0])):
        if name.startswith(city):
            return english, name[len(city) :]
    return "", name


def place(name: str) -> str:
    """An airport or station: 大兴机场 → Daxing Airport, 北京西站 → Beijing West Station, 杭州东站 → Hangzhou East
    Station, 上海站 → Shanghai Station."""
    if not HAN.search(name):
        return name
    for suffix, kind in (("机场", "Airport"), ("站", "Station")):
        if name.endswith(suffix):
            core = name[: -len(suffix)]
            city, rest = _city_prefix(core)
            words = [city] if city else []
            if rest in SIDES:
                words.append(SIDES[rest])
            elif rest:
                words.append(pinyin(rest))
            return " ".join([*words, kind])
    return pinyin(name)


def hotel(name: str) -> str:
    """汉庭酒店(昆明盘龙店) → Hanting Hotel (Kunming Panlong)."""
    brand, _, branch = name.partition("(")
    english = BRANDS.get(brand) or pinyin(brand)
    branch = branch.rstrip(")").removesuffix("店")
    if not branch:
        return english
    city, district = _city_prefix(branch)
    where = " ".join(w for w in (city, pinyin(district) if district else "") if w)
    return f"{english} ({where})"


def value(text: str) -> str:
    """Any value shown in an English reply: a class, a berth, an airline, a district, a city; pinyin otherwise."""
    if not HAN.search(text):
        return text
    for table in (CLASSES, AIRLINES, BRANDS, OTHER, _cities()):
        if text in table:
            return table[text]
    if text.endswith(("机场", "站")):
        return place(text)
    if "(" in text:
        return hotel(text)
    return pinyin(text)


def seat(seat_class: str, berth: str = "") -> str:
    """硬卧 + 下铺 → hard sleeper, lower berth."""
    return ", ".join(CLASSES.get(s, value(s)) for s in (seat_class, berth) if s)


HOTEL_NAME = re.compile(r"[\u4e00-\u9fff]+\([\u4e00-\u9fff]+\)")
PLACE_NAME = re.compile(r"[\u4e00-\u9fff]+(机场|站)")
STARS = re.compile(r"(\d)星(及以上)?")
RUN = re.compile(r"[\u4e00-\u9fff]+")


def scrub(reply: str) -> str:
    """An English reply with every Chinese value left in it (from the database or a constraint) in English."""
    if not HAN.search(reply):
        return reply
    reply = HOTEL_NAME.sub(lambda m: hotel(m.group(0)), reply)
    reply = PLACE_NAME.sub(lambda m: place(m.group(0)), reply)
    reply = STARS.sub(lambda m: f"{m.group(1)}-star" + (" or better" if m.group(2) else ""), reply)
    reply = RUN.sub(lambda m: value(m.group(0)), reply)
    for zh, en in (("（", " ("), ("）", ")"), ("、", ", "), ("，", ", "), ("；", "; "), ("：", ": "), ("。", ". ")):
        reply = reply.replace(zh, en)
    return reply
