"""Airports and stations in their roles, read over the whole turn: an airport of the city one leaves from is the
departure airport, one of the city one goes to the arrival airport (下周三从北京飞成都，只要首都机场的), and an airport
or station refused (别从大兴走 / 不要汉口) is the city's other one when it has exactly two, never one wanted."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ragdial.jsontypes import JSONDict
from ragdial.task.acts.context import Act, Context
from ragdial.task.acts.text import _is_english
from ragdial.task.db import Gazetteer
from ragdial.task.slots import _char_pinyin, _short_airports
from ragdial.task.values import listed

SIDES = {"东": "east", "西": "west", "南": "south", "北": "north"}
# a place refused: 别从大兴走 / 不要从首都机场飞 / 不要汉口 / 大兴的不要 / 天府太远了
REFUSED_BEFORE = (
    r"(?:别|不要|不想|不|甭)\s*(?:给我|帮我|给|让我|是)?\s*(?:落到|落在|降落在|降落到|飞到|停在|从|在|到|落|去)?\s*(?:{p})"
    r"(?!.{{0,3}}(?:也行|也可以|都行))(?![^，,。]{{0,4}}[吗么？?])"
)
REFUSED_AFTER = (
    r"(?:{p})(?:的|那个|那边)?\s*(?:就|也|都)?\s*(?:不要|不行|别|算了|太远|不方便|太偏)"
    r"|都(?:是)?(?:落|到|在|从)?\s*(?:{p})(?:的)?\s*(?:啊|呀|嘛|呢)"  # 这两个都落天府啊: not what was wanted
)


def place_roles(acts: list[Act], text: str, ctx: Context, gaz: Gazetteer) -> list[Act]:
    """``acts`` with each airport or station slot in the role its city gives it, and refused places replaced."""
    english = _is_english(text)
    domain = next((str(a.slots["domain"]) for a in acts if a.slots.get("domain") in ("flight", "train")), ctx.domain)
    names = _place_names(gaz, domain)
    refused = _refused_en(text, gaz, domain) if english else _refused(text, names)
    emptied: list[Act] = []
    if refused and not any(a.act in ("inform", "modify") for a in acts):  # not Hankou / 不是汉口 (a read-back)
        acts = [Act("modify", {}, corrects=True), *(a for a in acts if a.act not in ("out_of_scope", "deny"))]
    for act in acts:
        if act.act not in ("inform", "modify"):
            continue
        if act.slots.get("dep_city") and len(act.slots) == 1:
            emptied.append(act)
        slots = act.slots
        dep = slots.get("dep_city") or ctx.state.get("dep_city")
        arr = slots.get("arr_city") or ctx.state.get("arr_city")
        if english:
            _english_places(slots, text, gaz, str(slots.get("domain") or ctx.domain or ""), dep, arr, refused)
        _ruled_out(slots, refused, text, ctx, gaz, dep, arr)
        for key in ("dep_place", "arr_place"):
            place = slots.get(key)
            if isinstance(place, str) and place in refused:
                other = _other(place, gaz)
                if other is None:
                    slots.pop(key)
                else:
                    slots[key] = other
        for place in refused:  # 不要汉口 alone: the city's other station, in the role of that city
            other = _other(place, gaz)
            if other is None or other in (slots.get("dep_place"), slots.get("arr_place")):
                continue
            city = gaz.places[place][0]
            role = "dep_place" if city == dep != arr else "arr_place" if city == arr != dep else None
            if role is not None and role not in slots:
                slots[role] = other
        leg = slots.get("return_leg")
        back: JSONDict = leg if isinstance(leg, dict) else {}
        for key in ("dep_place", "arr_place") if back else ():
            place = slots.get(key)
            if isinstance(place, str) and place in gaz.places and gaz.places[place][0] == dep != arr:
                short = {n for n, full in names.items() if full == place}
                if any(re.search(rf"(到|落|回)\s*{re.escape(n)}", text) for n in short):
                    back["arr_place"] = slots.pop(key)  # …周日晚上再回来，要到北京南站的: where the way back arrives
        if slots.get("dep_city") and slots.get("dep_city") == arr and ctx.state.get("dep_city") != arr:
            slots.pop("dep_city")  # 天府就天府 / 到成都天府机场 while flying to 成都: the place one goes to, no origin
        for place_key, other_key, own in (("dep_place", "arr_place", dep), ("arr_place", "dep_place", arr)):
            place = slots.get(place_key)
            if not isinstance(place, str) or place not in gaz.places:
                continue
            city = gaz.places[place][0]
            theirs = arr if place_key == "dep_place" else dep
            if city != own and city == theirs:
                slots[other_key] = slots.pop(place_key)  # 只要首都机场的 when leaving from 北京: where one leaves from
                if slots.get(other_key.replace("place", "city")) not in (None, city):
                    slots[other_key.replace("place", "city")] = city
    if refused and any(a.act in ("inform", "modify") and a.slots for a in acts):
        acts = [a for a in acts if a.act != "out_of_scope"]  # 怎么都是落天府的啊: a complaint, not an aside
    return [a for a in acts if a.slots or not any(a is e for e in emptied)]


ARRIVING = re.compile(r"(落|到|抵达|降落|下车|land|arriv|into|\bto\b)", re.I)
LEAVING = re.compile(r"(从|走|出发|起飞|上车|\bfrom\b|leav|depart)", re.I)


def _ruled_out(
    slots: JSONDict, refused: list[str], text: str, ctx: Context, gaz: Gazetteer, dep: object, arr: object
) -> None:
    """Each refused place as data, ``not_dep_place`` / ``not_arr_place`` (lists, with those refused before), in the
    role its city has in the trip (别落大兴 flying to 北京: not_arr_place), or the role the words say (从/落)."""
    for place in refused:
        city = gaz.places[place][0]
        if city == dep != arr:
            key = "not_dep_place"
        elif city == arr != dep or (ARRIVING.search(text) and not LEAVING.search(text)):
            key = "not_arr_place"
        elif LEAVING.search(text) and not ARRIVING.search(text):
            key = "not_dep_place"
        else:
            continue
        before = [str(v) for v in [*listed(ctx.state.get(key)), *listed(slots.get(key))]]
        slots[key] = list(dict.fromkeys([*before, place]))
        if slots.get(key.removeprefix("not_")) == place:
            slots.pop(key.removeprefix("not_"))


def _sound(place: str, city: str) -> str | None:
    """How an airport or station is said in English (Daxing, Hankou, Beijing West), as a pattern; None if by city."""
    core = place.removesuffix("机场").removesuffix("站").removeprefix(city) or place
    if core in SIDES:  # 北京西站: Beijing West (station)
        return r"\s?".join(_char_pinyin(c) for c in city) + rf"\s+{SIDES[core]}"
    if len(core) >= 2:
        return r"\s?".join(_char_pinyin(c) for c in core) + (r"|capital" if place == "首都机场" else "")
    return None


def _english_places(
    slots: JSONDict,
    text: str,
    gaz: Gazetteer,
    domain: str,
    dep: object,
    arr: object,
    refused: list[str] = (),  # type: ignore[assignment]
) -> None:
    """from Beijing Daxing to Chengdu Shuangliu / arriving at Hongqiao station: airports and stations in pinyin
    (none refused: not Hankou)."""
    lower = text.lower()
    kind = "station" if domain == "train" or re.search(r"\bstation\b", lower) else "airport"
    for place, (city, place_kind) in gaz.places.items():
        sound = _sound(place, city)
        core = place.removesuffix("机场").removesuffix("站").removeprefix(city) or place
        said = sound is not None and re.search(rf"\b(?:{sound})\b", lower)
        if place_kind != kind or not said or core in gaz.cities or place in refused:
            continue
        key = "dep_place" if city == dep else "arr_place" if city == arr else None
        if key is not None:
            slots.setdefault(key, place)


def _place_names(gaz: Gazetteer, domain: str | None = None) -> dict[str, str]:
    """Each airport and station by its full name and its short one (大兴, 汉口), to the full name; a short name
    that an airport and a station share (虹桥) names the kind the trip uses."""
    names = {place: place for place in gaz.places}
    names.update(_short_airports(gaz))
    for place, (_city, kind) in gaz.places.items():
        core = place.removesuffix("站")
        if kind == "station" and core != place and len(core) >= 2 and core not in gaz.cities:
            names.setdefault(core, place)
    kind_used = {"flight": "airport", "train": "station"}.get(domain or "")
    for place, (city, kind) in gaz.places.items():
        core = place.removesuffix("机场").removesuffix("站").removeprefix(city)
        if kind == kind_used and len(core) >= 2 and core not in gaz.cities and core not in gaz.districts:
            names[core] = place
    return names


EN_REFUSED = (
    r"\b(?:not|no|avoid|except|anything but|other than|(?:do not|don't) (?:land|arrive|fly|go|leave|depart)\s+"
    r"(?:at|in|into|to|from))\s+(?:at\s+|to\s+|into\s+|from\s+|in\s+)?(?:the\s+)?(?:{p})\b"
)


def _refused_en(text: str, gaz: Gazetteer, domain: str | None) -> list[str]:
    """The places an English turn refuses (not Hankou / avoid Daxing / don't land at Pudong), by full name: of the
    kind the trip uses when an airport and a station sound alike."""
    lower = text.lower()
    kind_used = {"flight": "airport", "train": "station"}.get(domain or "")
    found: list[str] = []
    for place, (city, _kind) in sorted(gaz.places.items(), key=lambda kv: kv[1][1] != kind_used):
        sound = _sound(place, city)
        if (
            sound
            and re.search(EN_REFUSED.format(p=sound), lower)
            and not any(gaz.places[f][0] == city and _sound(f, city) == sound for f in found)
        ):
            found.append(place)
    return found


def _refused(text: str, names: Mapping[str, str]) -> list[str]:
    """The places ``text`` refuses, by full name."""
    found: list[str] = []
    for name in sorted(names, key=len, reverse=True):
        pattern = re.escape(name)
        said = re.search(REFUSED_BEFORE.format(p=pattern), text) or re.search(REFUSED_AFTER.format(p=pattern), text)
        if said and names[name] not in found:
            found.append(names[name])
    return found


def _other(place: str, gaz: Gazetteer) -> str | None:
    """The one other airport (station) of the place's city, or None when it has none or several."""
    city, kind = gaz.places[place]
    others = [p for p, (c, k) in gaz.places.items() if c == city and k == kind and p != place]
    return others[0] if len(others) == 1 else None
