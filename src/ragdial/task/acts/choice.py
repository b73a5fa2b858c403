"""Choosing among the offers listed: by ordinal, relative word, code, time, price, name or feature."""

from __future__ import annotations

import re

from ragdial.jsontypes import JSONDict
from ragdial.task.acts.context import Context
from ragdial.task.acts.finders import (
    CLOCK_RANGE,
    _airline_of,
    _berths_of,
    _brand_of,
    _classes_of,
    _clock,
    _code_of,
    _district_of,
)
from ragdial.task.acts.words import ORDINAL, RELATIVE, RELATIVE_FEATURE
from ragdial.task.db import Gazetteer
from ragdial.task.slots import NUM, canonical, cn_number
from ragdial.task.values import as_int

# a comment on the offers' time, which asks for other ones: 出发时间有点早 / 太晚了点 / that's a bit early
_SOMEWHAT = "(有点|有些|太|稍微|略|偏)"
_TIME = "出发|起飞|发车|时间"
_ENGLISH = "(a bit|a little|too|rather)"
COMMENTS = (
    (rf"(({_TIME}).{{0,3}}{_SOMEWHAT}早|早了点|{_SOMEWHAT}早了?[啊呀吧点]*$|{_ENGLISH} early)", "later"),
    (rf"(({_TIME}).{{0,3}}{_SOMEWHAT}晚|晚了点|{_SOMEWHAT}晚了?[啊呀吧点]*$|{_ENGLISH} late\b)", "earlier"),
)


def _past_comment(kind: str, ctx: Context) -> JSONDict:
    """A later departure than the earliest offered (or an earlier one than the latest) for a comment on the time."""
    times = sorted(str(o["dep_time"]) for o in ctx.offers if o.get("dep_time"))
    slots: JSONDict = {"relative": kind}
    if kind == "later" and times:
        hour, minute = map(int, times[0].split(":"))
        total = hour * 60 + minute + 1
        slots["time_from"] = f"{total // 60:02d}:{total % 60:02d}"
    elif kind == "earlier" and times:
        slots["time_to"] = times[-1]
    return slots


def _relative(text: str, ctx: Context, question: bool) -> tuple[str, JSONDict] | None:
    """A relative preference against the offers on the table. Choosing among listed offers (便宜点的那个) is a
    ``select`` by feature; asking for one beyond them, or against the offer read back (有没有便宜点的？), is a
    ``modify`` with the bound it implies (``relative`` names it, so the manager can say when nothing is left)."""
    oq = ctx.open_question
    if oq not in ("choose_offer", "confirm_booking", "offer_alternative") or not ctx.offers:
        return None
    if re.search(r"(没关系|无所谓|也行|也可以|都行|不要紧|not a problem|don't mind)", text):
        return None
    comment = next((k for pattern, k in COMMENTS if re.search(pattern, text, re.I)), None)
    if (
        comment is not None
        and ctx.domain in ("flight", "train")
        and not question
        and not re.search(r"(是不是|吗|么)", text)
        and not ORDINAL.search(text)  # (第一个太早了: that one refused, see classify)
    ):
        return "modify", _past_comment(comment, ctx)  # 出发时间有点早 / a bit early: the one after it, not out of scope
    kind = next((k for pattern, k in RELATIVE if re.search(pattern, text, re.I)), None)
    if kind is None or re.search(r"(最便宜|最贵|最早|最晚|最好)", text):
        return None
    beyond = question or bool(
        re.search(r"(有没有|还有|有.{0,3}吗|能不能|可以.{0,3}吗|换个|换一个|再找|再查|any|is there)", text)
    )
    if oq == "choose_offer" and len(ctx.offers) > 1 and not beyond:
        return "select", {"feature": RELATIVE_FEATURE[kind]}
    prices = [as_int(o["price"]) for o in ctx.offers if o.get("price") is not None]
    times = sorted(str(o["dep_time"]) for o in ctx.offers if o.get("dep_time"))
    stars = [as_int(o["stars"]) for o in ctx.offers if o.get("stars")]
    slots: JSONDict = {"relative": kind}
    if kind == "cheaper" and prices:
        slots["max_price"] = min(prices) - 1
    elif kind == "pricier" and stars and ctx.domain == "hotel" and re.search(r"(好|档次|星)", text):
        slots["min_stars"] = max(stars) + 1
    elif kind == "pricier" and prices:
        slots["min_price"] = max(prices) + 1
    elif kind == "earlier" and times:
        slots["time_to"] = times[0]
    elif kind == "later" and times:
        hour, minute = map(int, times[-1].split(":"))
        total = hour * 60 + minute + 1
        slots["time_from"] = f"{total // 60:02d}:{total % 60:02d}"
    else:
        return None
    return "modify", slots


def _is_choice(ref: JSONDict, text: str, ctx: Context) -> bool:
    """Whether reference slots pick among the offers: a class or berth no offer has, or said with 换/改/还是,
    is a new constraint (换软卧), not a choice."""
    if re.search(r"(听说|据说|老是|经常|总是|晚点|误点|延误|准点|准时吗)", text):
        return False  # 听说那趟11点多的车老是晚点: talk about a train, no choice of it
    if set(ref) - {"seat_class", "berth", "airline", "district", "brand"}:
        return True
    if re.search(r"(换|改|还是|没有就|太贵|太慢|有没有|有吗|还有|有.{0,6}吗|[从到飞去](?=[\u4e00-\u9fff]{2}))", text):
        return False  # 换软卧 / 成都飞上海的经济舱有没有: a request said again or changed, not a choice
    for key, value in ref.items():
        if not any(offer.get(key) == value for offer in ctx.offers):
            return key in ("airline", "district", "brand")
    # 高铁二等座 when every listed train is 二等座: the request said again, not a choice
    return len(ctx.offers) <= 1 or not all(all(o.get(k) == v for k, v in ref.items()) for o in ctx.offers)


NOT_AN_OFFER = "[天次回遍年名晚周批步街层楼章条节轮季期届代站]"  # 第一次 / 第三街: an ordinal of something else
FEATURES = (
    (r"最便宜|最低价|便宜的那|便宜那|挑\s*(个|一个|一家|一班|一趟)?\s*(便宜|价格低|价钱低)|cheapest", "cheapest"),
    (r"最贵|most expensive", "most_expensive"),
    (r"最早|earliest", "earliest"),
    (r"最晚|最迟|latest", "latest"),
    (r"最快|时间最短|用时最短|fastest", "fastest"),
    (
        r"最好(?!是|能|要|在|别|不|有|还是)|星级最高|星最高|档次最高|best|highest[- ]rated|top[- ]rated",
        "best",
    ),  # (最好是上午的: no choice)
)
# a choice said before any option is listed: 要最晚的那班 / 星级最高的 / 挑最便宜的 / the cheapest one
UP_FRONT = re.compile(
    r"(挑|选|要|订|给我|就)?\s*(个|一个|一家|一班|一趟)?\s*(最便宜|最低价|最贵|最早|最晚|最迟|最快|最好|星级最高|星最高|档次最高)"
    r"\s*的?\s*(那个|那班|那趟|那家|一个|一班|一趟|一家|就行|就好|就可以|吧|$)"
    r"|\b(the )?(cheapest|earliest|latest|fastest) one\b"
    r"|挑\s*(个|一个|一家|一班|一趟)?\s*(便宜|价格低|价钱低)(的|点的|一点的)"
    r"|\bthe (cheapest|earliest|latest|fastest|best|highest[- ]rated|best[- ]rated|top[- ]rated)\s*"
    r"(one|train|flight|hotel|departure|option|place)?\b"
)


def _feature_of(lower: str) -> str | None:
    """The feature a superlative names (最便宜 → cheapest, 星级最高 → best), or None."""
    return next((feature for pattern, feature in FEATURES if re.search(pattern, lower)), None)


def up_front_choice(text: str) -> str | None:
    """The feature of a choice said before the options come (挑最便宜的 / 要最晚的那班), or None (最便宜的多少钱
    asks a question)."""
    lower = text.lower()
    if not UP_FRONT.search(lower) or re.search(r"(吗|呢|多少|几点|？|\?)", lower):
        return None
    return _feature_of(lower)


def _listed_time(clock: str, ctx: Context, loose: str | None, pm_too: bool) -> str:
    """The listed departure a loosely said time means: 八点半那趟 for the 08:35 (the one listed offer within ten
    minutes), 两点多那班 for the 14:25 (the one in that hour); the time as said when none or several fit. A time said
    without 上午/下午 may be the afternoon or evening one (8点25那趟 for 20:25)."""
    times = sorted({str(o["dep_time"]) for o in ctx.offers if o.get("dep_time")})
    if not times or clock in times:
        return clock

    def minutes(t: str) -> int:
        hour, minute = map(int, t.split(":"))
        return hour * 60 + minute

    said = [minutes(clock)] + ([minutes(clock) + 720] if pm_too and minutes(clock) < 720 else [])
    exact = [t for t in times if minutes(t) in said]
    if len(exact) == 1 and loose != "多":
        return exact[0]  # 8点25那趟 for the 20:25, though an 08:35 is listed too
    for at in said:
        if loose == "多":
            near = [t for t in times if at <= minutes(t) < at + 60 - at % 60]
        else:
            near = [t for t in times if abs(minutes(t) - at) <= (60 if loose == "左右" else 10)]
        if len(near) == 1:
            return near[0]
    return clock


def _reference(text: str, ctx: Context, gaz: Gazetteer, english: bool, asking: set[str] | None = None) -> JSONDict:
    """Reference slots naming one of the listed offers (ordinal, code, brand, price, time, feature, this)."""
    asking = asking or set()
    lower = text.lower()
    ref: JSONDict = {}
    heard = canonical(text)
    m = re.search(rf"第\s*({NUM})\s*(?:个|趟|班|家|项|种|张)?(?!{NOT_AN_OFFER})", text) or re.search(
        rf"第\s*({NUM})\s*(?:个|趟|班|家)", heard
    )
    if m:
        ref["ordinal"] = cn_number(m.group(1))
    elif re.search(r"(最后一个|最后那个|最后一家|最后那家|最后一趟|最后那趟|最后那班|最后一班|the last)", lower):
        ref["ordinal"] = -1
    elif re.search(r"中间(那|的|一)(个|趟|班|家)", text) and len(ctx.offers) % 2 == 1:
        ref["ordinal"] = (len(ctx.offers) + 1) // 2
    else:
        m = re.fullmatch(r"(?:选|要|订|就)?\s*([1-9一二三四五])\s*(?:号)?(?:吧|的|那个)?", text) or re.search(
            r"\b(first|second|third|fourth|1st|2nd|3rd|4th)\b(?! class)", lower
        )
        ordinals = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}
        number = m and (ordinals.get(m.group(1)) or cn_number(m.group(1)))
        if number and not ("号" in text and number > len(ctx.offers)):  # (那就8号吧 with 3 listed: a day)
            ref["ordinal"] = number
    code = _code_of(text)
    if code:
        ref["code"] = code
    if "brand" not in asking:
        brand = _brand_of(text, gaz)
        if brand:
            ref["brand"] = brand
    if "district" not in asking and ctx.domain == "hotel":
        district = _district_of(text, gaz, None)
        if district and (not asking or not ref):
            ref["district"] = district
    if "airline" not in asking:
        airline = _airline_of(text, gaz)
        if airline:
            ref["airline"] = airline
    if "seat_class" not in asking:
        classes = [c for c in _classes_of(text, english) if c not in ("卧铺", "business", "first")]
        if classes:
            ref["seat_class"] = classes[0]
    berth = _berths_of(text, english)
    if berth and "berth" not in asking and isinstance(berth, str):
        ref["berth"] = berth
    feature = _feature_of(lower)
    if feature:
        ref["feature"] = feature
    if not ref.get("code") and not CLOCK_RANGE.search(text):  # (下午3点到6点 is a window, no offer's time)
        m = re.search(r"(\d{1,2})[:：](\d{2})\s*(am|pm)?", text, re.I)
        clock = None
        if m:
            pm = (m.group(3) or "").lower() == "pm" and int(m.group(1)) < 12
            clock = f"{int(m.group(1)) + (12 if pm else 0):02d}:{m.group(2)}"
            clock = _listed_time(clock, ctx, None, pm_too=m.group(3) is None)  # the 2:30 one: the 14:30 listed
        else:
            m = re.search(
                rf"(凌晨|早上|上午|中午|下午|傍晚|晚上)?\s*({NUM})\s*点\s*(半|一刻|三刻|({NUM})\s*分?)?(多|左右)?"
                r"(?=的|那|$|吧|班|趟|个)",
                text,
            )
            if m:
                hour = cn_number(m.group(2)) or 0
                extra = m.group(3) or ""
                minute = {"半": 30, "一刻": 15, "三刻": 45}.get(extra)
                if minute is None:
                    minute = cn_number(m.group(4)) if m.group(4) else 0
                period = m.group(1)
                if (
                    period is None
                    and 1 <= hour <= 6
                    and any(str(o.get("dep_time", "")).startswith(f"{hour + 12:02d}") for o in ctx.offers)
                ):
                    period = "下午"
                clock = _clock(hour, minute or 0, period)
                clock = _listed_time(clock, ctx, loose=m.group(5), pm_too=m.group(1) is None)
        if clock:
            ref["dep_time"] = clock
    if "price" not in asking and not {"ordinal", "dep_time", "code"} & set(ref):
        m = re.search(rf"({NUM})\s*(?:块钱|块|元)?\s*(?:(?:一|每)\s*(?:晚|间|夜))?\s*(?:的|那)", text) or re.fullmatch(
            rf"(?:订|就|要)?\s*({NUM})\s*(?:块钱|块|元)?(?:吧)?", text
        )
        if m:
            value = cn_number(m.group(1))
            if value and (value >= 50 or any(o.get("price") == value for o in ctx.offers)):
                ref["price"] = value  # (订44那个: a low price that is listed)
    if (
        not ref
        and re.search(r"(就它|就这个|这个吧|就这家|这家|这趟|这班|就那个|that one|this one|^这个$|就这样)", lower)
        and not re.search(r"这个(座位|房间|酒店|航班)", text)
    ):
        ref["ref"] = "this"
    if (
        ref.get("ref") is None
        and re.search(r"(这趟|这班|这个$|这个[吗呢]|^这个|这家)", text)
        and asking
        and not any(k in ref for k in ("ordinal", "code", "brand", "airline", "feature"))
        and not re.search(r"这个(座位|房间)", text)
    ):
        ref["ref"] = "this"
    return ref
