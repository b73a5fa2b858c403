"""Acts after classification: neighbours with the same act joined, redundant ones dropped."""

from __future__ import annotations

import re

from ragdial.jsontypes import JSONDict
from ragdial.task.acts.context import Act, Context


def _trip_and_stay(one: JSONDict, other: JSONDict) -> bool:
    """Whether ``one`` is a stay (a hotel said) and ``other`` a trip between two cities: two requests."""
    return (
        one.get("domain") == "hotel"
        and other.get("domain") in (None, "flight", "train")
        and ("dep_city" in other and "arr_city" in other)
    )


def _post(acts: list[Act], ctx: Context, raw: str) -> list[Act]:
    """Join neighbouring clauses with the same act; drop what the acts around a clause make redundant."""
    names = [a.act for a in acts]
    # "不对，是从天津出发" / "一张，哦不对，两张": a correction with its replacement is a modification, not a refusal
    if (
        "deny" in names
        and ("modify" in names or "inform" in names)
        and re.search(r"(不对|不是|错了|说错)", raw)
        and not re.search(r"(不订|不要|取消|太贵)", raw)
    ):
        acts = [a for a in acts if a.act != "deny"]
    out: list[Act] = []
    for act in acts:
        prev = out[-1] if out else None
        if (
            prev
            and prev.act == act.act
            and act.act
            in (
                "inform",
                "modify",
                "out_of_scope",
                "greeting",
                "thanks",
                "confirm",
                "deny",
                "select",
                "ask_about_booking",
                "cancel_booking",
                "change_booking",
            )
        ):
            clash = act.act == "inform" and (
                ("domain" in act.slots and "domain" in prev.slots and act.slots["domain"] != prev.slots["domain"])
                or _trip_and_stay(prev.slots, act.slots)
                or _trip_and_stay(act.slots, prev.slots)
            )
            if not clash:
                prev.clause = "，".join(c for c in (prev.clause, act.clause) if c)
                for key, value in act.slots.items():
                    known = prev.slots.get(key)
                    if act.corrects and value is not None and key != "domain":
                        prev.slots[key] = value  # 两张——哦不对，三张 / 不是后天，是周五: the corrected value
                    elif isinstance(known, list) and not isinstance(value, list) and value in known:
                        prev.slots[key] = value  # 卧铺，软卧下铺: the narrower value said after
                    elif key.startswith("not_") and isinstance(known, list) and isinstance(value, list):
                        prev.slots[key] = [*known, *(v for v in value if v not in known)]  # 二星不要，五星也不要
                    elif key == "train_kinds" and isinstance(known, list) and isinstance(value, list):
                        either = sorted({*map(str, known), *map(str, value)}, key="GDZTK".find)
                        prev.slots[key] = either  # 动车也行…高铁有吗
                    elif key in prev.slots and known is None and value is not None:
                        prev.slots[key] = value  # 下午的不行，我得上午走: the window said replaces the one refused
                    else:
                        prev.slots.setdefault(key, value)
                continue
        out.append(act)
    # "我想改签，改到后天下午": the new values said next to a change of a booking belong to it
    if any(a.act == "change_booking" for a in out):
        change = next(a for a in out if a.act == "change_booking")
        for a in out:
            if a.act in ("inform", "modify"):
                for key, value in a.slots.items():
                    if key != "domain" or "domain" not in change.slots:
                        change.slots.setdefault(key, value)
        out = [a for a in out if a.act not in ("inform", "modify")]
    # "明天去杭州，帮我订西湖区的酒店": the place one goes to is the hotel's city
    for a in out:
        if a.act == "inform" and a.slots.get("domain") == "hotel" and "city" not in a.slots and a.slots.get("arr_city"):
            a.slots["city"] = a.slots.pop("arr_city")
            for key in ("dep_city", "dep_place", "arr_place"):
                a.slots.pop(key, None)
    # "就三点五十那趟，二等座": a class or berth said next to a choice narrows the choice
    if ctx.open_question in ("choose_offer", "offer_alternative") and any(a.act == "select" for a in out):
        choice = next(a for a in out if a.act == "select")
        for a in out:
            narrows = a.act in ("inform", "modify") and a.slots and set(a.slots) <= {"seat_class", "berth"}
            if narrows and all(isinstance(v, str) for v in a.slots.values()):
                for key, value in a.slots.items():
                    choice.slots.setdefault(key, value)
                a.slots = {}
    # accepting a suggestion restates it: the restatement is not a new constraint
    if ctx.open_question == "offer_alternative" and out and out[0].act == "confirm":
        out = [out[0]] + [a for a in out[1:] if a.act not in ("inform", "modify") or _beyond_suggestion(a, ctx)]
    # "哈尔滨的宾馆 道里附近，住两晚": a district, brand or class inside a request is a constraint, not a choice
    if any(a.act in ("inform", "modify") and a.slots for a in out):
        attribute_only = {"district", "brand", "seat_class", "berth", "airline"}
        target = next(a for a in out if a.act in ("inform", "modify") and a.slots)
        elsewhere = target.slots.get("domain") not in (None, ctx.domain)

        def joins(index: int, a: Act) -> bool:
            # "二等座，确定，然后订酒店": a class confirmed, or said before a request for another kind of
            # thing, chooses among the offers listed; it is no constraint of the new request
            confirmed = any(b.act == "confirm" for b in out[index + 1 :])
            return a.act == "select" and set(a.slots) <= attribute_only and not confirmed and not elsewhere

        for index, a in enumerate(out):
            if joins(index, a):
                for key, value in a.slots.items():
                    target.slots.setdefault(key, value)
        out = [a for index, a in enumerate(out) if not joins(index, a)]
    # "早上那个，9点20的": a time of day said with a choice describes the choice, it is no new window
    if ctx.open_question in ("choose_offer", "offer_alternative") and any(a.act == "select" for a in out):
        timing = {"period", "time_from", "time_to"}
        out = [
            a
            for a in out
            if a.act not in ("inform", "modify")
            or not set(a.slots) <= timing
            or any(v is None for v in a.slots.values())
        ]
    # "那就这样吧，不订了": "this one" followed by a refusal is no choice
    if any(a.act == "deny" for a in out):
        first_deny = next(i for i, a in enumerate(out) if a.act == "deny")
        out = [
            a for i, a in enumerate(out) if not (a.act == "select" and a.slots == {"ref": "this"} and i < first_deny)
        ]
    # a select then a bare "this" select is one choice
    if len(out) > 1 and out[0].act == "select":
        merged = [out[0]]
        for a in out[1:]:
            if a.act == "select":
                continue
            merged.append(a)
        out = merged
    # a domain said again while answering within the same task labels nothing
    return [a for a in out if a.act not in ("inform", "modify") or a.slots]


def _beyond_suggestion(act: Act, ctx: Context) -> bool:
    sugg = ctx.suggestion or {}
    return any(
        (k not in sugg and k not in ("period", "max_price", "seat_class", "domain"))
        or (v is None and k not in sugg)
        or (k == "max_price" and v not in (sugg.get(k), ctx.state.get(k)))  # 行吧，1200以内的: a new budget
        for k, v in act.slots.items()
    )
