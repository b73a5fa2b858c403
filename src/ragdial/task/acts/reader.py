"""The act reader: one user turn -> its acts in order, with normalised slots."""

from __future__ import annotations

import datetime as dt
import re

from ragdial.jsontypes import JSONDict
from ragdial.task.acts.aside import ASIDE, _booking_domain, _has_constraints, _says_else
from ragdial.task.acts.booked import _cancel_slots, _change_slots, nights_to_check_out
from ragdial.task.acts.changes import plain_changes
from ragdial.task.acts.choice import COMMENTS, _reference, up_front_choice
from ragdial.task.acts.classify import _classify, _hotelish
from ragdial.task.acts.constraints import (
    BARE_WEEKDAY,
    RETURN_LEG,
    _after_outbound,
    _constraints,
    _purpose,
    _request_slots,
    _split_changes,
)
from ragdial.task.acts.context import Act, Context, _Clause
from ragdial.task.acts.finders import (
    ARRIVE_BY,
    CLOCK,
    PERIOD_SAID,
    _clock_of,
    _dates,
    _domain_named,
    _refused_time,
    parse,
)
from ragdial.task.acts.post import _post
from ragdial.task.acts.roles import place_roles
from ragdial.task.acts.text import _clauses, _is_english, _normalise
from ragdial.task.acts.words import ASKS, CONFIRM_START, FILLER, PERIOD_WORDS, REFERENCE
from ragdial.task.acts.yes import no_yes_in_questions, said_plainly
from ragdial.task.db import Gazetteer
from ragdial.task.orders import live_bookings
from ragdial.task.slots import _BY_SOUND, NUM, cn_number
from ragdial.task.values import text_or_none

HESITATION = re.compile(r"[嗯恩额呃唔啊哦噢]+[…\.。，,\s]*")
GIVING_UP = re.compile(r"(那|哎|唉|嗯)?算了(吧|啦)?[…\.。，,\s]*")


class Understander:
    """Reads user turns against one gazetteer and one 'today'."""

    def __init__(self, gazetteer: Gazetteer, today: dt.date) -> None:
        self.gaz = gazetteer
        self.today = today

    def __call__(self, text: str, context: Context | JSONDict | None = None) -> list[Act]:
        return understand(text, context, self.gaz, self.today)


def understand(
    text: str, context: Context | JSONDict | None, gaz: Gazetteer, today: dt.date, by_sound: bool = True
) -> list[Act]:
    """The acts of one user turn, in order, with slots normalised as in the utterance bank's README.

    ``by_sound=False`` switches off matching names and cue words by pinyin (the benchmark's ablation)."""
    token = _BY_SOUND.set(by_sound)
    try:
        ctx = context if isinstance(context, Context) else Context.from_dict(context)
        acts = plain_changes(_understand(text, ctx, gaz, today), text, ctx, gaz, today)
        return no_yes_in_questions(acts, text)
    finally:
        _BY_SOUND.reset(token)


def _understand(text: str, context: Context | JSONDict | None, gaz: Gazetteer, today: dt.date) -> list[Act]:
    ctx = context if isinstance(context, Context) else Context.from_dict(context)
    text = said_plainly(text, ctx)
    if ctx.open_question == "confirm_cancel":  # a yes/no is expected, as after a read-back
        live = live_bookings(ctx.bookings)
        domain = ctx.domain or (text_or_none(live[-1]["domain"]) if live else None)
        ctx = Context(domain, "confirm_booking", [], ctx.state, ctx.bookings, None)
    raw = text
    text = _leaving_the_hotel(_normalise(text, gaz), ctx)
    if not text or re.fullmatch(r"[\s\W_]*", text):
        return [Act("out_of_scope")]
    english = _is_english(text)
    clauses = [_Clause(t, q) for t, q in _clauses(text)]
    hotelish = _hotelish(text, ctx, gaz, english)
    fresh = ctx.open_question in (None, "anything_else") or not ctx.domain
    whole = parse(text, gaz, today)
    negated = list(whole.negated_cities)
    change_said = bool(re.search(r"(actually|instead|change|i mean|改成|换成|改到|换到|不对|不是)", text.lower()))
    base_date = (
        _dates(re.sub(r"(第二天|次日|隔天)", "", text), today, english, {}).get("date")
        if re.search(r"(第二天|次日|隔天)", text)
        else None
    )
    trip_said = (
        not english
        and len(clauses) > 1
        and (_domain_named(text, english) in ("flight", "train") or any(TRIP_CUE.search(c.text) for c in clauses))
    )
    acts: list[Act] = []
    staying = False
    event_day = any(_event_day(c.text, text) for c in clauses)
    confirmed = restated = False
    pending_ref: JSONDict = {}
    starts: list[int] = []  # where each clause's acts begin in ``acts``
    later = [
        i
        for i, c in enumerate(clauses)
        if i and LATER.fullmatch(FILLER.sub("", c.text).strip()) and _has_constraints(clauses[i - 1].text, gaz, english)
    ]
    for i, clause in enumerate(clauses):
        starts.append(len(acts))
        if i in later or i + 1 in later:  # 我25号还得回青岛，到时候再说: put off, nothing of the trip under way
            if i + 1 in later:
                acts.append(Act("out_of_scope"))
            continue
        if i < len(clauses) - 1 and ctx.open_question == "choose_offer" and BARE_VERB.fullmatch(clause.text):
            continue  # 订 ZH3627: the verb of the choice said next, no yes of its own
        if i < len(clauses) - 1 and HESITATION.fullmatch(clause.text):
            continue  # 嗯…不要了 / 嗯…再看看别的: a hesitation before the answer is no yes
        if (
            i < len(clauses) - 1
            and NOT_THIS.match(clause.text)
            and (re.match(INSTEAD, clauses[i + 1].text) or re.search(rf"{NUM}\s*[号日点]", clause.text))
        ):
            continue  # 不是后天，是周五 / 不是20号走！我们16号走: the value refused is none of the turn's
        stay = trip_said and _stay_clause(clause.text)  # …坐高铁去上海，到了在上海住两晚: this clause is the hotel
        staying = staying or stay
        more_stay = staying and not stay and not TRIP_CUE.search(clause.text)  # …住两晚，要玄武区的，四星
        extra = (negated, base_date, change_said)
        kind, slots = _classify(
            clause, ctx, gaz, today, english, hotelish or stay or more_stay, confirmed, i == 0, extra, text
        )
        if stay and kind in (None, "out_of_scope", "inform", "modify", "mixed"):
            kind, slots = "inform", _stay_slots(slots if kind in ("inform", "modify", "mixed") else {})
        elif more_stay and kind in ("inform", "modify", "mixed") and set(slots) & HOTEL_KEYS:
            kind, slots = "inform", _stay_slots(slots)
        elif staying and TRIP_CUE.search(clause.text):
            staying = False
        if kind in (None, "out_of_scope") and len(clauses) > 1 and not english:
            implied = _purpose(clause.text, text, gaz, today)  # 下周一上午十点我得在西安开会，从广州飞过去
            if implied:
                kind, slots = "inform", implied
        if kind in ("inform", "modify", "mixed") and "date" in slots and _event_day(clause.text, text):
            # 孩子20号在长沙有比赛，我们提前几天过去: the day of the match, not of the trip
            slots = {k: v for k, v in slots.items() if k != "date"}
            kind = kind if slots else "out_of_scope"
        if kind == "reference":
            pending_ref = slots
            continue
        if kind == "request" and pending_ref and not any(slots.get(k) not in (None, "?") for k in REFERENCE):
            slots = {**slots, **pending_ref}
        if kind is None:
            if (
                i == 0
                and len(clauses) > 1
                and not english
                and ctx.open_question not in ("confirm_booking", "offer_alternative", "confirm_cancel")
                and _says_else(FILLER.sub("", clause.text), gaz)
            ):
                acts.append(Act("out_of_scope"))  # 刚开完会，帮我看看…: an aside next to the request
            elif (
                i > 0
                and (clause.question or re.search(r"(吗|么|呢)$", clause.text))
                and not english
                and _says_else(clause.text, gaz)
            ):
                acts.append(Act("out_of_scope"))  # 行，确定。话说沙茶面哪家正宗？: an aside asked after the yes
            continue
        if (
            kind == "deny"
            and acts
            and acts[-1].act in ("inform", "modify")
            and acts[-1].slots
            and VALUE_REFUSED.fullmatch(FILLER.sub("", clause.text))
        ):
            continue  # 要上午的，不要中午 / 四星的就行，不用五星: the value refused next to the one wanted is no "no"
        if kind == "deny" and i < len(clauses) - 1 and GIVING_UP.fullmatch(clause.text):
            after = FILLER.sub("", clauses[i + 1].text)
            if ctx.open_question not in ("confirm_booking", "offer_alternative") or CONFIRM_START.match(after):
                continue  # 算了，确定吧 / 算了，查查机票 (while choosing): what follows 算了 is the answer
        if kind in ("confirm", "select"):
            confirmed = True
        if (
            kind in ("inform", "modify", "mixed")
            and acts
            and acts[-1].act == "out_of_scope"
            and set(slots) <= {"date", "period", "time_from", "time_to"}
            and not english
            and not re.search(r"(改|换|订|票|机|车|航班|酒店|宾馆|住|房|出发|回来|入住|退房)", clause.text)
        ):
            acts.append(
                Act("out_of_scope")
            )  # 滇池能看到海鸥吗，我14号想去看看: the aside goes on, its date is none of the task's
            continue
        back = _way_back(kind, slots, clause.text, acts)
        if back:  # 下周三从杭州飞厦门，周日再飞回来: the way back waits for the way out, on a day after it
            acts.append(Act("inform", {"return_leg": back}))
            continue
        if kind in ("inform", "modify", "mixed") and "relative" not in slots:
            _after_outbound(slots, clause.text, ctx, text)  # 回来的呢，周日…: the Sunday after the trip out
            inform, modify = _split_changes(slots, ctx, fresh or confirmed)
            restated = restated or not (inform or modify)
            for act_name, group in (("modify", modify), ("inform", inform)):
                if group:
                    acts.append(Act(act_name, group))
            continue
        acts.append(Act(kind, slots))
        if kind == "request" and slots:
            pending_ref = {k: v for k, v in slots.items() if k in REFERENCE and v != "?"}
    starts.append(len(acts))
    for i, clause in enumerate(clauses):
        for act in acts[starts[i] : starts[i + 1]]:
            act.clause = act.clause or clause.text
        if _corrects(clause.text, clauses[i - 1].text if i else ""):
            for act in acts[starts[i] : starts[i + 1]]:
                act.corrects = True
    if any(a.act == "confirm" for a in acts):  # 出发时间有点早，不过行，就订它: a remark on the time, then a yes
        acts = [
            a for a in acts if not ("relative" in a.slots and any(re.search(p, a.clause, re.I) for p, _k in COMMENTS))
        ]
    if any(a.act == "modify" and "relative" in a.slots for a in acts) and any(
        a.act in ("inform", "modify") and "relative" not in a.slots and {"max_price", "min_price"} & set(a.slots)
        for a in acts
    ):  # 有没有便宜点的，800以内: the bound said is the one meant
        acts = [a for a in acts if not (a.act == "modify" and "relative" in a.slots)]
    if (
        THANKS_AFTER.search(text)
        and not re.match(r"no\b", text.strip().lower())
        and acts
        and not any(a.act == "thanks" for a in acts)
        and acts[-1].act in ("deny", "confirm", "ask_about_booking")
    ):
        acts.append(Act("thanks"))  # 不需要了谢谢你 / 行 麻烦了: the thanks said after the answer
    if not ctx.offers and not _refused_time(text)[2]:  # (早上八点那班太早了不行: refused, no wish)
        _clock_up_front(acts, text)
    feature = up_front_choice(text) if not ctx.offers else None
    if feature and any(a.act in ("inform", "modify") for a in acts) and not any(a.act == "select" for a in acts):
        acts.append(Act("select", {"feature": feature}))  # 明天的，要最晚的那班: chosen when the options come
    if not acts and pending_ref and set(pending_ref) <= {"brand", "district", "airline"}:
        acts.append(Act("select", pending_ref))  # 那维也纳呢？ while choosing: asked for as a choice
    if ctx.offers and ASIDE.search(text) and any(_back_home(a, ctx) for a in acts):
        acts = [Act("out_of_scope")]  # 下周六我还得回上海上班 while choosing the way out: why, not a new destination
    if _takes_suggestion(acts, text, ctx):
        acts = [Act("confirm")]  # 全季也行 when 全季 is the alternative offered: a yes to it
    if event_day:  # 我老婆15号生日，得早点回来: no choice of the earliest listed either, nothing changed
        acts = [a for a in acts if not (a.act == "select" and set(a.slots) <= {"feature"})]
        if acts and all(a.act in ("inform", "modify", "out_of_scope") and not a.slots for a in acts):
            acts = [Act("out_of_scope")]
    acts = place_roles(_post(_said_over(acts), ctx, raw), text, ctx, gaz)
    _rooms_by_sharing(acts, text)
    _evening_deadline(acts, text)
    _check_out_to_stay(acts, text)
    nights_to_check_out(acts, ctx)
    _stay_in_arrival_city(acts)
    if english:  # two first-class tickets…, the latest train: first class on a train is 一等座
        for act in acts:
            if act.slots.get("domain") == "train" and act.slots.get("seat_class") in TRAIN_CLASS_EN:
                act.slots["seat_class"] = TRAIN_CLASS_EN[str(act.slots["seat_class"])]
    if restated and ctx.open_question == "offer_alternative" and [a.act for a in acts] == ["deny"]:
        # 不是，我要上午的: the alternative refused and the conditions said again, which have none
        acts.append(Act("request", {"availability": "?"}))
    said = re.sub(r"^[啊嗯咦哎诶呃额哈欸]+[？?，,！!。\s]*", "", text)  # 啊？我说的是…: an interjection, no question
    if (
        not acts
        and restated
        and ctx.open_question == "confirm_booking"
        and (ASKS.search(said) or "?" in said or "？" in said)
    ):
        return [Act("request")]  # 是两间吧？ at the read-back: a question about the offer, answered by reading it back
    if not acts and restated and not event_day and not re.search(r"(什么|怎么|为什么|哪|吗|呢|？|\?)", said):
        return [Act("inform")]  # the request said again, nothing new: not out of scope
    return acts or [Act("out_of_scope")]


# a thing put off for later (到时候再说 / 回头再说 / that can wait): what was said just before it changes nothing now
LATER = re.compile(
    r"(那个|这个|那|到时候|以后|回头|之后|改天|等等)?再(说|看|订|定)(吧|了|啦)?|先不管(它|那个)?(吧|了)?|"
    r"(?:i'll|we'll) (?:sort|deal with|see about) (?:that|it) later|that can wait|later",
    re.I,
)
TRAIN_CLASS_EN = {"头等舱": "一等座", "商务舱": "商务座"}
VALUE_REFUSED = re.compile(r"(不要|不用|别要|别|不是|不想要)[^了吧啦呢啊]{1,8}(的)?(了|吧)?")
BARE_VERB = re.compile(r"(订|要|选|就|来|买|订个|来个|要个)")
THANKS_AFTER = re.compile(r"(谢谢(你|您|啦|了)?|多谢|麻烦(你|您)?了|辛苦(你|您)?了|thanks?( you)?)[!！。.~～]*$", re.I)
INSTEAD = re.compile(r"(我|我们)?(而?是|应该是|要|得)")
NOT_THIS = re.compile(r"(并?不是|不是说)[^，,。！!？?]{1,10}$")
CORRECTION = re.compile(r"(不对|说错|错了|口误|更正|应该是|我是说|我的意思是|[哦噢啊呃额]不是?(?![要用行])|改一下)")
RESTATED_DAY = re.compile(rf"({NUM})\s*[号日](?:那个|那天|那一天|，?也就是|，?就是)")


TRAIN_AT = re.compile(
    rf"{PERIOD_SAID}?\s*{CLOCK}\s*(?:出发|发车|起飞|走)?的?\s*(?:那趟|那班|那一趟|那一班|那个航班|那个车次)"
)


def _clock_up_front(acts: list[Act], text: str) -> None:
    """A departure named before any option is listed (…软卧下铺，要八点半那趟): the trip's window becomes half an
    hour either side of it (the window said, 晚上, tells 20:30 from 08:30)."""
    trip = next((a for a in acts if a.act in ("inform", "modify") and {"dep_city", "arr_city"} & set(a.slots)), None)
    m = TRAIN_AT.search(text)
    if trip is None or not m or {"time_from", "time_to"} & set(trip.slots):
        return
    said = next((a.slots["period"] for a in acts if a.act in ("inform", "modify") and a.slots.get("period")), None)
    period = m.group(1) or next((w for w, p in PERIOD_WORDS.items() if p == said), None)
    hour, minute = map(int, _clock_of(m.group(2), m.group(3), m.group(4), period).split(":"))
    at = hour * 60 + minute
    for act in acts:
        if act.act in ("inform", "modify"):
            act.slots.pop("period", None)
    trip.slots["time_from"] = f"{max(at - 30, 0) // 60:02d}:{max(at - 30, 0) % 60:02d}"
    trip.slots["time_to"] = f"{min(at + 31, 1439) // 60:02d}:{min(at + 31, 1439) % 60:02d}"


# a day of something else than the trip: 我生日是12号 / 孩子20号有比赛 / 15号是结婚纪念日 (a personal day always; a
# match, a meeting or an exam when the trip is said to be before it: 提前几天过去 / 得早点回来)
PERSONAL_DAY = r"(生日|纪念日|结婚|婚礼|订婚|满月|寿宴)"
EVENT_WORD = r"(比赛|开会|会议|考试|面试|演出|演唱会|聚会|答辩|报到|年会|毕业典礼|活动)"
# the same in English: the 24th is my mum's birthday / is the 24th busy there? / my meeting is on the 25th
_DAY_EN = r"(?:the\s+)?\d{1,2}(?:st|nd|rd|th)\b"
_EVENT_EN = r"(birthday|anniversary|wedding|busy|crowded|meeting|exam|interview|concert|party|holiday|festival)"
EVENT_EN = re.compile(
    rf"(?i)\b{_DAY_EN}.{{0,25}}\b{_EVENT_EN}|\b{_EVENT_EN}\b.{{0,20}}\b(?:is|was|falls)\s+on\s+{_DAY_EN}"
)
BEFORE_IT = re.compile(r"(提前|早点|早一点|早些|之前|以前|前几天|前一天|前两天|赶在)")


# a day one leaves a hotel: 周日走 / 还是周日走 / 退房还是周日 (said as the check-out the reader knows: 周日退房)
_DAY = rf"(?:(?:{NUM})\s*[号日]|(?:下|这|本)?(?:周|星期|礼拜)[一二三四五六日天]|明天|后天|大后天)"
LEAVING = re.compile(
    rf"(?P<day>{_DAY})\s*(?:再|就)?(?:走|离开|离店)(?![^，,。]{{0,4}}(?:飞|坐|火车|高铁|机票|航班|去|到|回))"
)
LEAVING_AFTER = re.compile(rf"退房(?:还是|是|在|改到|改成|就)?\s*(?P<day>{_DAY})")
TRAVEL = re.compile(r"(飞|坐|火车|高铁|动车|机票|航班|车票|出发|发车)")


def _leaving_the_hotel(text: str, ctx: Context) -> str:
    """``text`` with the day one leaves a hotel said as its check-out (周日走 → 周日退房), in a turn about a stay."""
    live = live_bookings(ctx.bookings)
    about_a_stay = ctx.domain == "hotel" or (not ctx.domain and live and live[-1].get("domain") == "hotel")
    if not about_a_stay and not re.search(r"(入住|酒店|宾馆|住)", text):
        return text
    if TRAVEL.search(text):
        return text
    text = LEAVING.sub(lambda m: f"{m.group('day')}退房", text)
    return LEAVING_AFTER.sub(lambda m: f"{m.group('day')}退房", text)


def _event_day(clause: str, text: str) -> bool:
    """Whether the day said in ``clause`` is that of an event, not of the trip."""
    day = rf"({NUM}\s*[号日]|周[一二三四五六日天]|星期[一二三四五六日天])"
    if EVENT_EN.search(clause):
        return True
    if re.search(rf"{day}.{{0,10}}{PERSONAL_DAY}", clause) or re.search(rf"{PERSONAL_DAY}.{{0,4}}(是|在)", clause):
        return True
    return bool(re.search(EVENT_WORD, clause) and BEFORE_IT.search(text))


# a clause about the stay only, in a turn that asks for a trip too: 住两晚 / 入住 / 四星的 / 一间, no travelling words
STAY_CUE = re.compile(
    r"(住\S{0,3}晚|住\S{0,3}(?:天|礼拜|星期|周)|入住|酒店|宾馆|民宿|[一二两三四五]\s*星|[0-9一二两三四五]\s*间)"
)
TRIP_CUE = re.compile(r"(飞|坐|乘|高铁|动车|火车|航班|机票|车票|出发|发车|起飞|退房后|从\S{1,4}(?:去|到|回))")


HOTEL_KEYS = {"district", "not_district", "stars", "min_stars", "not_stars", "brand", "not_brand", "nights", "rooms"}
TRIP_ONLY = {"dep_city", "dep_place", "arr_place", "passengers", "seat_class", "berth", "train_kinds", "airline"}
TRIP_ONLY |= {"not_airline", "not_train_kinds", "time_from", "time_to", "period", "arr_by", "code"}


def _stay_clause(clause: str) -> bool:
    return bool(STAY_CUE.search(clause)) and not TRIP_CUE.search(clause)


def _stay_slots(slots: JSONDict) -> JSONDict:
    """A stay clause's slots as a hotel's: the city one arrives in is where one stays."""
    out: JSONDict = {k: v for k, v in slots.items() if k not in TRIP_ONLY}
    if "arr_city" in out:
        out.setdefault("city", out.pop("arr_city"))
    out.pop("arr_city", None)
    out["domain"] = "hotel"
    return out


def _back_home(act: Act, ctx: Context) -> bool:
    """Whether ``act`` would send the trip under way back where it starts (回上海 while going from 上海)."""
    return (
        act.act in ("inform", "modify")
        and "dep_city" not in act.slots
        and act.slots.get("arr_city") is not None
        and act.slots.get("arr_city") == ctx.state.get("dep_city")
    )


def _takes_suggestion(acts: list[Act], text: str, ctx: Context) -> bool:
    """Whether the turn takes the alternative the system offered by naming it (全季也行 / 下午的也可以)."""
    suggestion = ctx.suggestion or {}
    if ctx.open_question != "offer_alternative" or not suggestion or len(acts) != 1:
        return False
    said = {k: v for k, v in acts[0].slots.items() if k != "domain"}
    return (
        acts[0].act in ("inform", "modify")
        and bool(said)
        and all(suggestion.get(k) == v for k, v in said.items())
        and bool(re.search(r"(也行|也可以|也成|也没问题|也好|\bis fine\b|\bworks\b)", text))
    )


def _evening_deadline(acts: list[Act], text: str) -> None:
    """这礼拜四晚上从南京坐动车去上海，九点前要到: a deadline without its own time of day after an afternoon or
    evening departure is that evening's (21:00, not 09:00)."""
    m = ARRIVE_BY.search(text)
    for act in acts:
        deadline = act.slots.get("arr_by")
        late = act.slots.get("period") in ("下午", "傍晚", "晚上") or str(act.slots.get("time_from") or "") >= "12:00"
        if m and not m.group(1) and isinstance(deadline, str) and deadline < "12:00" and late:
            act.slots["arr_by"] = f"{int(deadline[:2]) + 12:02d}{deadline[2:]}"


def _stay_in_arrival_city(acts: list[Act]) -> None:
    """…坐高铁去南京，到了住两晚: a stay said after a trip without a city is in the city the trip goes to."""
    trip: Act | None = None
    for act in acts:
        if act.act in ("inform", "modify") and act.slots.get("domain") in ("flight", "train"):
            trip = act
        elif (
            trip is not None
            and act.act == "inform"
            and act.slots.get("domain") == "hotel"
            and "city" not in act.slots
            and trip.slots.get("arr_city")
        ):
            act.slots["city"] = trip.slots["arr_city"]


def _check_out_to_stay(acts: list[Act], text: str) -> None:
    """…住两晚；18号退房后从长沙坐高铁去广州: the check-out said with the trip is the stay's, the trip's day; 退房那天
    (后) without a day: the stay's last day; no origin said: the stay's city."""
    stay = next((a for a in acts if a.act in ("inform", "modify") and a.slots.get("domain") == "hotel"), None)
    for act in acts[acts.index(stay) + 1 :] if stay is not None else []:
        if stay is None or act.slots.get("domain") not in ("flight", "train"):
            continue
        out = act.slots.pop("check_out", None)
        if out is not None:
            act.slots.setdefault("date", out)
            if "nights" not in stay.slots:
                stay.slots.setdefault("check_out", out)
        day, nights = stay.slots.get("date"), stay.slots.get("nights")
        if "date" not in act.slots and re.search(r"退房", text) and isinstance(day, str) and isinstance(nights, int):
            act.slots["date"] = (dt.date.fromisoformat(day) + dt.timedelta(days=nights)).isoformat()
        if "dep_city" not in act.slots and stay.slots.get("city") not in (None, act.slots.get("arr_city")):
            act.slots["dep_city"] = stay.slots["city"]


# how many share a room: 两人一间 / 两个人住一间 / 每间住两个人 / 一间住两人
PER_ROOM = re.compile(
    rf"(?P<a>{NUM})\s*(?:个)?人\s*(?:住)?\s*一\s*间|(?:每|一)\s*间\s*(?:住)?\s*(?P<b>{NUM})\s*(?:个)?人"
)


def _rooms_by_sharing(acts: list[Act], text: str) -> None:
    """我们六个人，两人一间: the rooms are the people over those sharing one (rounded up), unless said."""
    m = PER_ROOM.search(text)
    if m is None:
        return
    per = cn_number(m.group("a") or m.group("b") or "") or 0
    people = [a.slots.get(k) for a in acts for k in ("guests", "passengers") if isinstance(a.slots.get(k), int)]
    total = max((int(str(n)) for n in people), default=0)
    if per < 1 or total <= per:
        return
    for act in acts:
        hotel = act.slots.get("domain") == "hotel" or {"city", "nights", "guests", "stars"} & set(act.slots)
        if act.act in ("inform", "modify") and hotel and "rooms" not in act.slots:
            act.slots["rooms"] = -(-total // per)
            act.slots["guests"] = total


def _corrects(clause: str, before: str) -> bool:
    """Whether a clause corrects what was said before it in the same turn (两张——哦不对，三张 / 住到周六，哦说错了，
    住到周日 / 不是后天，是周五 / 下下周日，13号那个周日): its values replace the earlier ones."""
    return bool(
        CORRECTION.search(clause)
        or CORRECTION.search(before)
        or (NOT_THIS.match(before) and re.match(INSTEAD, clause))
        or RESTATED_DAY.search(clause)
    )


def _way_back(kind: str | None, slots: JSONDict, clause: str, acts: list[Act]) -> JSONDict | None:
    """The way back said in the turn that asks for the way out (…，周日再飞回来): its day (the first such day after
    the way out's) and window, or None."""
    if (
        kind not in ("inform", "modify", "mixed")
        or not RETURN_LEG.search(clause)
        or not isinstance(slots.get("date"), str)
    ):
        return None
    out = next(
        (a for a in reversed(acts) if a.act in ("inform", "modify") and {"dep_city", "arr_city"} & set(a.slots)), None
    )
    if out is None or not isinstance(out.slots.get("date"), str) or {"dep_city", "arr_city", "city"} & set(slots):
        return None
    day, after = dt.date.fromisoformat(str(slots["date"])), str(out.slots["date"])
    while day.isoformat() <= after and BARE_WEEKDAY.search(clause):
        day += dt.timedelta(days=7)
    if day.isoformat() < after:
        return None
    back: JSONDict = {"date": day.isoformat()}
    back.update({k: v for k, v in slots.items() if k in ("period", "time_from", "time_to")})
    return back


def _said_over(acts: list[Act]) -> list[Act]:
    """Acts without what a later clause of the turn says over: a city not served said before the city meant
    (…飞三亚，哦不对，飞厦门), an exclusion said before the value wanted instead (不要如家了，换全季)."""
    later: set[str] = set()
    kept: list[Act] = []
    for act in reversed(acts):
        slots = dict(act.slots)
        if "unserved" in slots and later & {"arr_city", "city", "dep_city"}:
            slots.pop("unserved")
        for excluded, wanted in (
            ("not_brand", "brand"),
            ("not_airline", "airline"),
            ("not_train_kinds", "train_kinds"),
            ("not_stars", "stars"),
            ("not_district", "district"),
        ):
            if excluded in slots and wanted in later:
                slots.pop(excluded)
        later |= set(slots)
        if slots or not act.slots:
            kept.append(Act(act.act, slots, act.corrects, act.clause) if slots != act.slots else act)
    return kept[::-1]


def slots_for(act: str, text: str, context: Context, gaz: Gazetteer, today: dt.date, by_sound: bool = True) -> JSONDict:
    """The slots ``act`` would carry for the whole of ``text`` (when another reader than the cue words decided
    the act, e.g. ``ragdial.task.act_model``): constraints for inform/modify, reference slots for select, the
    attribute asked for request, the domain for a booking question, none for the others."""
    token = _BY_SOUND.set(by_sound)
    try:
        text = _normalise(text, gaz)
        english = _is_english(text)
        body = FILLER.sub("", text).strip() or text
        if act == "ask_about_booking":
            return _booking_domain(body)
        if act == "cancel_booking":
            return _cancel_slots(body, context) or {}
        if act == "change_booking":
            return _change_slots(body, context, gaz, today, english) or {}
        if act == "request":
            return _request_slots(body, context, gaz, english) or {}
        if act == "select":
            return _reference(body, context, gaz, english) if context.offers else {}
        if act in ("inform", "modify"):
            slots = _constraints(body, context, gaz, today, english, _hotelish(body, context, gaz, english))
            fresh = context.open_question in (None, "anything_else") or not context.domain
            inform, modify = _split_changes(slots, context, fresh)
            mine, other = (inform, modify) if act == "inform" else (modify, inform)
            return mine or other
        return {}
    finally:
        _BY_SOUND.reset(token)
