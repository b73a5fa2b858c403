"""One clause, one act: the cue words checked in a fixed order, with the clause's slots."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

from ragdial.jsontypes import JSONDict
from ragdial.task.acts.aside import INCIDENTAL, _aside, _booking_domain, _has_constraints, _travel_request
from ragdial.task.acts.booked import _cancel_slots, _change_slots
from ragdial.task.acts.choice import COMMENTS, _is_choice, _reference, _relative
from ragdial.task.acts.constraints import _constraints, _request_slots
from ragdial.task.acts.context import Context, _Clause
from ragdial.task.acts.finders import (
    NEGATED_PERIOD,
    _airline_of,
    _brand_of,
    _brands_in,
    _code_of,
    _district_of,
    _domain_named,
    _exclusions,
    _people,
    _refused_time,
    code_domain,
)
from ragdial.task.acts.words import (
    ASK_BOOKING,
    CONFIRM,
    CONFIRM_START,
    CORRECTION,
    DENY,
    DENY_START,
    EXCLAIMED,
    FILLER,
    GREETING,
    NEGATED_CLASS,
    NEGATED_REQUEST,
    NONE_ASKED,
    OOS,
    ORDINAL,
    PERIOD_WORDS,
    THANKS,
    WINDOWS,
)
from ragdial.task.acts.yes import _asks
from ragdial.task.db import Gazetteer
from ragdial.task.slots import _pinyin, cn_number
from ragdial.task.values import listed

# a short refusal of what is offered (where a yes/no is expected): 不合适 / 这个时间不行 / 太早了不要 / 先别 / 没啥了
REFUSING = re.compile(
    r"(我|那|那我|我看|我看还是|还是|暂时|暂时先|这个|这|那个)?(这个|那个|这|时间|价格|太贵了|太早了|太晚了|太贵|太早|太晚)?"
    r"(不要|不用|不合适|不太合适|不太行|不行|先别|别了|别了别了|别|不考虑|不太想要|不想要|不太想|没啥了|没有|没有了|没了|没啥)"
    r"(这个|那个)?(了|吧|啊|哈)*"
)
# an offer named and refused: 滨江那个不要 / D5042不行 / G12太慢了 / 这班算了
REFUSED_REF = re.compile(r"(不要|不是|别要|不想要|不行|不考虑|算了|不合适|pass|太.{1,4}了|(有点|有些)(早|晚|贵|慢|远))")
# yes words by sound, for a yes heard with a homophone (可依 for 可以) where a yes/no is expected
YES_SOUNDS = {_pinyin(w) for w in ("可以", "好的", "对的", "行", "没问题", "确定", "确认", "是的", "没错", "对")}
# nothing more wanted, said after "anything else?" (就这些吧 / 先这样 / 够了)
ALL_DONE = re.compile(
    r"(那|那就|好|好的|行|嗯)?[，,\s]*(就这些|就这样|先这样|这样|这样就行|这样就好|这样就可以|够了|可以了|没别的|没其他的?|没什么了)"
    r"(了|吧|啊|哈|呢)*"
)
# taking a constraint back: 不限预算 / 预算不要了 / 多少钱都行 / 别的时间也行 / 时间放宽 / 全天的 / 几星都行
DROP_CUE = re.compile(
    r"(不限|不管|都行|都可以|都没关系|无所谓|随便|不要了|不用了|不要求|不讲究|放宽|去掉|不用管|全天|任何时间|什么时候都|"
    r"多少钱都|贵点也|贵一点也|别的时间也|其他时间也|哪天都|几点都|几星都|哪个区都|哪家都|什么舱都|什么座都|"
    r"any time|any price|no limit)",
    re.I,
)
DROP_FAMILIES = (
    (r"(预算|价格|价钱|价位|限价|多少钱|钱|贵|price|budget)", ("max_price", "min_price")),
    (r"(时间|时段|几点|全天|早晚|什么时候|早上|上午|中午|下午|晚上|time)", ("period", "time_from", "time_to")),
    (r"(星级|几星|星|档次)", ("stars", "min_stars")),
    (r"(哪个区|区域|地段|位置|区)", ("district",)),
    (r"(航空公司|航司|哪家航空)", ("airline",)),
    (r"(舱位|座位|座次|等级|什么舱|什么座|舱)", ("seat_class", "berth")),
    (r"(铺位|上下铺|铺)", ("berth",)),
    (r"(机场|车站|火车站|哪个站|airport|station)", ("dep_place", "arr_place")),
    (r"(车型|什么车|高铁动车|G字头|D字头)", ("train_kinds",)),
    (r"(品牌|牌子|哪家酒店|哪家)", ("brand",)),
)


def _drops(text: str, whole: str, ctx: Context, said: JSONDict, said_whole: Callable[[], JSONDict]) -> JSONDict | None:
    """Constraints the user takes back (slot -> None) among those the task under way has: named by the clause's
    own slot word, or the utterance's when the clause has none (预算，不限了); a family the clause gives a value
    for is kept (五星级多少钱都行 keeps the stars). {} when the words take back something not set; None when
    there is no such word."""
    if not ctx.domain or not DROP_CUE.search(text):
        return None
    for source in (text, whole):
        if source is whole:
            said = said_whole()
        families = [f for pattern, f in DROP_FAMILIES if re.search(pattern, source, re.I) and not set(f) & set(said)]
        if families:
            return {k: None for f in families for k in f if ctx.state.get(k) not in (None, "", [])}
    return None


def _unexcluded(text: str, ctx: Context, gaz: Gazetteer) -> bool:
    """Whether ``text`` says a brand or airline excluded before is fine after all (国航也行)."""
    if not re.search(r"(也行|也可以|也成|也没问题|也没关系|也无所谓)", text):
        return False
    said = {b for _s, _e, b in _brands_in(text, gaz)} | {_airline_of(text, gaz)}
    return bool(said & {str(v) for v in listed(ctx.state.get("not_brand")) + listed(ctx.state.get("not_airline"))})


def _hotelish(text: str, ctx: Context, gaz: Gazetteer, english: bool) -> bool:
    """Whether constraints without a domain word are about a hotel."""
    whole_domain = _domain_named(text, english)
    return whole_domain == "hotel" or (
        whole_domain is None
        and (
            (ctx.domain == "hotel" and ctx.open_question not in ("anything_else",))
            or bool(
                re.search(
                    r"(入住|退房|住\S{0,3}晚|住\S{0,3}(?:礼拜|星期|周)(?![一二三四五六日天])|住到|[0-9一二两三四五]\s*间|星级|五星|四星|三星|[区]的?$)",
                    text,
                )
            )
            or (_district_of(text, gaz, None) is not None and not re.search(r"(到|飞|去)", text))
            or (_brand_of(text, gaz) is not None and not re.search(r"(飞|到|去|机票|航班|火车|高铁|动车)", text))
        )
    )


def _classify(
    clause: _Clause,
    ctx: Context,
    gaz: Gazetteer,
    today: dt.date,
    english: bool,
    hotelish: bool,
    confirmed: bool,
    first: bool,
    extra: tuple[list[str], str | None, bool] = ([], None, False),
    whole: str = "",
) -> tuple[str | None, JSONDict]:
    text = FILLER.sub("", clause.text).strip() or clause.text
    lower = text.lower()
    greeted = GREETING.fullmatch(text.replace(" ", "")) and re.search(
        r"(好|hello|hi|hey|哈喽|哈罗|嗨|喂|在|有人|早安|午安|哈啰|早)", lower
    )
    if greeted or re.fullmatch(r"(hello|hi|hey|good (morning|afternoon|evening))( there)?[!.~]*", lower):
        return "greeting", {}
    if re.fullmatch(r"no,?\s*thanks?( you)?", lower):
        return "deny", {}
    if (
        THANKS.search(text)
        and len(
            re.sub(
                r"(谢谢|谢啦|谢了|感谢|多谢|辛苦了?|麻烦你了|麻烦了|拜拜|再见|回头见|好嘞|好的|好|嗯|ok|thanks?|thx|ty|you|bye|"
                r"a lot|so much|very much|"
                r"3q|886|88|非常|太|真是|真|你|您|啦|啊|呀|哈|哦|了|的|啦|小助手|没事了|就这样|!|！|~|，|,|。|\s)",
                "",
                lower,
            )
        )
        <= 1
    ):
        return "thanks", {}
    if ctx.open_question == "anything_else" and ctx.domain and ALL_DONE.fullmatch(text):
        return "deny", {}  # 就这些吧 / 先这样 after "anything else?": nothing more
    cancel = _cancel_slots(text, ctx)
    if cancel is not None:
        return "cancel_booking", cancel
    change = _change_slots(text, ctx, gaz, today, english)
    if change is not None:
        return "change_booking", change
    if ASK_BOOKING.search(text) and not re.search(r"(帮我订|我要订|我想订|给我订|把.{1,24}订上)", text):
        return "ask_about_booking", _booking_domain(text)
    if (
        ctx.open_question in ("offer_alternative", "change")
        and NONE_ASKED.search(text)
        and (clause.question or re.search(r"(吗|么|啊|呀|嘛|呢)$", text))
    ):
        return "request", {"availability": "?"}  # 上午的一班都没有吗？ (the search said none): asked, not out of scope
    if (_exclusions(text, gaz, english)[0] or _unexcluded(text, ctx, gaz)) and not OOS.search(text):
        # 不要如家 / 除了汉庭都行 / 国航的也不要: a brand, airline or train kind not wanted is a constraint, no refusal
        said = _constraints(text, ctx, gaz, today, english, hotelish, *extra)
        if said:
            return "inform", said
    if not english and ctx.domain in ("flight", "train", None) and _refused_time(text)[2]:
        said = _constraints(text, ctx, gaz, today, english, hotelish, *extra)  # 七点多那种太早的不要: a bound
        if said.get("time_from") or said.get("time_to"):
            return "inform", said
    if OOS.search(text) and not _travel_request(text):
        return "out_of_scope", {}
    if re.fullmatch(r"[\d\s]{5,}", text):
        return "out_of_scope", {}
    relative = _relative(text, ctx, clause.question)
    if relative is not None:
        kind, found = relative
        if kind == "modify" and not any(re.search(p, text, re.I) for p, _k in COMMENTS):
            # 那晚上的有没有更便宜的: the window said comes with the bound (not "early" in "a bit early")
            said = _constraints(text, ctx, gaz, today, english, hotelish, *extra)
            found = {**{k: v for k, v in said.items() if k not in found and k != "max_price"}, **found}
        return kind, found
    said = _constraints(text, ctx, gaz, today, english, hotelish, *extra) if DROP_CUE.search(text) else {}
    drops = _drops(
        text, whole or text, ctx, said, lambda: _constraints(whole or text, ctx, gaz, today, english, hotelish, *extra)
    )
    if drops is not None:  # 不限预算 / 别的时间也行 / 五星级多少钱都行: taken back, the others said are kept
        return ("modify" if drops else "inform"), {**drops, **said}
    request = _request_slots(text, ctx, gaz, english)
    if request is not None:
        return "request", request
    oq = ctx.open_question
    deny = (
        DENY.fullmatch(text)
        or (DENY_START.match(text) and not _has_constraints(text, gaz, english) and not NEGATED_CLASS.search(text))
        or NEGATED_REQUEST.fullmatch(text)
    )
    if deny and oq in ("choose_cancel", "choose_change"):
        return "deny", {}
    if deny and oq in ("confirm_booking", "offer_alternative", "anything_else", "choose_offer", None) and ctx.domain:
        return "deny", {}
    if CORRECTION.fullmatch(text.strip("，,。 ")):
        return "deny", {}
    asking = _asks(text, clause.question)
    if oq == "confirm_booking":  # 第二个 during a read-back: another listed offer is read back (no yes yet)
        m = ORDINAL.search(text)
        word = m and (m.group(1) or m.group(2) or m.group(3))
        ordinal = word and (
            {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}.get(word.lower()) or cn_number(word)
        )
        if ordinal:
            return "select", {"ordinal": ordinal}
        ref = _reference(text, ctx, gaz, english)
        said = {k: v for k, v in ref.items() if k in ("code", "dep_time")}
        other = {
            k: v for k, v in ref.items() if k in ("seat_class", "berth") and all(o.get(k) != v for o in ctx.offers)
        }
        if said and REFUSED_REF.search(text):
            return None, {}  # D5042不行，就G6110吧: the offer refused is no choice (the one said next is)
        if said and not asking and any(all(o.get(k) == v for k, v in said.items()) for o in ctx.offers):
            return "select", {**said, **other}  # "MU3999" again during its read-back: the same offer, no yes
            # (同一趟T665的软卧下铺呢 while its 硬卧上铺 is read back: that train in the class said)
        named = _code_of(text)
        if named and ctx.domain and code_domain(named) == ctx.domain and not asking:
            narrowed = {k: v for k, v in ref.items() if k in ("seat_class", "berth")}
            return "select", {"code": named, **narrowed}  # 确认预订，CZ5491 while HU9138 is read back: that one
    code = _code_of(text)
    if code and ctx.domain and code_domain(code) != ctx.domain:
        # 先把G4990二等座订了 while hotels are listed: a request for that train, not a choice among the hotels
        said = _constraints(text, ctx, gaz, today, english, False, *extra)
        said = {k: v for k, v in said.items() if k not in ("city", "nights", "rooms", "stars", "min_stars")}
        return "inform", {**said, "domain": code_domain(code), "code": code}
    if oq in ("choose_offer", "offer_alternative") and ctx.offers:
        ref = _reference(text, ctx, gaz, english)
        if oq == "offer_alternative" and not set(ref) - {"district", "brand", "seat_class", "berth", "airline"}:
            ref = {}  # naming a district or class again while an alternative is offered restates the request
        refused_ordinal = ORDINAL.search(text) and re.search(
            r"(太.{1,4}了|(有点|有些)(早|晚|贵|慢|远)|不要|不行|算了|不考虑)[啊吧呀了]*$", text
        )
        if ref and REFUSED_REF.search(text) and (not ORDINAL.search(text) or refused_ordinal):
            return None, {}  # 滨江那个不要: what is not wanted is no choice
        if ref and _is_choice(ref, text, ctx):
            return ("reference" if clause.question else "select"), ref
    if (oq in ("confirm_booking", "offer_alternative") or (confirmed is False and oq == "choose_offer")) and (
        CONFIRM.fullmatch(text) or (oq == "offer_alternative" and CONFIRM_START.match(text))
    ):
        if asking:  # "确定？" / "ok?" / "好不好": a question about the offer, not a yes
            return ("request" if oq != "choose_offer" else None), {}
        if oq == "choose_offer":
            if re.search(r"(订吧|确定|确认|订$|book it|就订)", text):
                return "confirm", {}
            return None, {}
        return "confirm", {}
    if oq == "choose_offer" and confirmed and CONFIRM.fullmatch(text) and not re.fullmatch(r"[嗯恩哦啊额呃]+", text):
        return "confirm", {}  # 第一个，没问题，下单 / 就浦东那个，行: a yes after the choice
    if oq == "choose_offer" and re.search(r"(订吧|确定|确认|book it)", text) and CONFIRM.fullmatch(text) and not asking:
        return "confirm", {}
    if oq in ("confirm_booking",) and re.fullmatch(r"(就这个|就它|这个|就这家|就这趟)(吧|了)?", text) and not asking:
        return "confirm", {}
    refusal = NEGATED_PERIOD.match(text)
    if refusal and ctx.domain in ("flight", "train"):
        refused = PERIOD_WORDS.get(refusal.group(1) or refusal.group(2) or "")
        if oq == "offer_alternative":
            return "deny", {}  # 下午不行 when flights in the afternoon are offered instead
        if refused and ctx.state.get("period") == refused:
            return "modify", {"period": None}
        bounded = {k: ctx.state[k] for k in ("period", "time_from", "time_to") if ctx.state.get(k)}
        if refused in WINDOWS and not bounded:  # 上午不行 with no window asked: departures outside it
            start, end = WINDOWS[refused]
            if start <= "06:00":
                return "modify", {"time_from": end}
            if end >= "24:00":
                return "modify", {"time_to": start}
        return None, {}
    slots = _constraints(text, ctx, gaz, today, english, hotelish, *extra)
    if slots and not english and not _people(text) and _aside(text, gaz, set(slots) <= INCIDENTAL):
        return "out_of_scope", {}  # 我下周一要去体检 / 明天是周三吧: a date or city said in passing changes nothing
    if slots:
        return "inform", slots
    if oq in ("confirm_booking", "offer_alternative") and CONFIRM_START.match(text) and not asking:
        return "confirm", {}
    if (
        oq in ("confirm_booking", "offer_alternative")
        and asking
        and len(text) <= 16
        and re.match(r"(好|行|可|对|是|确|嗯|恩|ok|yes|妥|没问题|没毛病|没错|就|真|sure|right|correct|is|are)", lower)
    ):
        return "request", {}  # 是吗 / 就这个吗 / 真的吗 / is that right?: checked, not agreed
    # no cue word known: a short clause with no slots read by its polarity where a yes/no is expected
    if oq in ("confirm_booking", "offer_alternative", "anything_else") and len(text) <= 8 and not clause.question:
        numbers = re.search(r"[0-9零一二两三四五六七八九十间张晚号点]", text)
        if re.match(r"(不要|不用|不订|别订|算了|取消|不了|没有了|没了|不需要|不想|no\b|nope|cancel)", lower) and not (
            NEGATED_CLASS.search(text)
        ):
            return "deny", {}
        if REFUSING.fullmatch(text):  # 我不要这个 / 这个时间不行 / 不太想要 / 先别: a no
            return "deny", {}
        if (
            oq != "anything_else"
            and len(text) <= 4
            and not numbers
            and not asking
            and (
                re.match(rf"(好{EXCLAIMED}|行|可以|对|是|确|嗯|恩|ok|yes|妥|没问题|没毛病|没错)", lower)
                or _pinyin(text.rstrip("吧啊呀了哈")) in YES_SOUNDS
            )
        ):
            return "confirm", {}  # (可依 / 确腚: a yes word heard by sound)
    return None, {}
