"""The task branch: dialog acts → state → database → reply, with bookings as transactions.

``TaskBranch.respond(state, text)`` is a pure step over plain JSON-serialisable state (a dict), so a session
store can persist it between turns. One turn: read the acts (``ragdial.task.acts``) in the context the last
reply left, then handle them in the order they were said:

- out of scope: nothing in the state changes; the reply says what the system can do and asks the open question
  again;
- inform / modify: update the constraints (a new domain keeps the route, date and time, not the segment's class,
  budget or airline); a further request said after a confirmation waits until that booking is made;
- select: resolve the offer (ordinal, code, brand, district, price, time, airline, class, feature, "this one");
  several or none fit → ask back; one → read the whole offer back and ask to confirm;
- confirm: book only what was read back (or chosen in the same sentence), give an order number, keep the booking
  in the session's list; a question ("是两间吧？") is never a confirmation;
- deny, request (an attribute of an offer), ask_about_booking (the bookings made, with order numbers),
  greeting, thanks.

When nothing matches, the reply names the constraint that cannot be met and offers the nearest alternative (the
state keeps the constraint until the user accepts the alternative).

Booking, cancelling and changing (the transactions) are ``ragdial.task.bookings``; the session's booking records
``ragdial.task.orders``; the state kept between turns ``ragdial.task.state``.
"""

from __future__ import annotations

import copy
import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import cast

from ragdial.jsontypes import JSONDict, JSONObject, JSONValue
from ragdial.task import comparing, english, limits
from ragdial.task import replies as R
from ragdial.task.act_model import reader_for
from ragdial.task.acts import SERVICE_TOPICS, WINDOWS, Act, Context, same_value, slots_for, understand
from ragdial.task.acts.aside import _booking_domain
from ragdial.task.acts.booked import KEEP_IT, SAME_AGAIN
from ragdial.task.acts.words import CONFIRM_START
from ragdial.task.asked_date import asked_day, date_answer
from ragdial.task.bookings import BookingActs
from ragdial.task.db import Row, TravelDB
from ragdial.task.legs import not_before, split_legs
from ragdial.task.no_match import SHOWN, NoMatch, _price_text
from ragdial.task.orders import (
    booking_line,
    cancel_all_question,
    cancel_question,
    live_bookings,
)
from ragdial.task.plain_changes import resolve_changes
from ragdial.task.slots import cn_number
from ragdial.task.slots import parse as parse_slots
from ragdial.task.state import (
    STATE_KEY,
    TRIP_KEYS,
    UNDER_WAY_KEYS,
    Pending,
    TaskState,
    TaskTurn,
    _Before,
    _task_state,
    _Turn,
    as_json,
    new_state,
    under_way,
)
from ragdial.task.switching import replacing_trip
from ragdial.task.values import as_int, as_str, items, listed, text_or_none

REQUIRED = {
    "flight": ("dep_city", "arr_city", "date"),
    "train": ("dep_city", "arr_city", "date"),
    "hotel": ("city", "date"),
}
HOTEL_KEYS = ("city", "date", "nights", "check_out", "rooms", "guests")
# conditions only a hotel has (四星以上 / 浦东 / 住两晚): said while a trip is under way, for the hotel waiting
HOTEL_ONLY = {
    *("stars", "min_stars", "district", "brand", "nights", "rooms", "guests", "check_out"),
    *("not_brand", "not_stars", "not_district"),
}
SEGMENT_KEYS = (
    "seat_class",
    "berth",
    "airline",
    "train_kinds",
    "max_price",
    "dep_place",
    "arr_place",
    "not_airline",
    "not_train_kinds",
    "arr_by",
)
# constraints that mean nothing for a kind of thing (二等座 for a hotel): never searched or shown for it
NOT_FOR = {
    "hotel": (
        *("seat_class", "berth", "airline", "train_kinds", "dep_place", "arr_place", "code"),
        *("not_airline", "not_train_kinds", "arr_by", "arr_after", "not_dep_place", "not_arr_place"),
        "max_duration",
    ),
    "flight": (
        *("stars", "min_stars", "brand", "district", "berth", "train_kinds", "not_brand", "not_train_kinds"),
        *("not_stars", "not_district"),
    ),
    "train": (
        *("stars", "min_stars", "brand", "district", "airline", "not_brand", "not_airline"),
        *("not_stars", "not_district"),
    ),
}
# a value wanted and the same value excluded: the one said last holds (不要如家 after 如家, 如家也行 after 不要如家)
KIND_NAMES = {"G": "高铁", "D": "动车", "K": "快速", "T": "特快", "Z": "直达"}  # train kinds by first letter
EXCLUDED = {
    "not_brand": "brand",
    "not_airline": "airline",
    "not_train_kinds": "train_kinds",
    "not_stars": "stars",
    "not_district": "district",
    "not_dep_place": "dep_place",
    "not_arr_place": "arr_place",
}

# SMP2017 task-1 labels the understanding classifier may return, mapped to task domains
SMP_TO_DOMAIN = {"flight": "flight", "train": "train"}
IntentClassifier = Callable[[str], str]
# words that keep a turn naming a service topic (积分, 号码 ...) in the travel dialog
# ending the request rather than refusing one offer: 算了 / 不订了 / 不改了 / 我再想想 / 以后再说
CLOSING = re.compile(
    r"(算了|不订了|不买了|不要了|不改了|不改签了|不用改了|别改了|不换了|再想想|考虑一下|考虑考虑|以后再说|改天再|回头再|"
    r"先这样吧|不需要了|不用了|不订|别订|不用订|never ?mind|forget it|leave it)",
    re.I,
)
# putting the decision off (not choosing another offer): ends a request also at its read-back
PUTTING_OFF = re.compile(r"(不订了|先不订|不用订了|再想想|考虑一下|考虑考虑|以后再说|改天再|回头再|不需要了|到了再说)")
# something else accepted too (下午的也可以 / 全季也行): added to what was asked, not in its place
ALSO_FINE = re.compile(r"也(行|可以|成|没问题|不错|ok|OK)")
# the day of the booking just made (当天上午的高铁 after a hotel booking: its check-in day)
SAME_DAY = re.compile(r"(当天|同一天|同一日|那天|同天)")
# the day a booked stay ends (退房那天 / 退房当天 / 退完房)
CHECK_OUT_DAY = re.compile(r"(退房(那天|当天|那日|后|以后|之后)|退完房)")
# an aside about a place or an outing (你知道…吗 / 听说…吗 / 几点开门) and the day one means to go there (我5号想去)
ASIDE_QUESTION = re.compile(
    r"(你知道|听说|话说|有没有人|好玩|好吃|开门|关门|门票|天气|下雨|冷不冷|热不热|能看到|值得去|景点|灯会)"
)
GOING_THERE = re.compile(r"(想去|要去|去玩|去看|去逛|打算去|准备去|过去玩|去转转)")
# the way back of the trip just booked (那周五回来的呢 / 返程看看周日的)
RETURN_LEG = re.compile(r"(回程|返程|回来|返回|回去的|回来的|往回)")
# going on to a further item after a yes (好的订吧，再帮我看看酒店 / 确认，然后… / 另外…)
NEXT_ITEM = re.compile(r"(然后|另外|再帮|再给|再订|再看|再查|再来|还要|还想|还得|顺便|接着)")
# a turn asking rather than choosing (what time does the second one leave / 第二个几点到？)
QUESTION = re.compile(
    r"(^\s*(what|when|where|which|how|does|do|is|are|can)\b|\?|？|吗|几点|什么时候|多久|多长时间|哪个站|哪里|在哪)",
    re.I,
)
CHOOSING = re.compile(r"(就|订|要|选|定|买|来一|book|take|go with|I'?ll have|I want|choose)", re.I)
TRAVEL_WORDS = re.compile(r"(机票|航班|飞机|火车|高铁|动车|车票|酒店|宾馆|房间|订单|预订|订票|订房|座|铺|舱|退票|改签)")


def _excluded_name(key: str, value: object, lang: str) -> str:
    """How an excluded value is shown: 高铁 for G, 江汉区 / 4星 for a district / star rating."""
    if key == "not_district":
        return f"{value}区" if lang == "zh" and not str(value).endswith("区") else str(value)
    if key == "not_stars":
        return f"{value}星" if lang == "zh" else f"{value}-star"
    return KIND_NAMES.get(str(value), str(value))


# what the way back keeps of the way out unless said anew (高铁, 二等座, 晚上, two tickets)
WAY_BACK_KEEPS = ("train_kinds", "seat_class", "berth", "airline", "not_airline", "not_train_kinds", "passengers")
TIME_KEYS = ("period", "time_from", "time_to")


def _kept_for_way_back(way_out: Mapping[str, object], said: Mapping[str, object]) -> JSONDict:
    """The way out's conditions the way back keeps: class, kind, airline, tickets, and its time of day when the
    way back says none of its own."""
    keys = [*WAY_BACK_KEEPS, *(() if set(TIME_KEYS) & set(said) else TIME_KEYS)]
    return {k: cast(JSONValue, way_out[k]) for k in keys if way_out.get(k) is not None and k not in said}


class TaskBranch(BookingActs, NoMatch):
    """Act-driven dialog manager over a ``TravelDB``.

    ``today`` is the date relative dates count from (default: the database's first day). ``intent`` optionally
    maps an utterance to an SMP2017 label (``flight``/``train``/...), asked only before a task has started.
    ``by_sound`` is kept for the ablation of pinyin matching in the slot parser. ``acts``: ``learned`` (default)
    reads a turn's acts with the learned model combined with the rules (``ragdial.task.act_model``; rules only
    where the utterance banks are not there), ``rules`` with the rule layer alone.
    """

    def __init__(
        self,
        db: TravelDB,
        today: dt.date | None = None,
        intent: IntentClassifier | None = None,
        by_sound: bool = True,
        acts: str = "learned",
    ) -> None:
        if acts not in ("learned", "rules"):
            raise ValueError(f"acts must be 'learned' or 'rules', not {acts!r}")
        self.by_sound = by_sound
        self.db = db
        self.gazetteer = db.gazetteer()
        self.today = today or dt.date.fromisoformat(db.meta.get("start", dt.date.today().isoformat()))
        self.intent = intent
        self.reader = reader_for(self.gazetteer, self.today) if acts == "learned" else None
        self.acts = "learned" if self.reader is not None else "rules"

    def understand(self, text: str, context: Context) -> list[Act]:
        """The acts of one user turn in ``context``: the one place this branch decides what a turn does."""
        if self.reader is not None:
            return self.reader(text, context, self.by_sound)
        return understand(text, context, self.gazetteer, self.today, self.by_sound)

    # ------------------------------------------------------------------ component contract
    def warm_up(self) -> None:
        """Nothing loads lazily (the database and its gazetteer are read at construction)."""
        return None

    def close(self) -> None:
        return None

    def to_config(self) -> JSONDict:
        return {"name": "travel", "db": str(self.db.url), "today": self.today.isoformat(), "acts": self.acts}

    # ------------------------------------------------------------------ routing
    def claims(self, state: JSONObject | None, text: str) -> bool:
        """Whether the turn ``text`` is this branch's: the task dialog is under way in ``state`` (including the
        "anything else?" after a booking, so an unrelated turn gets this branch's guidance rather than falling
        through) and the turn is not a question for the knowledge base (话费/流量/套餐 …: those go there, the task
        state is left as it is and resumes next turn), a question about or a cancellation of a booking made in
        this session, or a request for travel."""
        if under_way(state):
            assert state is not None
            if SERVICE_TOPICS.search(text):
                # a question for the knowledge base ("怎么查询话费余额"), also in the middle of a booking, goes
                # there; this branch does not run, so its state is kept and the booking resumes on the next turn
                return bool(TRAVEL_WORDS.search(text))
            return True
        if self.understands(text) or date_answer(text, self.today, "zh"):
            return True  # (下下周二是几号来着 as a first turn: the calendar is this branch's, not the knowledge base's)
        if state and state.get("bookings"):
            acts = self.understand(text, self.context(_task_state(state)))
            return any(a.act in ("ask_about_booking", "cancel_booking", "change_booking") for a in acts)
        return False

    def understands(self, text: str) -> bool:
        """Whether an utterance asks for travel (a pipeline deciding where a new request goes): a domain named,
        the classifier's flight/train, a route (北京到上海), or a city with a role and a date (明天去上海)."""
        acts = self.understand(text, Context())
        whole = slots_for("inform", text, Context(), self.gazetteer, self.today, self.by_sound)
        for slots in [a.slots for a in acts if a.act == "inform"] + ([whole] if whole else []):
            if (
                slots.get("domain")
                or {"dep_city", "arr_city"} <= set(slots)
                or ({"dep_city", "arr_city"} & set(slots) and "date" in slots)
                or ("city" in slots and {"date", "nights", "rooms", "check_out"} & set(slots))
            ):
                return True  # 明天武汉飞北京的机票多少钱 / 这周六我要在上海住两晚，一间房
        if self.intent is not None and SMP_TO_DOMAIN.get(self.intent(text)):
            return any(a.act == "inform" for a in acts)
        return False

    # ------------------------------------------------------------------ one step
    def context(self, state: TaskState) -> Context:
        """The context the acts are read in (the utterance bank's ``context``)."""
        domain = state.get("domain")
        offers: list[Mapping[str, object]] = [self._offer_view(domain, row) for row in self._offer_rows(state)]
        pending = state.get("pending")
        if state.get("open") == "confirm_booking" and pending:
            item = self._pending_item(state)
            offers = [self._offer_view(pending["domain"], item)] if item else offers
        if state.get("open") in ("confirm_cancel", "choose_cancel", "choose_change"):
            offers = []
        known = dict(state.get("slots") or {})
        if state.get("said_date"):
            known["said_date"] = state["said_date"]  # 那天 after 下下周二是几号
        if state.get("last_city_slot"):
            known["last_city_slot"] = state["last_city_slot"]  # which city a bare "actually, X" corrects
        if state.get("open") == "confirm_booking" and pending and self._rebooked(state) is not None:
            known["rebooking"] = True  # the read-back is of a change (改签): 确认改签 is its yes
        return Context(
            domain,
            state.get("open"),
            offers,
            known,
            list(state.get("bookings") or []),
            state.get("suggestion"),
        )

    def respond(self, state: JSONObject | None, text: str) -> TaskTurn:
        """One dialog step; ``state`` is not modified (a new state is returned)."""
        return self._step(_task_state(copy.deepcopy(state)) if state else new_state(), text)

    def _step(self, state: TaskState, text: str) -> TaskTurn:
        if state.get("version") != 2:
            state = {**new_state(), "bookings": list(state.get("bookings") or [])}
        state["turns"] += 1
        state["language"] = self._language(text, state["language"])
        acts = self.understand(text, self.context(state))
        if state.get("open") not in ("confirm_cancel", "choose_cancel", "choose_change"):
            acts = replacing_trip(acts, text, state["bookings"])
        elif (
            state.get("open") == "confirm_cancel" and KEEP_IT.search(text) and not any(a.act == "confirm" for a in acts)
        ):
            acts = [
                Act("deny")
            ]  # 机票不用退 / 先留着: the booking is kept  # 算了，还是坐高铁吧 after a flight was booked
        if self.intent is not None and state["domain"] is None:
            label = SMP_TO_DOMAIN.get(self.intent(text))
            for act in acts:
                if act.act == "inform" and label and not act.slots.get("domain") and "city" not in act.slots:
                    act.slots["domain"] = label
        turn = _Turn()
        turn.text = text
        acts = self._comparing(state, acts, turn)
        acts = self._other_mode(state, acts, text)
        acts = resolve_changes(state, acts, self.db)
        if state["open"] in (None, "anything_else") or state["domain"] is None:
            acts = split_legs(acts, text, self._read_part)  # each leg of a two-leg first turn with its own
        acts = self._hotel_clause(state, acts, text)
        acts = self._swapping(state, acts)
        acts = self._moved(state, acts, text)
        acts = self._hotel_swap(state, acts, text)
        acts = self._cancel_or_change_said(state, acts, text)
        acts = self._again_as_before(state, acts, text)
        acts = self._code_for_change(state, acts, text)
        acts = self._yes_naming(state, acts)
        acts = self._yes_with_a_change(state, acts, text)
        acts = self._aside_with_a_day(state, acts, text)
        acts = self._fewer_again(state, acts, text)
        acts = self._refused_then_chosen(acts)
        acts = self._read_back_refused(state, acts)
        acts = self._asked_not_chosen(acts, text)
        acts = self._no_after_a_choice(acts)
        acts = self._said_again_with_a_choice(state, acts)
        if any(a.act in ("change_booking", "cancel_booking") for a in acts) and not re.search(
            r"(？|\?|哪些|什么|吗)", text
        ):
            acts = [a for a in acts if a.act != "ask_about_booking"]  # 是刚订的那家，再住一晚: a reference, no question
        names = [a.act for a in acts]
        in_scope = names != ["out_of_scope"]
        for index, act in enumerate(acts):
            if (
                act.act == "select"
                and act.slots.get("feature")
                and any(a.act in ("inform", "modify") for a in acts[index + 1 :])
            ):
                turn.deferred = act  # 那就要最早的一班，1200以内的: chosen among what the change finds
                acts = acts[:index] + acts[index + 1 :]
                break
        for index, act in enumerate(acts):
            getattr(self, f"_on_{act.act}")(state, act, turn, acts[index + 1 :])
        if turn.dirty:
            self._advance(state, turn)
            self._no_change_read_back(state, turn)
            deferred, turn.deferred = turn.deferred, None
            if deferred is not None and state["open"] == "choose_offer":
                turn.parts.pop()  # the list is replaced by the read-back of the one chosen from it
                turn.dirty = False
                self._on_select(state, deferred, turn, [])
        elif not turn.prompted:
            self._reprompt(state, turn)
        done = names and set(names) <= {"thanks", "deny"} and state["open"] is None and bool(state["bookings"])
        state["done"] = bool(done)
        reply = "\n".join(p for p in turn.parts if p)
        if state["language"] == "en":
            reply = english.scrub(reply)  # (the database's names and values, in English too)
        booked = as_json(turn.booked[-1]) if turn.booked else None
        return TaskTurn(reply, as_json(state), done=bool(done), booked=booked, in_scope=in_scope, acts=names)

    def _read_part(self, text: str) -> JSONDict:
        """The constraints one part of a turn says on its own (a leg of a two-leg request)."""
        return slots_for("inform", text, Context(), self.gazetteer, self.today, self.by_sound)

    def _comparing(self, state: TaskState, acts: list[Act], turn: _Turn) -> list[Act]:
        """坐飞机和坐火车哪个便宜: the turn's request for one way to travel becomes a request for either (the
        domain is asked after the two are compared, ``_advance``)."""
        feature = comparing.asked(turn.text)
        said = [a for a in acts if a.act in ("inform", "modify")]
        known = state["domain"] in ("flight", "train") and {"dep_city", "arr_city"} <= set(state["slots"])
        replacing = any(a.act in ("cancel_booking", "change_booking") for a in acts)
        if (
            feature is None
            or not (said or known)
            or replacing
            or state.get("open") in ("confirm_cancel", "choose_cancel")
        ):
            return acts
        turn.compare = feature
        for act in said:
            if act.slots.get("domain") in ("flight", "train"):
                act.slots.pop("domain")
            act.slots.pop("train_kinds", None)
        if state["domain"] in ("flight", "train"):
            state["domain"], state["open"], state["offers"], state["pending"] = None, "domain", [], None
            state["slots"] = {k: v for k, v in state["slots"].items() if k in TRIP_KEYS}
        rest = [a for a in acts if a.act not in ("request", "inform", "modify")]
        return [*(said or [Act("inform", {})]), *rest]

    def _yes_with_a_change(self, state: TaskState, acts: list[Act], turn_text: str) -> list[Act]:
        """对，硬卧下铺，确认 at a read-back of 硬座: the yes is for the offer changed, which is read back first
        (a yes said with a change never books the offer read back before it)."""
        pending = state.get("pending")
        if state["open"] != "confirm_booking" or not pending or not any(a.act == "confirm" for a in acts):
            return acts
        item = self._pending_item(state)
        if item is None:
            return acts
        count = {"rooms": pending.get("rooms") or 1, "passengers": pending.get("passengers") or 1}
        facts: JSONDict = {**state["slots"], **cast(JSONDict, item), **cast(JSONDict, pending), **count}
        facts.setdefault("nights", 1)
        after_yes = False
        for act in acts:
            after_yes = after_yes or act.act == "confirm"
            if act.act not in ("inform", "modify") or act.slots.get("domain") not in (None, pending["domain"]):
                continue
            if after_yes and self._next_request(facts, act.slots, turn_text):
                continue  # 好，订上。回来那班呢…: the yes books, and the next request follows it
            said = {k: v for k, v in act.slots.items() if k != "domain"}
            if any(v is not None and not same_value(facts.get(k), v) for k, v in said.items()):
                return [a for a in acts if a.act != "confirm"]
        return acts

    @staticmethod
    def _aside_with_a_day(state: TaskState, acts: list[Act], text: str) -> list[Act]:
        """好。你知道灵隐寺几点开门吗，我5号想去 at a read-back: an aside asked about a place, with the day one
        means to go there, changes nothing (the day is the aside's, not the stay's or the trip's); a plain yes that
        opens the turn still books the offer read back."""
        pending = state.get("pending")
        if state["open"] != "confirm_booking" or pending is None:
            return acts
        if not (ASIDE_QUESTION.search(text) and GOING_THERE.search(text) and re.search(r"(吗|呢|？|\?)", text)):
            return acts
        said = [a for a in acts if a.act in ("inform", "modify")]
        if not said or any(set(a.slots) - {"date", "period", "district"} for a in said):
            return acts
        domain = pending["domain"]
        fits = {"hotel": ("price", "stars", "district", "rooms_left")}.get(domain or "", ())
        kept = [
            a
            for a in acts
            if a not in said and not (a.act == "request" and domain == "hotel" and any(k not in fits for k in a.slots))
        ]
        first = re.split(r"[，,。.!！？?\s]", text.strip(), maxsplit=1)[0]
        if not any(a.act == "confirm" for a in kept) and CONFIRM_START.match(first) and len(first) <= 4:
            kept.insert(0, Act("confirm"))  # 好。(aside): the yes stands
        return kept if any(a.act == "out_of_scope" for a in kept) else [*kept, Act("out_of_scope")]

    @staticmethod
    def _fewer_again(state: TaskState, acts: list[Act], text: str) -> list[Act]:
        """整个退了，再重新订一张同一趟的: cancelling a booking of several and booking fewer of the same again is
        giving part of it back (one read-back, one transaction; the seat kept is never let go in between)."""
        m = SAME_AGAIN.search(text)
        cancels = [a for a in acts if a.act == "cancel_booking" and not a.slots.get("back")]
        if m is None or len(cancels) != 1:
            return acts
        order = cancels[0].slots.get("order_no")
        live = live_bookings(state["bookings"])
        booking = next((b for b in reversed(live) if order in (None, b["order_no"])), None)
        keep = cn_number(m.group("keep")) or 1
        if booking is None or not 0 < keep < int(booking.get("quantity") or 1):
            return acts
        slots: JSONDict = {"order_no": booking["order_no"], "back": int(booking.get("quantity") or 1) - keep}
        return [Act("cancel_booking", slots)]

    def _said_again_with_a_choice(self, state: TaskState, acts: list[Act]) -> list[Act]:
        """行吧，天府就天府，第一个 while every flight listed lands at 天府: a condition every offer listed already
        meets, said with a choice, changes nothing (the choice is read back, not the list searched anew)."""
        if state["open"] != "choose_offer" or not any(a.act == "select" for a in acts):
            return acts
        rows = self._offer_rows(state)
        if not rows:
            return acts

        def met(act: Act) -> bool:
            said = {k: v for k, v in act.slots.items() if k != "domain"}
            if (
                act.act not in ("inform", "modify")
                or not said
                or act.slots.get("domain") not in (None, state["domain"])
            ):
                return False
            return all(
                v is not None
                and (
                    same_value(state["slots"].get(k), v)
                    or all(k in r and same_value(cast(JSONValue, r.get(k)), v) for r in rows)
                )
                for k, v in said.items()
            )

        return [a for a in acts if not met(a)]

    @staticmethod
    def _asked_not_chosen(acts: list[Act], text: str) -> list[Act]:
        """What time does the second one leave and when does it arrive / 第二个几点到: a question about an offer
        names it without choosing it; the reference goes to the question (nothing is read back for a yes)."""
        selects = [a for a in acts if a.act == "select" and a.slots and set(a.slots) <= {"ordinal", "code", "ref"}]
        requests = [a for a in acts if a.act == "request" and "?" in a.slots.values()]
        if len(selects) != 1 or not requests or CHOOSING.search(text) or not QUESTION.search(text):
            return acts
        for request in requests:
            for key, value in selects[0].slots.items():
                request.slots.setdefault(key, value)
        return [a for a in acts if a is not selects[0]]

    def _read_back_refused(self, state: TaskState, acts: list[Act]) -> list[Act]:
        """D5042要坐五个多小时，不行 at the read-back of D5042: the offer read back named, then a no, is that offer
        refused (not chosen again; a no after naming another one still refuses the one before it)."""
        item = self._pending_item(state) if state["open"] == "confirm_booking" else None
        if item is None:
            return acts
        for index, act in enumerate(acts[:-1]):
            named = act.act == "select" and str(act.slots.get("code", "")).upper() == R.code_of(item).upper()
            if named and acts[index + 1].act == "deny" and not any(a.act == "select" for a in acts[index + 1 :]):
                return acts[:index] + acts[index + 1 :]
        return acts

    @staticmethod
    def _refused_then_chosen(acts: list[Act]) -> list[Act]:
        """D5042要坐五个多小时，不行。就G6110吧: an offer named and refused, then another chosen, in one turn: only
        the last choice stands (the refused one is never read back)."""
        last_no = max((i for i, a in enumerate(acts) if a.act == "deny"), default=None)
        if last_no is None or not any(a.act == "select" for a in acts[last_no + 1 :]):
            return acts
        return [a for i, a in enumerate(acts) if not (i < last_no and a.act in ("select", "deny"))]

    @staticmethod
    def _no_after_a_choice(acts: list[Act]) -> list[Act]:
        """A no said after a choice or a change in the same turn (…改成MU8064，你没改啊) refuses what was there
        before, not the offer just chosen: it is dropped, so the reply reads the new offer back and nothing else
        (a no said first, 不要这个，换第二个, still clears the old read-back before the choice)."""
        first = next((i for i, a in enumerate(acts) if a.act in ("select", "change_booking", "cancel_booking")), None)
        if first is None:
            return acts
        return acts[: first + 1] + [a for a in acts[first + 1 :] if a.act != "deny"]

    @staticmethod
    def _next_request(facts: JSONDict, said: JSONDict, text: str) -> bool:
        """Whether constraints said after a yes at a read-back ask for a further item rather than change the offer
        read back: a way back (回来 / 返程), another route, or a word that goes on to something next (再 / 然后 /
        另外 / 还要)."""
        if RETURN_LEG.search(text) or NEXT_ITEM.search(text):
            return True
        route = [k for k in ("dep_city", "arr_city", "city") if said.get(k)]
        return bool(route) and any(not same_value(facts.get(k), said[k]) for k in route)

    def _yes_naming(self, state: TaskState, acts: list[Act]) -> list[Act]:
        """A yes said with a code at a read-back: the code of the offer read back is part of the yes (确认预订，
        HU9138); another one's is a choice of that one, read back first (nothing is booked on a yes that named
        another offer)."""
        if state["open"] != "confirm_booking" or not state.get("pending"):
            return acts
        if not any(a.act == "confirm" for a in acts):
            return acts
        chosen = [a for a in acts if a.act == "select" and set(a.slots) <= {"code", "dep_time"} and a.slots]
        item = self._pending_item(state)
        if not chosen or item is None:
            return acts
        same = all(
            str(a.slots.get("code", R.code_of(item))).upper() == R.code_of(item).upper()
            and a.slots.get("dep_time", item.get("dep_time")) == item.get("dep_time")
            for a in chosen
        )
        return [a for a in acts if a not in chosen] if same else [a for a in acts if a.act != "confirm"]

    @staticmethod
    def _other_mode(state: TaskState, acts: list[Act], text: str) -> list[Act]:
        """那飞机最便宜多少钱 while trains are listed: a question naming the other way to travel asks for it (the
        list of it, cheapest first, answers)."""
        domain = state["domain"]
        if domain not in ("flight", "train") or not {"dep_city", "arr_city"} <= set(state["slots"]):
            return acts
        named = _booking_domain(text).get("domain")
        if named not in ("flight", "train") or named == domain or not any(a.act == "request" for a in acts):
            return acts
        if any(a.act in ("inform", "modify", "select", "cancel_booking", "change_booking") for a in acts):
            return acts
        return [Act("modify", {"domain": named}), *(a for a in acts if a.act != "request")]

    # ------------------------------------------------------------------ act handlers
    def _on_greeting(self, state: TaskState, act: Act, turn: _Turn, rest: list[Act]) -> None:
        if not rest and not state["open"]:
            turn.parts.append(R.GREETING[state["language"]])
            turn.prompted = True

    def _on_thanks(self, state: TaskState, act: Act, turn: _Turn, rest: list[Act]) -> None:
        if rest:
            return
        lang = state["language"]
        if state["open"] in ("confirm_booking", "choose_offer", "offer_alternative") or (
            state["open"] and state["open"] != "anything_else"
        ):
            turn.parts.append("不客气。" if lang == "zh" else "You're welcome.")
            return
        if turn.booked and state["open"] == "anything_else":
            # 好的确认，谢谢啦: thanks for the booking just made, not a goodbye (a further item may follow)
            turn.parts.append(
                "不客气。" + R.ANYTHING_ELSE[lang] if lang == "zh" else "You're welcome. " + R.ANYTHING_ELSE[lang]
            )
            turn.prompted = True
            return
        self._close(state, turn)

    def _on_out_of_scope(self, state: TaskState, act: Act, turn: _Turn, rest: list[Act]) -> None:
        lang = state["language"]
        today = date_answer(turn.text, self.today, lang) or ""  # 今天几号来着 / 下下周二是几号: answered
        if rest:  # "好冷啊，帮我查下明天去哈尔滨的火车": the request is answered, the aside is not (the date is)
            turn.parts.append(today)
            return
        if turn.dirty and not ASIDE_QUESTION.search(turn.text):
            return  # 太早太晚都不行啊，要十点以后的: the constraints said are the answer, no refusal before it
        if turn.parts:
            # "汉庭那个，对了那边冷不冷": the aside after a choice is turned down first, so that the reply ends
            # with the open question (the read-back); a remark next to a question answered needs no refusal
            if not turn.answered:
                turn.parts.insert(0, today + R.GUIDE[lang] if today else R.GUIDE[lang])
            return
        if today:  # the question answered is no refusal: the open question follows
            asked = asked_day(turn.text, self.today)
            if asked is not None and asked[1] != self.today:
                state["said_date"] = asked[1].isoformat()
            turn.parts.append(today)
            turn.answered = True
            return
        turn.parts.append(R.GUIDE[lang])

    def _on_request(self, state: TaskState, act: Act, turn: _Turn, rest: list[Act]) -> None:
        lang = state["language"]
        pending_offer = state["pending"]
        domain = state.get("domain") or (pending_offer["domain"] if pending_offer else None)
        rows = self._offer_rows(state)
        pending = self._pending_item(state) if state.get("pending") else None
        ref = {k: v for k, v in act.slots.items() if v != "?"}
        asked = [k for k, v in act.slots.items() if v == "?"]
        if "availability" in asked:  # 一班都没有吗？: yes, none; the alternative is offered again after this
            turn.answered = True
            name = R.DOMAIN_NAMES[lang].get(domain or "", "")
            turn.parts.append(
                f"是的，这一天的{name}我都查过了，同时满足您全部条件的确实没有。"
                if lang == "zh"
                else f"Yes: I searched all {name} of that day, and none meets all of your conditions."
            )
            return
        if not asked:  # "确定吗？" / "is that right?": nothing is done on a question; the read-back follows
            if state["open"] == "confirm_booking" and state.get("pending"):
                turn.parts.append("还没有为您预订。" if lang == "zh" else "Nothing is booked yet.")
            elif state["open"] == "confirm_cancel":
                turn.parts.append("还没有取消。" if lang == "zh" else "Nothing is cancelled yet.")
            return
        reclassed = bool(ref) and set(ref) <= {"ref", "seat_class", "berth"}
        if pending is not None and domain in ("flight", "train") and reclassed:
            # 这趟一等座多少钱 during a read-back: the offer read back, in the class asked about
            said = {k: v for k, v in ref.items() if k != "ref"}
            targets = (self._by_code(state, domain, R.code_of(pending), said) or [pending]) if said else [pending]
        elif ref and rows and domain and not (pending is not None and set(ref) == {"ref"}):
            found = self._resolve(domain, rows, ref)
            targets = found if found else []
        elif pending is not None:  # 这班是哪个航空公司的 during a read-back: the offer read back
            targets = [pending]
        else:
            targets = rows
        live = live_bookings(state["bookings"])
        if not targets and live and state["open"] in (None, "anything_else"):
            # 几点到？ right after a booking: about what was booked last
            booked = self.db.get(live[-1]["domain"], int(live[-1]["item_id"]))
            domain, targets = (live[-1]["domain"], [booked]) if booked else (domain, targets)
        if not domain or not targets:
            turn.parts.append(
                "请先告诉我您要查的行程或酒店。" if lang == "zh" else "Tell me which trip or hotel first, please."
            )
            return
        if domain == "hotel" and "rooms_left" in asked:  # a hotel row carries no count: the stay's free rooms
            stay = (text_or_none(state["slots"].get("date")), as_int(state["slots"].get("nights") or 1))
            for row in targets:
                date = text_or_none(row.get("date")) or stay[0]
                free = self.db.rooms_free(int(row["id"]), date, stay[1]) if date else None
                if free is None:
                    row.pop("rooms", None)
                else:
                    row["rooms"] = free
        answers = list(
            dict.fromkeys(self._attribute(domain, row, key, lang) for row in targets[:SHOWN] for key in asked)
        )
        answer = "；".join(answers) + ("。" if lang == "zh" else ".")
        if answer not in turn.parts:  # (the same question read twice in one turn: answered once)
            turn.parts.append(answer)

    def _on_deny(self, state: TaskState, act: Act, turn: _Turn, rest: list[Act]) -> None:
        lang = state["language"]
        zh = lang == "zh"
        if state["open"] in ("confirm_cancel", "choose_cancel"):
            self._keep_booking(state, turn)
            return
        if state["open"] == "choose_change":
            state["change"], state["open"] = None, "anything_else"
            turn.parts.append("好的，不改签了。" if zh else "All right, nothing is changed.")
            turn.parts.append(R.ANYTHING_ELSE[lang])
            turn.prompted = True
            return
        ending = state["open"] in ("offer_alternative", "change", "choose_offer") or bool(state.get("rebook"))
        if state["open"] == "confirm_booking" and PUTTING_OFF.search(turn.text):
            ending = True  # 我再考虑考虑，先不订了 at a read-back: the request ends (a bare 算了 may pick another)
        if ending and CLOSING.search(turn.text) and not any(a.act in ("inform", "modify", "select") for a in rest):
            closing = any(a.act == "thanks" for a in rest)
            self._give_up(
                state, turn, closing, later=bool(rest)
            )  # 那算了，不订了 / 就不改了 / 我再想想: the request ends here
            return
        if state["open"] == "confirm_booking":
            pending = state["pending"]
            if pending is not None and pending["domain"] == state["domain"]:
                state["refused"] = [*state.get("refused", []), int(pending["id"])]
            state["pending"] = None
            state["open"] = "choose_offer" if state["offers"] else None
            turn.parts.append("好的，没有预订。" if zh else "All right, nothing is booked.")
            if not any(a.act in ("inform", "modify") for a in rest) and state["offers"]:
                rows = self._offer_rows(state)
                turn.parts.append(
                    R.options(
                        state["domain"],
                        rows,
                        "您可以换一个，或者告诉我要改的条件：" if zh else "Pick another one or tell me what to change:",
                        lang,
                    )
                )
                turn.prompted = True
            return
        if state["open"] == "offer_alternative":
            if any(a.slots.get("availability") for a in rest):
                return  # insisting on the conditions: answered (none), and the alternative stays on offer
            state["suggestion"] = None
            state["open"] = "change"  # the request stays under way: 太贵了，改坐高铁吧 keeps the route
            if not any(a.act in ("inform", "modify") for a in rest):
                turn.parts.append(
                    "好的。请问您想改哪个条件（日期、时间、预算等）？"
                    if zh
                    else "All right. What would you like to change (date, time, budget, ...)?"
                )
                state["open"] = "change"
                turn.prompted = True
            return
        if state["open"] in ("anything_else", None) and not rest:
            self._close(state, turn)
            return
        if state["open"] == "choose_offer" and not rest:
            turn.parts.append(
                "好的。您可以告诉我要改的条件（日期、时段、预算等）。"
                if zh
                else "All right. Tell me what to change (date, time, budget, ...)."
            )
            turn.prompted = True

    def _on_confirm(self, state: TaskState, act: Act, turn: _Turn, rest: list[Act]) -> None:
        if state["open"] == "confirm_cancel" and state.get("cancel"):
            self._cancel(state, turn)
            return
        pending = state.get("pending")
        if state["open"] == "confirm_booking" and pending:
            self._book(state, pending, turn)
            return
        if state["open"] == "offer_alternative" and state.get("suggestion"):
            # "嗯…那就第1个" picks one; "动车也行，不过时间放宽" takes the suggestion and then changes more
            if not any(a.act in ("select", "deny") for a in rest):
                self._accept_suggestion(state, turn)
            return
        if state["open"] == "anything_else" and not rest:
            if turn.booked:  # 对，两张，确认: a second yes for the booking just made, no goodbye
                return
            self._close(state, turn)
        elif state["open"] == "choose_offer" and not any(a.act == "select" for a in rest):
            # a yes with no offer chosen books nothing; a further request said with it waits for the choice
            if not turn.prompted:  # (a choice said before it that fit none has asked which one already)
                turn.parts.append("请先告诉我要订哪一个。" if state["language"] == "zh" else "Tell me which one first.")
            turn.unresolved = True

    def _on_select(self, state: TaskState, act: Act, turn: _Turn, rest: list[Act]) -> None:
        if turn.dirty and act.slots.get("feature"):  # 不限时间，要最便宜的: chosen among the offers found anew
            turn.deferred = act
            return
        lang = state["language"]
        domain = state["domain"]
        rows = self._offer_rows(state)
        if not rows or not domain:
            turn.parts.append("目前没有可选的结果。" if lang == "zh" else "There are no options to choose from.")
            return
        found = self._resolve(domain, rows, act.slots)
        feature = text_or_none(act.slots.get("feature"))
        suggested = dict(state.get("suggestion") or {})
        superlative = re.search(r"(最早|最晚|最迟|最快|最好|最贵|最高|earliest|latest|fastest)", turn.text, re.I)
        if feature and superlative and set(act.slots) == {"feature"} and "domain" not in suggested:
            # 要最早的一班: the earliest of all that fit (with the change offered, if one is), not only of the
            # cheapest ones listed (早一点的那个 compares the listed ones)
            slots = dict(state["slots"])
            if state["open"] == "offer_alternative":
                slots = {k: v for k, v in {**slots, **suggested}.items() if v is not None}
            if state["open"] in ("choose_offer", "offer_alternative"):
                every = self.db.search(domain, self._constraints(domain, slots), limit=1000)
                found = self._resolve(domain, every, act.slots) or found
        if not found and act.slots.get("code") and domain in ("flight", "train"):
            # 就D6912吧: on the route, not listed; 那T665的软卧下铺呢: in the class and berth said with it
            found = self._by_code(state, domain, str(act.slots["code"]), dict(act.slots))
        if not found and act.slots.get("seat_class") and domain in ("flight", "train"):
            # 就9点35那趟，一等座: the train chosen, in a class not listed
            same = self._resolve(domain, rows, {k: v for k, v in act.slots.items() if k not in ("seat_class", "berth")})
            codes = {R.code_of(r) for r in same}
            if len(codes) == 1:
                found = self._by_code(state, domain, codes.pop(), dict(act.slots))
        named = {k: v for k, v in act.slots.items() if k in ("brand", "district", "airline")}
        if not found and named and set(act.slots) == set(named) and state["open"] == "choose_offer":
            self._update(state, named, turn, modify=True)  # 那维也纳呢 (not listed): searched for, not refused
            return
        if len(found) != 1 and act.slots == {"ref": "this"} and any(a.act in ("inform", "modify") for a in rest):
            return  # "No, that one arrives at Hankou … I need one to Wuhan Station": what is said next decides
        if len(found) != 1:
            zh = lang == "zh"
            if found:
                head = "有几个都符合，" if zh else "Several fit; "
                rows = found
            elif act.slots.get("ref") == "this":
                head = "列出的有几个，" if zh else "There are several; "
            else:
                head = "列出的结果里没有您说的这个，" if zh else "None of the listed options is that one; "
            if state["open"] != "offer_alternative":  # an alternative stays on offer while the user picks
                state["open"], state["pending"] = "choose_offer", None
            turn.parts.append(
                R.options(domain, rows, head + ("请问是哪一个？" if zh else "which one do you mean?"), lang).rsplit(
                    "\n", 1
                )[0]
                + "\n"
                + R.CHOOSE[lang]
            )
            state["offers"] = [row["id"] for row in rows]
            turn.prompted = True
            return
        item = found[0]
        needed = as_int(state["slots"].get("passengers") or 1)
        if domain in ("flight", "train") and item.get("seats") is not None and as_int(item.get("seats")) < needed:
            self._too_few_seats(state, item, needed, turn)  # 2 left for 3: said, nothing read back
            return
        accepted = state.get("suggestion")
        if state["open"] == "offer_alternative" and accepted:
            # choosing one of the alternatives listed accepts the change they were found with
            for key, value in accepted.items():
                if key == "domain":
                    continue
                if value is None:
                    state["slots"].pop(key, None)
                else:
                    state["slots"][key] = value
            state["suggestion"] = None
        state["pending"] = self._pending_for(state, domain, item)
        state["open"] = "confirm_booking"
        turn.chosen = True
        if any(a.act in ("inform", "modify") for a in rest):
            turn.chosen_then_changed = True  # 就第一个吧，要两张: read back once, after the change
            return
        if any(a.act == "confirm" for a in rest):
            return  # "就CA7410，订吧": booked by the confirmation that follows, read back in its reply
        turn.parts.append(self._read_back(state))
        turn.prompted = True

    def _too_few_seats(self, state: TaskState, item: Row, needed: int, turn: _Turn) -> None:
        """The offer chosen has fewer seats left than tickets asked: how many are left, and the choice (fewer
        tickets, or another one)."""
        lang, left = state["language"], as_int(item.get("seats") or 0)
        code, day = R.code_of(item), as_str(item.get("date"))
        if lang == "zh":
            what = f"{code}（{R.date_text(day, lang)} {item.get('seat_class')}）"
            text = f"抱歉，{what}已经售完了。" if left <= 0 else f"抱歉，{what}只剩{left}张了，不够{needed}张。"
            text += f"要订{left}张，还是换一班？" if left > 0 else "请换一班。"
        else:
            what = f"{code} ({day}, {item.get('seat_class')})"
            text = f"Sorry, {what} is sold out." if left <= 0 else f"Sorry, {what} has only {left} left, not {needed}."
            text += f" Book {left}, or another one?" if left > 0 else " Please pick another one."
        turn.parts.append(text)
        state["pending"] = None
        if left > 0:  # a yes takes the seats left on that one
            state["suggestion"] = {"passengers": left, "code": code}
            state["open"], state["alternative"] = "offer_alternative", text
        elif state["open"] != "offer_alternative":
            state["open"] = "choose_offer" if state["offers"] else state["open"]
        turn.prompted = True

    def _by_code(self, state: TaskState, domain: str, code: str, said: JSONDict | None = None) -> list[Row]:
        """The cheapest row of flight/train ``code`` on the route and date under way (whatever window, kind or
        budget was asked), in the class asked for (``said`` with the choice, or before) if it has one: a code
        the user names that is not listed."""
        slots = {**state["slots"], **(said or {})}
        route = {k: slots[k] for k in ("dep_city", "arr_city", "date") if slots.get(k)}
        if len(route) < 3:
            return []
        rows = [r for r in self.db.search(domain, route, limit=1000) if R.code_of(r).upper() == code.upper()]
        if said and said.get("berth"):
            rows = [r for r in rows if r.get("berth") == said["berth"]] or rows
        classes = slots.get("seat_class")
        wanted = set(classes) if isinstance(classes, list) else {classes} if classes else set()
        fitting = [r for r in rows if r.get("seat_class") in wanted] or rows
        return fitting[:1]

    def _on_inform(self, state: TaskState, act: Act, turn: _Turn, rest: list[Act]) -> None:
        self._update(state, dict(act.slots), turn, modify=False)

    def _on_modify(self, state: TaskState, act: Act, turn: _Turn, rest: list[Act]) -> None:
        self._update(state, dict(act.slots), turn, modify=True)

    # ------------------------------------------------------------------ state changes
    def _update(self, state: TaskState, slots: JSONDict, turn: _Turn, modify: bool) -> None:
        if turn.queued is not None:  # the rest of a request that waits for the read-back to be confirmed
            said = text_or_none(slots.get("domain"))
            if said and said != turn.queued.get("domain"):  # 另外订酒店，还有后天的火车票: each its own request
                turn.queued = {"domain": said}
                state["queue"].append(turn.queued)
            turn.queued.update(slots)
            return
        if self._for_queued_hotel(state, slots, turn):
            return
        offered = state.get("suggestion") or {}
        if (
            state["open"] == "offer_alternative"
            and offered.get("code")
            and slots.get("passengers") == offered.get("passengers")
            and set(slots) <= {"passengers", "domain"}
        ):
            self._accept_suggestion(state, turn)  # 那就订两张吧 when only two are left on the one chosen
            return
        facts = turn.booked_facts
        if facts and slots and all(v is not None and same_value(facts.get(k), v) for k, v in slots.items()):
            return  # "周二啊，行，订一晚" / "三星可以，订了": what was just booked said again with its yes
        if turn.chosen and all(
            state["domain"] == value if key == "domain" else same_value(state["slots"].get(key), value)
            for key, value in slots.items()
        ):
            return  # "就5点那班吧，还是商务舱": the class said again with the choice changes nothing
        if turn.cancel_asked and state["open"] == "confirm_cancel":
            # "把这张机票退了，改坐火车": the request waits until the cancellation is answered
            implied = bool((state.get("cancel") or {}).get("implied"))
            waiting: JSONDict = {**slots, "after_cancel": True, "implied": implied}
            state["queue"] = [waiting]
            turn.queued = waiting
            lang = state["language"]
            turn.parts.append(
                "取消之后再为您查新的行程。" if lang == "zh" else "Once it is cancelled I'll look for the new trip."
            )
            return
        if state["open"] == "choose_change":  # a new request instead of saying which booking to change
            state["change"], state["open"] = None, "anything_else"
        if state["open"] in ("confirm_cancel", "choose_cancel"):  # a new request: the booking stays
            asked = state.get("cancel") or {}
            state["cancel"], state["open"] = None, asked.get("resume")
            turn.parts.append("好的，没有取消。" if state["language"] == "zh" else "All right, nothing was cancelled.")
        self._widen_window(state, slots, turn.text)
        back = slots.pop("return_leg", None)
        note = self._queue_way_back(state, slots, back) if isinstance(back, dict) else ""
        if note:
            turn.notes.append(note)
        unserved = text_or_none(slots.pop("unserved", None))
        if unserved:  # 三亚: said plainly, with the cities there are, never searched as another city
            turn.parts.append(self._unserved(unserved, state["language"]))
        relative = text_or_none(slots.pop("relative", None))
        if relative:  # 便宜点的 / 早一点的: a bound from the offers on the table; undone if nothing is beyond it
            before: _Before = {
                "slots": state["slots"],
                "offers": state["offers"],
                "open": state["open"],
                "pending": state["pending"],
                "suggestion": state["suggestion"],
            }
            turn.relative = (relative, copy.deepcopy(before))
            period = text_or_none(state["slots"].get("period"))
            if period in WINDOWS and {"time_from", "time_to"} & set(slots):
                start, end = WINDOWS[period]  # earlier/later within the window said
                if "time_to" in slots and start < as_str(slots["time_to"]):
                    slots.setdefault("time_from", state["slots"].get("time_from") or start)
                if "time_from" in slots and end > as_str(slots["time_from"]):
                    slots.setdefault("time_to", state["slots"].get("time_to") or end)
        domain = text_or_none(slots.pop("domain", None))
        starting = state["open"] in (None, "anything_else") or state["domain"] is None
        reading_back = state["open"] == "confirm_booking" and state.get("pending")
        holding = turn.unresolved and state["open"] == "choose_offer" and bool(state["offers"])
        if (
            (reading_back or holding)
            and domain
            and domain != state["domain"]
            and (holding or "hotel" in (domain, state["domain"]))
        ):
            # a further item asked for before the read-back was confirmed: it waits, the read-back stays open
            queued: JSONDict | None = next((q for q in state["queue"] if q.get("domain") == domain), None)
            if queued is None:
                queued = {"domain": domain}
                state["queue"].append(queued)
            queued.update(slots)
            turn.queued = queued
            lang = state["language"]
            if holding:
                turn.parts.append("好的，稍后为您办理。" if lang == "zh" else "Sure, right after this one.")
            elif turn.chosen and turn.parts:  # the read-back of the choice just made stays the last line
                turn.parts.insert(-1, "好的，稍后为您办理。" if lang == "zh" else "Sure, right after this one.")
            else:
                turn.parts.append(
                    "好的，稍后为您办理。先确认一下刚才这个："
                    if lang == "zh"
                    else "Sure, right after this one. First: "
                )
            return
        if reading_back and domain and domain != state["domain"]:
            lang = state["language"]
            ticket = R.TICKET_NAMES[lang][as_str(state["domain"])]
            turn.parts.append(
                f"好的，刚才的{ticket}没有预订。" if lang == "zh" else f"All right, the {ticket} was not booked."
            )
        if (
            domain
            and turn.started
            and "hotel" in (domain, turn.started)
            and domain != turn.started
            and state["domain"] == turn.started
        ):
            # 明天坐火车去西安，到了在雁塔区住一晚: the hotel waits until the trip asked first is booked
            stay = text_or_none(state["slots"].get("date"))
            if turn.started == "hotel" and stay and isinstance(slots.get("date"), str):
                slots["date"] = not_before(as_str(slots["date"]), stay)  # 住两晚…周日飞回: the Sunday after
            if domain != "hotel" and not slots.get("dep_city") and state["slots"].get("city"):
                slots["dep_city"] = state["slots"]["city"]  # (from where one stays)
            state["queue"].append({"domain": domain, **slots})
            turn.notes.append(self._waiting_note(state["language"], domain, slots))
            return
        onward = self._onward(state, domain, slots, turn)
        if onward:  # 上午坐高铁去南京；第二天再从南京飞昆明: the second trip waits for the first
            turn.notes.append(onward)
            return
        if domain and (starting or domain != state["domain"]):
            self._start(state, domain, slots, switch=not starting, turn=turn)
            turn.started = domain
        elif starting and (state["domain"] is None or state["open"] == "anything_else"):
            guess = self._guess_domain(slots) or self._way_back(state, slots, turn.text)
            if guess is None:
                # after a booking, constraints without a domain are a new request whose kind must be asked
                guess = None if state["open"] == "anything_else" and slots else state["domain"]
            self._start(state, guess, slots, switch=False, turn=turn)
            turn.started = state["domain"]
        else:
            self._merge(state, slots)
        if state["open"] == "confirm_booking" and state["pending"]:
            turn.previous = state["pending"]  # re-read the same offer back if it still fits ("是两间吧？")
            turn.understood_change = turn.understood_change or bool(slots) or bool(domain)
            turn.reclassed = bool(slots) and set(slots) <= {"seat_class", "berth"}
        state["pending"] = None
        state["suggestion"] = None
        turn.dirty = True

    def _hotel_clause(self, state: TaskState, acts: list[Act], text: str) -> list[Act]:
        """明天坐火车去西安，到了在雁塔区住一晚: a trip and a stay asked in one turn are two requests (the stay
        waits for the trip, ``_update``), whether the reader heard the stay's clause as part of the trip, as an
        aside, or not at all."""
        if state["open"] in ("confirm_booking", "confirm_cancel", "choose_cancel", "choose_change"):
            return acts
        if any(a.act in ("select", "confirm", "cancel_booking", "change_booking") for a in acts):
            return acts
        informs = [a for a in acts if a.act in ("inform", "modify")]
        trip = next(
            (
                a
                for a in informs
                if a.slots.get("domain") in ("flight", "train")
                or (a.slots.get("domain") is None and {"dep_city", "arr_city"} <= set(a.slots))
            ),
            None,
        )
        if trip is None or any(a.slots.get("domain") == "hotel" for a in informs):
            return acts
        clauses = re.split(r"(?<=[，,。；;！!])", text)
        start = next((i for i, c in enumerate(clauses) if i and re.search(r"(住|酒店|宾馆)", c)), None)
        if start is None:
            return acts
        hotel: JSONDict = {k: trip.slots.pop(k) for k in [*HOTEL_ONLY, "city"] if k in trip.slots}
        if not hotel:
            said = slots_for("inform", "".join(clauses[start:]), Context(), self.gazetteer, self.today, self.by_sound)
            hotel = {k: v for k, v in (said or {}).items() if k in HOTEL_ONLY or k in ("city", "date", "arr_city")}
            if "arr_city" in hotel:
                hotel["city"] = hotel.pop("arr_city")
            acts = [a for a in acts if a.act != "out_of_scope"]
        hotel.setdefault("city", trip.slots.get("arr_city"))
        if trip.slots.get("date") and hotel.get("date") == trip.slots.get("date"):
            hotel.pop("date")  # (the trip's day: the stay starts the day one arrives)
        index = acts.index(trip)
        return [*acts[: index + 1], Act("inform", {"domain": "hotel", **hotel}), *acts[index + 1 :]]

    def _onward(self, state: TaskState, domain: str | None, slots: JSONDict, turn: _Turn) -> str:
        """A second trip said in the turn that asked for a first one, from where that one ends (上海→南京, then
        南京→昆明; a train, then a flight; a way back): it waits in the queue, in the order said, with its own
        conditions; what the reply says of it (nothing when the slots are no further trip)."""
        first = turn.started
        kind = domain or first
        current = state["slots"]
        if first not in ("flight", "train") or state["domain"] != first or kind not in ("flight", "train"):
            return ""
        route = (slots.get("dep_city") or current.get("arr_city"), slots.get("arr_city"))
        if not (current.get("dep_city") and current.get("arr_city")) or not route[1]:
            return ""
        if route[0] != current["arr_city"] or route[1] == current["arr_city"]:
            return ""  # (another route said for the trip asked first corrects it: it starts where that one ends)
        if not slots.get("dep_city") and not domain:
            return ""  # (a destination alone, with no new kind of trip, corrects the first trip)
        day = text_or_none(slots.get("date")) or text_or_none(current.get("date"))
        if day and text_or_none(current.get("date")):
            day = not_before(day, as_str(current["date"]))
        leg: JSONDict = {"domain": kind, **slots, "dep_city": route[0], "arr_city": route[1]}
        if day:
            leg["date"] = day
        if current.get("passengers") and "passengers" not in leg:
            leg["passengers"] = current["passengers"]
        state["queue"].append(leg)
        return self._waiting_note(state["language"], kind, leg)

    @staticmethod
    def _waiting_note(lang: str, domain: str, leg: JSONObject) -> str:
        """What the reply says of a request waiting for the one under way (12月13日昆明→成都的航班等这一程订好后
        为您查。)."""
        what = R.DOMAIN_NAMES[lang].get(domain, domain)
        day = text_or_none(leg.get("date"))
        route = (text_or_none(leg.get("dep_city")), text_or_none(leg.get("arr_city")))
        if domain == "hotel" or not route[0] or not route[1]:
            return f"{what}等这一程订好后为您查。" if lang == "zh" else f"The {domain} comes right after this one."
        if lang == "zh":
            return f"{R.date_text(day, lang) if day else ''}{route[0]}→{route[1]}的{what}等这一程订好后为您查。"
        return f"The {domain} {route[0]} → {route[1]}{f' on {day}' if day else ''} comes right after this one."

    @staticmethod
    def _for_queued_hotel(state: TaskState, slots: JSONDict, turn: _Turn) -> bool:
        """四星以上的 / 酒店要浦东的 said while a trip is under way and a hotel waits in the queue: a condition
        only a hotel has goes to the hotel waiting (it is not dropped, nor does it replace the trip)."""
        queued = next((q for q in state["queue"] if q.get("domain") == "hotel"), None)
        said = {k: v for k, v in slots.items() if k != "domain"}
        if queued is None or state["domain"] == "hotel" or slots.get("domain") not in (None, "hotel"):
            return False
        if not said and slots.get("domain") == "hotel" and state["open"] != "confirm_booking":
            return True  # 酒店要…: the hotel named is the one waiting (what follows is for it)
        if not said or not set(said) <= HOTEL_ONLY:
            return False
        queued.update(said)
        lang = state["language"]
        turn.parts.append("好的，酒店按这个为您查。" if lang == "zh" else "All right, the hotel will be searched so.")
        return True

    @staticmethod
    def _way_back(state: TaskState, slots: JSONDict, text: str) -> str | None:
        """After a trip was booked, a trip said without saying how (那周五回来的呢 / 周日北京回上海的): the same way
        to travel; the way back (回来 / 返程) runs the booked route in reverse unless a route is said."""
        trips = [b for b in live_bookings(state["bookings"]) if b["domain"] != "hotel"]
        if not trips or "city" in slots:
            return None
        last = trips[-1]
        back = bool(RETURN_LEG.search(text))
        if not back and not {"dep_city", "arr_city"} & set(slots):
            return None
        if back:
            if not slots.get("dep_city") and last.get("arr_city") and slots.get("arr_city") != last["arr_city"]:
                slots["dep_city"] = last["arr_city"]
            if not slots.get("arr_city") and last.get("dep_city") and slots.get("dep_city") != last["dep_city"]:
                slots["arr_city"] = last["dep_city"]
        return last["domain"]

    @staticmethod
    def _widen_window(state: TaskState, slots: JSONDict, text: str) -> None:
        """下午的也可以 while morning trains are listed or offered instead: the window said is added to the one
        asked (one span, when the two meet or overlap), not put in its place."""
        period = text_or_none(slots.get("period"))
        if (
            period not in WINDOWS
            or not ALSO_FINE.search(text)
            or state["open"] not in ("choose_offer", "offer_alternative")
        ):
            return
        current = state["slots"]
        before = text_or_none(current.get("period"))
        start, end = WINDOWS[before] if before in WINDOWS else (current.get("time_from"), current.get("time_to"))
        if not isinstance(start, str) or not isinstance(end, str):
            return
        new_start, new_end = WINDOWS[period]
        if new_start > end or start > new_end:
            return  # (上午 and 晚上: apart, the one said replaces)
        slots.pop("period")
        slots["time_from"], slots["time_to"] = min(start, new_start), max(end, new_end)

    @staticmethod
    def _queue_way_back(state: TaskState, slots: JSONDict, back: JSONDict) -> str:
        """The way back said with the way out waits in the queue (the route reversed); what the reply says of it."""
        dep = text_or_none(slots.get("arr_city") or state["slots"].get("arr_city"))
        arr = text_or_none(slots.get("dep_city") or state["slots"].get("dep_city"))
        domain = text_or_none(slots.get("domain")) or state["domain"]
        lang, day = state["language"], as_str(back.get("date"))
        if not (dep and arr and domain in ("flight", "train")):
            return ""
        said = {**state["slots"], **slots}
        kept = _kept_for_way_back(said, back)
        state["queue"].append({"domain": domain, "dep_city": dep, "arr_city": arr, **kept, **back})
        if lang == "zh":
            return f"回程（{R.date_text(day, lang)}{dep}→{arr}）等这一程订好后为您查。"
        return f"The way back ({dep} → {arr}, {day}) comes right after this one."

    def _unserved(self, city: str, lang: str) -> str:
        """抱歉，暂时不能查三亚的行程和酒店。目前可以查的城市有：…"""
        served = [c for c in dict.fromkeys(self.gazetteer.cities.values()) if not c.isascii()]
        if lang == "zh":
            return f"抱歉，暂时不能查{city}的机票、火车票和酒店。目前可以查的城市有：{'、'.join(served)}。"
        names = ", ".join(self.gazetteer.english.get(c, c) for c in served)
        return f"Sorry, {city} is not covered. The cities I can search are: {names}."

    def _guess_domain(self, slots: JSONObject) -> str | None:
        if {"city", "district", "stars", "min_stars", "brand", "nights", "rooms", "guests", "check_out"} & set(slots):
            return "hotel"
        if "train_kinds" in slots or str(slots.get("seat_class", "")).endswith(("座", "卧")):
            return "train"
        if isinstance(slots.get("seat_class"), list) or slots.get("berth"):
            return "train"
        if str(slots.get("seat_class", "")).endswith("舱") or slots.get("airline"):
            return "flight"
        places = [slots.get("dep_place"), slots.get("arr_place")]
        for place in filter(None, places):
            return "flight" if as_str(place).endswith("机场") else "train"
        return None

    def _start(self, state: TaskState, domain: str | None, slots: JSONDict, switch: bool, turn: _Turn) -> None:
        """A new task (or a switch of the current one to another domain)."""
        state["refused"] = []
        old = dict(state["slots"])
        last = state["bookings"][-1] if state["bookings"] else None
        new: JSONDict = {}
        if state["domain"] is None and state.get("open") == "domain":
            new = old  # 坐飞机 answering "飞机还是火车？": the route, date and time said before stay
        elif switch and domain in ("flight", "train") and state["domain"] in ("flight", "train"):
            new = {k: v for k, v in old.items() if k in TRIP_KEYS}  # the route and time stay, the segment's not
        elif switch and domain == "hotel" and state["domain"] in ("flight", "train"):
            new = {"city": old.get("arr_city"), "date": old.get("date")}
        elif switch and domain in ("flight", "train") and state["domain"] == "hotel":
            new = {"arr_city": old.get("city"), "date": old.get("date")}
        elif domain == "hotel" and last and last["domain"] in ("flight", "train") and last.get("status") != "cancelled":
            new = {"city": last["arr_city"], "date": last["arrival_date"]}  # stay from the day one arrives
            if last["arrival_date"] != last["date"] and "date" not in slots:
                lang = state["language"]
                turn.notes.append(
                    f"您{R.date_text(last['arrival_date'], lang)}到达{last['arr_city']}，按这一天入住。"
                    if lang == "zh"
                    else f"You arrive on {last['arrival_date']}, so check-in is that day."
                )
        elif domain in ("flight", "train") and last:
            new = {"dep_city": last.get("arr_city") or last.get("city")} if "dep_city" not in slots else {}
            reverse = slots.get("arr_city") == last.get("dep_city") and slots.get("dep_city") in (
                None,
                last.get("arr_city"),
            )
            if state["domain"] == domain == last["domain"] and (RETURN_LEG.search(turn.text) or reverse):
                new |= _kept_for_way_back(old, slots)  # 那周日回来的呢: the way out's class, kind and window
            stay = last.get("city") if last["domain"] == "hotel" else None
            came = slots.get("arr_city")
            if (
                stay
                and "dep_city" not in slots
                and came
                and came != stay
                and re.search(f"{came}(过去|过来)", turn.text)
            ):
                slots = {**slots, "dep_city": came}  # 郑州过去的高铁 after a hotel in 西安: from 郑州 to the stay
                slots.pop("arr_city")
                new = {}
            if "dep_city" in slots and "arr_city" not in slots and stay and slots["dep_city"] != stay:
                new["arr_city"] = stay  # 上海过去的高铁 after a hotel in 北京: to where the stay is
            if "date" not in slots and SAME_DAY.search(turn.text):
                new["date"] = last["date"] if last["domain"] == "hotel" else last.get("arrival_date")
            if last["domain"] == "hotel" and CHECK_OUT_DAY.search(turn.text):
                nights = int(last.get("nights") or 1)  # 退房那天回上海: the day the stay ends
                slots = {**slots, "date": (dt.date.fromisoformat(last["date"]) + dt.timedelta(days=nights)).isoformat()}
        state["domain"] = domain
        state["slots"] = {k: v for k, v in new.items() if v}
        state["offers"], state["pending"], state["failures"] = [], None, {}
        if not switch:
            state["rebook"] = None  # a new request: a change under way is dropped (the booking stays as it was)
        self._merge(state, slots)

    def _merge(self, state: TaskState, slots: JSONDict) -> None:
        current = state["slots"]
        swapping = {"stars", "min_stars", "district", "max_price", "not_stars", "not_district"} & set(slots)
        if state["domain"] == "hotel" and state.get("rebook") and swapping and "brand" not in slots:
            brand = current.pop("brand", None)  # 换成四星的 while the stay booked is being changed: another hotel
            if brand:
                others = [str(v) for v in listed(current.get("not_brand")) if v != brand]
                current["not_brand"] = [*others, str(brand)]
        if state["domain"] in ("flight", "train") and slots.get("city") and not slots.get("arr_city"):
            # 回上海，帮我看看火车 heard while a hotel was under way: for a trip the city is where it goes
            slots = {k: v for k, v in slots.items() if k != "city"} | {"arr_city": slots["city"]}
        if state["domain"] == "hotel" and slots.get("arr_city") and not slots.get("city"):
            # 下周三到桂林，住三晚: for a hotel the place one goes to is where one stays (a route is no hotel slot)
            slots = {k: v for k, v in slots.items() if k not in ("dep_city", "arr_city")} | {"city": slots["arr_city"]}
        for key in ("dep_city", "arr_city", "city"):
            if key in slots and slots[key] != current.get(key):
                state["last_city_slot"] = key
        if "period" in slots:
            current.pop("time_from", None)
            current.pop("time_to", None)
        if "time_from" in slots or "time_to" in slots:
            current.pop("period", None)
        if "city" in slots and slots["city"] != current.get("city"):
            district = text_or_none(slots.get("district") or current.get("district"))
            if not district or slots["city"] not in self.gazetteer.districts.get(district, ()):
                current.pop("district", None)  # (西湖区 said before 杭州 stays: it is a district of that city)
        if "check_out" in slots or ("date" in slots and current.get("check_out")):
            start = text_or_none(slots.get("date") or current.get("date"))
            end = text_or_none(slots.get("check_out") or current.get("check_out"))
            if start and end and end > start:
                slots["nights"] = (dt.date.fromisoformat(end) - dt.date.fromisoformat(start)).days
        if "nights" in slots:
            current.pop("check_out", None)
        if "min_stars" in slots and "stars" not in slots:
            current.pop("stars", None)  # 三星以上也可以 after 五星: the lower bound replaces the exact rating
        if "stars" in slots and "min_stars" not in slots:
            current.pop("min_stars", None)
        if "seat_class" in slots and "berth" not in slots and current.get("berth"):
            classes = slots["seat_class"] if isinstance(slots["seat_class"], list) else [slots["seat_class"]]
            if not any(c in ("硬卧", "软卧") for c in classes):
                current.pop("berth", None)
        for excluded, wanted in EXCLUDED.items():
            if excluded in slots:
                kept = [v for v in listed(current.get(wanted)) if v not in listed(slots[excluded])]
                current[wanted] = cast(JSONValue, (kept if wanted == "train_kinds" else kept[0]) if kept else None)
            if slots.get(wanted):
                said = listed(slots[wanted])
                kept = [v for v in listed(current.get(excluded)) if v not in said]
                current[excluded] = cast(JSONValue, kept or None)
        current.update(slots)
        for key in [k for k, v in current.items() if v is None]:  # 不限预算 / 别的时间也行: taken back
            current.pop(key, None)
        time_from, time_to = text_or_none(current.get("time_from")), text_or_none(current.get("time_to"))
        if time_from and time_to and time_from >= time_to:
            # 改成晚上8点以后 after 下午2点到5点: the bound said replaces the window it contradicts
            current.pop("time_to" if "time_from" in slots else "time_from", None)
        current.pop("check_out", None) if "nights" in current else None
        if state["domain"] is None and self._guess_domain(current):
            state["domain"] = self._guess_domain(current)
        for key in NOT_FOR.get(state["domain"] or "", ()):
            current.pop(key, None)

    def _accept_suggestion(self, state: TaskState, turn: _Turn) -> None:
        suggestion = dict(state["suggestion"] or {})
        state["suggestion"] = None
        domain = text_or_none(suggestion.pop("domain", None))
        if domain and domain != state["domain"]:
            self._start(state, domain, {}, switch=True, turn=turn)
        for key, value in suggestion.items():
            if value is None:
                state["slots"].pop(key, None)
            else:
                state["slots"][key] = value
        turn.dirty = True

    # ------------------------------------------------------------------ acting
    def _missing(self, state: TaskState) -> str | None:
        domain = state["domain"]
        if domain is None:
            slots = state["slots"]
            return "trip_domain" if {"dep_city", "arr_city"} & set(slots) else "domain"
        for key in REQUIRED[domain]:
            if not state["slots"].get(key):
                return "hotel_date" if key == "date" and domain == "hotel" else key
        return None

    def _advance(self, state: TaskState, turn: _Turn) -> None:
        """After the constraints changed: ask for what is missing, or search and list (or read back one)."""
        lang = state["language"]
        missing = self._missing(state)
        if missing:
            turn.parts.extend(turn.notes)  # (回程…等这一程订好后为您查: said whatever this one asks next)
            turn.notes = []
            state["open"] = missing.replace("hotel_date", "date").replace("trip_domain", "domain")
            state["offers"] = []
            slots = state["slots"]
            if turn.compare and missing == "trip_domain" and {"dep_city", "arr_city", "date"} <= set(slots):
                found = {d: self.db.search(d, self._constraints(d, slots), limit=1000) for d in ("flight", "train")}
                head = self._count_note("flight", slots, 0, lang).split("的航班")[0].removeprefix("为您找到")
                line = comparing.compare_line(found, turn.compare, lang)
                turn.parts.append(f"{head}：{line}" if lang == "zh" else line)
            turn.parts.append(self._slot_question(state, missing, lang))
            return
        domain, slots = state["domain"], state["slots"]
        assert domain is not None  # _missing asks for the domain first
        if domain != "hotel" and slots["dep_city"] == slots["arr_city"]:
            slots.pop("dep_city")
            state["open"] = "dep_city"
            turn.parts.append(
                ("出发地和目的地不能相同。" if lang == "zh" else "Departure and destination cannot be the same. ")
                + R.SLOT_QUESTIONS[lang]["dep_city"]
            )
            return
        constraints = self._constraints(domain, slots)
        rows = self.db.search(domain, constraints, limit=SHOWN)
        code = text_or_none(slots.get("code"))
        if code:  # 把G4990二等座订了: that train or flight only
            every = self.db.search(domain, constraints, limit=1000)
            rows = [r for r in every if R.code_of(r).upper() == code.upper()][:SHOWN]
        if not rows and turn.relative:
            kind, before = turn.relative
            state["slots"], state["offers"], state["open"] = before["slots"], before["offers"], before["open"]
            state["pending"], state["suggestion"] = before["pending"], before["suggestion"]
            said = R.RELATIVE_NONE[lang][kind]
            turn.parts.append(said)
            turn.relative = None
            self._reprompt(state, turn)
            turn.prompted = True
            return
        if not rows:
            turn.parts.extend(turn.notes)
            turn.notes = []
            self._no_result(state, constraints, turn)
            return
        state["failures"] = {}
        state["offers"] = [row["id"] for row in rows]
        previous = turn.previous
        if previous and previous["domain"] == domain:
            every = self.db.search(domain, constraints, limit=500)
            still = [r for r in every if r["id"] == previous["id"]]
            was = self.db.get(domain, int(previous["id"])) if domain != "hotel" else None
            if not still and was is not None and turn.reclassed:
                # 对，换硬卧下铺 at the read-back of K574 硬座: the same train in the class said, when only one fits
                still = [r for r in every if R.code_of(r) == R.code_of(was)]
                still = still if len(still) == 1 else []
            if still:
                again = self._pending_for(state, domain, still[0])
                state["pending"], state["open"] = again, "confirm_booking"
                heard = turn.understood_change or parse_slots(turn.text, self.gazetteer, self.today).has_slots()
                head = "" if turn.chosen_then_changed else self._change_head(previous, again, heard, lang)
                turn.parts.append(head + self._read_back(state))
                return
        if turn.relative:
            turn.parts.append(R.RELATIVE_FOUND[lang][turn.relative[0]])
        elif previous and previous["domain"] == domain:
            turn.parts.append(
                "刚才那个不满足新的条件，为您重新查找。"
                if lang == "zh"
                else "That one no longer fits; here is a new search."
            )
        if turn.notes:
            turn.parts.extend(turn.notes)
        if len(rows) == 1 and rows[0]["id"] in state.get("refused", []):
            # the one that fits is the one refused at its read-back: shown, never read back for a yes again
            state["open"] = "choose_offer"
            turn.parts.append(
                R.options(
                    domain,
                    rows,
                    "符合条件的只有您刚才没要的这一个：" if lang == "zh" else "Only the one you turned down fits:",
                    lang,
                ).rsplit("\n", 1)[0]
                + "\n"
                + (
                    "您可以改一下条件（日期、时段、预算等），或者还是订它。"
                    if lang == "zh"
                    else "You can change a condition (date, time, budget, ...), or still take it."
                )
            )
            return
        if len(rows) == 1:
            state["pending"] = self._pending_for(state, domain, rows[0])
            state["open"] = "confirm_booking"
            head = "只有一个符合条件，" if lang == "zh" else "One option matches: "
            head = "" if self._rebooked(state) is not None else head  # (a change reads back what it becomes)
            turn.parts.append(head + self._read_back(state))
            return
        state["open"] = "choose_offer"
        turn.parts.append(R.options(domain, rows, self._count_note(domain, slots, len(rows), lang), lang))

    @staticmethod
    def _slot_question(state: TaskState, missing: str, lang: str) -> str:
        """The question for a missing slot; a place asked while the day is missing too asks both in one question
        (请问您从哪个城市出发，哪天出发？), so that a user who answers both saves a turn."""
        question = R.SLOT_QUESTIONS[lang][missing]
        domain = state["domain"]
        if missing not in ("dep_city", "arr_city", "city") or domain is None or state["slots"].get("date"):
            return question
        day = R.SLOT_QUESTIONS[lang]["hotel_date" if domain == "hotel" else "date"]
        if lang == "zh":
            return question.rstrip("？") + "，" + day.removeprefix("请问您")
        return question.rstrip("?") + ", and " + day[0].lower() + day[1:]

    @staticmethod
    def _change_head(before: Pending, after: Pending, understood: bool, lang: str) -> str:
        """What to say before re-reading an offer after a change was asked for during its read-back: a change is
        claimed only when the offer read back really differs (another item, day, count or stay)."""
        keys = ("domain", "id", "date", "nights", "rooms", "passengers")
        if any(before.get(k) != after.get(k) for k in keys):
            return "已按您说的修改。" if lang == "zh" else "Changed as you said. "
        if understood:
            return (
                "这一个本来就符合您说的条件，没有变化。"
                if lang == "zh"
                else "This one already fits that; nothing changes. "
            )
        return (
            "抱歉，我没听明白要改成什么，目前还是这一个。"
            if lang == "zh"
            else "Sorry, I did not catch what to change; it is still this one. "
        )

    def _reprompt(self, state: TaskState, turn: _Turn) -> None:
        """Return to the open question (after an aside, a question answered, a booking listed)."""
        lang, open_q = state["language"], state["open"]
        cancel = state.get("cancel") or {}
        if open_q == "confirm_cancel" and cancel.get("order_no"):
            booking = next((b for b in state["bookings"] if b["order_no"] == cancel["order_no"]), None)
            if booking:
                turn.parts.append(cancel_question(booking, lang))
                return
        if open_q == "confirm_cancel" and cancel.get("orders"):
            orders = cancel.get("orders") or []
            turn.parts.append(cancel_all_question([b for b in state["bookings"] if b["order_no"] in orders], lang))
            return
        if open_q == "choose_cancel" and cancel.get("among"):
            turn.parts.append("请说要取消第几个或订单号。" if lang == "zh" else "Which booking should I cancel?")
            return
        if open_q == "choose_change" and state.get("change"):
            turn.parts.append("请说要改签第几个或订单号。" if lang == "zh" else "Which booking should I change?")
            return
        if open_q == "confirm_booking" and state.get("pending"):
            turn.parts.append(self._read_back(state))
        elif open_q == "choose_offer" and state["offers"]:
            rows = self._offer_rows(state)
            turn.parts.append(R.options(state["domain"], rows, "可选的有：" if lang == "zh" else "The options:", lang))
        elif open_q == "offer_alternative":
            turn.parts.append(state.get("alternative") or R.SLOT_QUESTIONS[lang]["domain"])
        elif open_q == "change":
            turn.parts.append("请问您想改哪个条件？" if lang == "zh" else "What would you like to change?")
        elif open_q == "anything_else":
            turn.parts.append(R.ANYTHING_ELSE[lang])
        elif open_q == "domain" and state["slots"]:
            turn.parts.append(R.SLOT_QUESTIONS[lang][self._missing(state) or "domain"])
        elif open_q in ("domain",) or state["domain"] is None:
            if not turn.parts:
                turn.parts.append(R.GREETING[lang])
            elif R.CAN_DO[lang] not in turn.parts[-1]:
                turn.parts.append(R.SLOT_QUESTIONS[lang]["domain"])
            else:
                turn.parts.append("请问有什么需要？" if lang == "zh" else "What do you need?")
        elif open_q:
            missing = self._missing(state)
            if missing:
                turn.parts.append(R.SLOT_QUESTIONS[lang][missing])
            else:
                self._advance(state, turn)

    def _count_note(self, domain: str, slots: JSONObject, shown: int, lang: str) -> str:
        name = R.DOMAIN_NAMES[lang][domain]
        city = self._city_name
        if domain == "hotel":
            where = city(as_str(slots["city"]), lang) + (as_str(slots.get("district", "")) if lang == "zh" else "")
            nights = as_int(slots.get("nights") or 1)
            when = R.date_text(as_str(slots["date"]), lang) + (
                f"入住{nights}晚" if lang == "zh" else f", {nights} night(s)"
            )
        else:
            where = f"{city(as_str(slots['dep_city']), lang)}→{city(as_str(slots['arr_city']), lang)}"
            when = R.date_text(as_str(slots["date"]), lang)
        said = self._said(slots, domain, lang)
        if lang == "zh":
            return f"为您找到{when}{where}{said}的{name}，价格最低的{shown}个："
        return f"Here are the {shown} cheapest matching {name} ({where}, {when}{said}):"

    def _said(self, slots: JSONObject, domain: str, lang: str) -> str:
        """The optional constraints in force, so the user sees none was dropped."""
        parts = []
        for key in ("code", "period", "seat_class", "berth", "airline", "district", "brand", "stars", "min_stars"):
            value = slots.get(key)
            if value in (None, "", []) or (key == "district" and lang == "zh"):
                continue
            if isinstance(value, list):
                value = "或".join(map(str, value)) if lang == "zh" else "/".join(map(str, value))
            if key == "stars":
                value = f"{value}星"
            if key == "min_stars":
                value = f"{value}星及以上"
            parts.append(str(value))
        if slots.get("train_kinds"):
            kinds = {"G": "高铁", "D": "动车"}
            parts.append("/".join(kinds.get(str(k), str(k)) for k in items(slots["train_kinds"])))
        for key in EXCLUDED:
            if slots.get(key):
                names = "、".join(_excluded_name(key, v, lang) for v in items(slots[key]))
                parts.append(f"不要{names}" if lang == "zh" else f"not {names}")
        if slots.get("arr_by"):
            parts.append(f"{slots['arr_by']}以前到达" if lang == "zh" else f"arriving by {slots['arr_by']}")
        if slots.get("arr_after"):
            arrive = slots["arr_after"]
            parts.append(f"{arrive}以后到达" if lang == "zh" else f"arriving after {arrive}")
        start, end = slots.get("time_from"), slots.get("time_to")
        if start and end:
            parts.append(f"{start}–{end}")
        elif start:
            parts.append(f"{start}以后出发" if lang == "zh" else f"leaving after {start}")
        elif end:
            parts.append(f"{end}以前出发" if lang == "zh" else f"leaving before {end}")
        if slots.get("max_price"):
            parts.append(_price_text(as_int(slots["max_price"]), lang))
        parts.extend(limits.said(slots, domain, lang))
        if slots.get("rooms") and as_int(slots["rooms"]) > 1:
            parts.append(f"{slots['rooms']}间" if lang == "zh" else f"{slots['rooms']} rooms")
        if not parts:
            return ""
        return ("、".join(parts)) if lang == "zh" else ", " + ", ".join(parts)

    def _city_name(self, city: str, lang: str) -> str:
        return self.gazetteer.english.get(city, city) if lang == "en" else city

    # ------------------------------------------------------------------ offers and bookings
    def _offer_rows(self, state: TaskState) -> list[Row]:
        domain = state.get("domain")
        if not domain:
            return []
        rows: list[Row] = []
        for item_id in state.get("offers") or []:
            row = self.db.get(domain, item_id)
            if row:
                date = state["slots"].get("date")
                if domain == "hotel" and isinstance(date, str):  # a hotel is offered for the date asked
                    row["date"] = date
                rows.append(row)
        return rows

    def _read_back(self, state: TaskState) -> str:
        """The pending offer read back in full, with the confirmation question."""
        item, pending, lang = self._pending_item(state), state["pending"], state["language"]
        if item is None or pending is None:
            return "抱歉，这个选项已经失效了。" if lang == "zh" else "Sorry, that option is gone."
        text = R.confirm(pending["domain"], item, pending, lang)
        old = self._rebooked(state)
        if old is not None:  # 改签: say which booking it replaces, and that the yes changes it
            if lang == "zh":
                text = text.replace("即将为您预订：", f"改签：{booking_line(old, lang)}将取消，改为：", 1)
                text = text.replace("请问确认预订吗", "请问确认改签吗", 1)
            else:
                number, _, details = booking_line(old, lang).partition(": ")
                text = text.replace("I'll book:", f"I'll change {number} (now {details}) to:", 1)
                text = text.replace("Shall I confirm the booking?", "Shall I make this change?", 1)
        return text

    def _pending_item(self, state: TaskState) -> Row | None:
        pending = state.get("pending")
        if not pending:
            return None
        item = self.db.get(pending["domain"], pending["id"])
        date = pending.get("date")
        if item and pending["domain"] == "hotel" and date is not None:  # the stay's first night
            item["date"] = date
        return item

    def _pending_for(self, state: TaskState, domain: str, item: Row) -> Pending:
        slots = state["slots"]
        pending: Pending = {
            "domain": domain,
            "id": item["id"],
            "date": item.get("date") or text_or_none(slots.get("date")),
        }
        if domain == "hotel":
            pending["date"] = text_or_none(slots.get("date"))
            pending["nights"] = as_int(slots.get("nights") or 1)
            pending["rooms"] = as_int(slots.get("rooms") or 1)
        else:
            pending["passengers"] = as_int(slots.get("passengers") or 1)
        return pending

    @staticmethod
    def _offer_view(domain: str | None, row: Row) -> Row:
        view: Row = {**row}
        if domain in ("flight", "train"):
            view["code"] = R.code_of(row)
        if domain == "hotel":
            view["brand"] = str(row.get("name", "")).split("(")[0]
        return view

    def _resolve(self, domain: str, rows: list[Row], ref: Mapping[str, object]) -> list[Row]:
        """The listed offers a description fits (ordinal, code, brand, district, price, time, feature, this)."""
        views = [self._offer_view(domain, row) for row in rows]
        keep = list(range(len(rows)))
        if "ordinal" in ref:
            n = as_int(ref["ordinal"])
            index = len(rows) - 1 if n == -1 else n - 1
            keep = [index] if 0 <= index < len(rows) else []
        for key in ("code", "brand", "district", "price", "dep_time", "airline", "seat_class", "berth"):
            if key in ref and ref[key] not in (None, ""):
                want = str(ref[key]).upper() if key == "code" else ref[key]
                keep = [
                    i
                    for i in keep
                    if (str(views[i].get(key, "")).upper() if key == "code" else views[i].get(key)) == want
                ]
        feature = text_or_none(ref.get("feature"))
        if feature and keep:
            key_of = {
                "cheapest": lambda v: v["price"],
                "most_expensive": lambda v: -v["price"],
                "earliest": lambda v: v.get("dep_time", ""),
                "latest": lambda v: "".join(chr(255 - ord(c)) for c in v.get("dep_time", "")),
                "fastest": lambda v: comparing.minutes(v) if "arr_time" in v else 0,
                "best": lambda v: (-int(v.get("stars") or 0), -v["price"]),
            }.get(feature)
            if key_of:
                best = min(key_of(views[i]) for i in keep)
                keep = [i for i in keep if key_of(views[i]) == best][:1]
        if ref.get("ref") == "this" and len(keep) > 1:
            keep = []
        return [rows[i] for i in keep]

    def _attribute(self, domain: str, row: Row, key: str, lang: str) -> str:
        zh = lang == "zh"
        name = row.get("name") or R.code_of(row)
        trip_only = ("dep_time", "arr_time", "duration", "dep_place", "arr_place", "airline", "seat_class", "berth")
        if (
            (domain == "hotel" and key in trip_only)
            or (domain != "hotel" and key in ("stars", "district"))
            or (key == "airline" and domain != "flight")
        ):
            return f"{name}没有这一项信息" if zh else f"{name}: not applicable"
        if key == "price":
            unit = "每晚" if domain == "hotel" else "："  # K514：75元, never K51475元 (a code runs into its price)
            return f"{name}{unit}{row['price']}元" if zh else f"{name}: {row['price']} yuan"
        if key == "dep_time":
            return f"{name} {row['dep_time']}出发" if zh else f"{name} leaves at {row['dep_time']}"
        if key == "arr_time":
            day = ("次日" if row.get("arr_days") else "") if zh else (" (+1 day)" if row.get("arr_days") else "")
            return (
                f"{name} {day}{row['arr_time']}到达{row['arr_place']}"
                if zh
                else f"{name} arrives {row['arr_time']}{day}"
            )
        if key == "duration":
            total = comparing.minutes(row)
            return (
                f"{name}全程约{total // 60}小时{total % 60}分" if zh else f"{name} takes {total // 60}h{total % 60:02d}"
            )
        if key in ("seats_left", "rooms_left"):
            left = row.get("rooms") if domain == "hotel" else row.get("seats")
            if left is None:
                return f"{name}这几天没有可订的房间" if zh else f"{name}: none free for those nights"
            return f"{name}还有{left}个{'空房' if domain == 'hotel' else '余票'}" if zh else f"{name}: {left} left"
        labels = {
            "dep_place": "出发",
            "arr_place": "到达",
            "stars": "星级",
            "district": "所在区",
            "airline": "航空公司",
        }
        labels |= {"seat_class": "座位等级", "berth": "铺位"}
        value = row.get(key, "")
        if key == "stars":
            value = f"{value}星"
        if zh:
            return f"{name}{labels.get(key, key)}：{value}"
        said = {"dep_place": "leaves from", "arr_place": "arrives at"}  # where is the first one?
        return f"{name} {said[key]} {value}" if key in said else f"{name} {R.SLOT_NAMES['en'].get(key, key)}: {value}"

    def _give_up(self, state: TaskState, turn: _Turn, closing: bool = False, later: bool = False) -> None:
        """The user drops the request under way (算了 / 不改了): nothing is booked or changed; a change (改签)
        under way leaves the booking as it was. ``later``: more acts follow (the open question is asked after
        them, not in the middle)."""
        lang = state["language"]
        zh = lang == "zh"
        old = self._rebooked(state)
        if old is not None:
            turn.parts.append(
                f"好的，不改签了，订单{old['order_no']}仍然有效。"
                if zh
                else f"All right, no change; booking {old['order_no']} stays as it is."
            )
        else:
            turn.parts.append("好的，这次先不订了。" if zh else "All right, nothing is booked this time.")
        state["rebook"], state["pending"], state["suggestion"], state["offers"] = None, None, None, []
        state["queue"], state["failures"], state["refused"] = [], {}, []
        state["open"] = "anything_else"
        if not closing and not later:  # (不用了，谢谢: the thanks that follows says goodbye)
            turn.parts.append(R.ANYTHING_ELSE[lang])
        turn.prompted = not later

    def _close(self, state: TaskState, turn: _Turn) -> None:
        lang = state["language"]
        state["open"], state["offers"], state["pending"], state["suggestion"] = None, [], None, None
        state["domain"], state["slots"], state["rebook"] = None, {}, None
        turn.parts.append(R.BYE[lang])
        turn.prompted = True

    @staticmethod
    def _language(text: str, previous: str) -> str:
        """The user's language; a bare code, number or 'ok' keeps the previous one; an English sentence with a
        Chinese name in it (Book the 皇冠假日 in Panlong) stays English."""
        words = re.findall(r"[A-Za-z]{2,}", text)
        han = re.findall(r"[\u4e00-\u9fff]", text)
        if han and len(words) >= 3 and len(words) > len(han) / 2:
            return "en"
        if han:
            return "zh"
        if len(words) >= 2 or (words and words[0].lower() in ("hello", "hi", "hey", "yes", "no", "thanks")):
            return "en"
        return previous


__all__ = ["STATE_KEY", "UNDER_WAY_KEYS", "TaskBranch", "TaskTurn", "new_state", "under_way"]
