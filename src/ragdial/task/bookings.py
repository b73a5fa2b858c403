"""Bookings as transactions in the task dialog: booking the offer read back, cancelling (all of it or part),
changing (改签, a longer stay, another day, another hotel) and listing what was booked. Each is read back first
and done only on an explicit yes, in one database transaction (``TravelDB.book`` / ``cancel`` / ``rebook``).

``BookingActs`` is mixed into ``TaskBranch`` (``ragdial.task.manager``), which supplies the search side:
starting and merging a request, and the item an offer read back stands for.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import cast

from ragdial.jsontypes import JSONDict, as_text_or_none
from ragdial.task import replies as R
from ragdial.task.acts import Act, Context, slots_for
from ragdial.task.acts.booked import KEEP_IT, MOVE
from ragdial.task.acts.finders import _code_of, code_domain
from ragdial.task.acts.words import CANCEL
from ragdial.task.db import Gazetteer, Row, TravelDB
from ragdial.task.orders import (
    Booking,
    CancelQuestion,
    booking_line,
    cancel_all_question,
    cancel_question,
    give_back_part,
    live_bookings,
    new_booking,
    trip_of,
    unit,
    which_booking,
)
from ragdial.task.slots import parse as parse_slots
from ragdial.task.state import TRIP_KEYS, Pending, TaskState, _Turn
from ragdial.task.values import as_int, as_str, listed, text_or_none

# the same train or flight as the one booked (改签到19号，还是这趟车)
# a change asked (换成四星的 / 换到锦江区 / 改成西湖区的): a hotel's features said with it change the booked stay
SWAP_WORD = re.compile(r"(换|改|调|挪|switch|change|move|instead)", re.I)
# the other booking left as it is (机票不动 / 火车票别动 / 酒店不变)
UNCHANGED = re.compile(r"(不动|别动|不用动|不变|不改|照旧|keep)", re.I)
# what a hotel swap may say (a star level, district, price or brand; the stay itself is kept)
HOTEL_FEATURES = ("stars", "min_stars", "district", "max_price", "brand", "not_brand", "not_stars", "not_district")
# a change asked with nothing new said: 改一下 / 帮我改改 / 我想修改一下 / change it / can I change something
UNCLEAR_CHANGE = re.compile(
    r"^(帮我|给我|我想|我要|想|要|能不能|能|可以|可不可以|麻烦)?\s*(再)?(改一下|改改|改个东西|修改一下|修改|调整一下|换一下|变更一下|改)"
    r"(吧|呢|呀|啊|行吗|可以吗|吗)?[。.!！?？]*$|^(please\s+|can i\s+|could you\s+|i want to\s+|i'd like to\s+)?"
    r"(change|modify|edit|update|amend)\s+(it|that|this|the booking|my booking|something)\b",
    re.I,
)
# what can be changed, asked when a change says nothing new (by language, then: is it a hotel?)
WHAT_TO_CHANGE = {
    "zh": {
        False: "请问要改什么？可以改日期、时间、舱位或座位、张数，或者换一班。",
        True: "请问要改什么？可以改入住日期、住几晚、房间数，或者换一家（比如换成四星的、换个区）。",
    },
    "en": {
        False: "What should I change: the date, the time, the class or seat, the number of tickets, or another one?",
        True: "What should I change: the check-in date, the nights, the rooms, or another hotel (e.g. four-star, "
        "another district)?",
    },
}
# a request replacing one just cancelled: 重新订 / 再订一家 / 换成…的 / 另订
AGAIN = re.compile(
    r"(重新|重订|再订|再帮我订|再给我订|再找|另订|另外订|换成|换一家|换个|改订|book (again|another)|instead)", re.I
)
# a bare yes (no choice said): 好的 / 行 / yes / ok / sure
BARE_YES = re.compile(r"(好的?|行|可以|嗯+|对|是的?|yes|yeah|yep|ok(ay)?|sure)( please)?[。.!！]*", re.I)
# classes from lowest to highest, by kind of trip (an upgrade goes up this list)
CLASS_ORDER = {
    "flight": ("经济舱", "商务舱", "头等舱"),
    "train": ("硬座", "二等座", "硬卧", "一等座", "软卧", "商务座"),
}
# a question about the bookings made, in English (the Chinese ones are the reader's): what did I book? / my bookings
ASKED_BOOKINGS = re.compile(
    r"(what (did|have) i (book|booked)|what i('ve| have)? booked|my (bookings?|orders?|reservations?|tickets?)\b.*\?|"
    r"(show|list|tell)( me)? (my|the) (bookings?|orders?|reservations?)|booking numbers?)",
    re.I,
)
SAME_TRIP = re.compile(r"(还是|同一|同样|一样的|原来的?|就)(这|那)?(一)?(趟|班|个)?(车|航班|飞机|车次|班次|趟|班)")


class BookingActs:
    """The act handlers of bookings made or to be made (mixed into ``TaskBranch``)."""

    db: TravelDB
    gazetteer: Gazetteer
    today: dt.date

    def _start(self, state: TaskState, domain: str | None, slots: JSONDict, switch: bool, turn: _Turn) -> None:
        raise NotImplementedError  # TaskBranch: a new request (or the current one switched to another domain)

    def _merge(self, state: TaskState, slots: JSONDict) -> None:
        raise NotImplementedError  # TaskBranch: constraints said added to the request under way

    def _pending_item(self, state: TaskState) -> Row | None:
        raise NotImplementedError  # TaskBranch: the item the offer read back stands for

    @staticmethod
    def _code_for_change(state: TaskState, acts: list[Act], text: str) -> list[Act]:
        """改成MU8570 while a change (改签) of a trip asks for the new date or time: that flight or train."""
        code = _code_of(text)
        changes = [a for a in acts if a.act == "change_booking"]
        if changes and code and not any(a.slots.get("code") for a in changes):
            changes[0].slots["code"] = code  # 确认改签，改成MU8570: the code said in another clause
            return acts
        rebook = state.get("rebook")
        if state["open"] != "change" or not rebook or changes:
            return acts
        booking = next((b for b in state["bookings"] if b["order_no"] == rebook["order_no"]), None)
        if booking is None or code is None or code_domain(code) != booking["domain"]:
            return acts
        return [Act("change_booking", {"order_no": booking["order_no"], "code": code})]

    def _no_change_read_back(self, state: TaskState, turn: _Turn) -> None:
        """A change (改签) whose read-back would be the booking itself (same item, day, stay and count) is no
        change: that is said, and the new day or time is asked for, instead of asking to confirm a change."""
        old = self._rebooked(state)
        pending = state.get("pending")
        if old is None or pending is None or state["open"] != "confirm_booking":
            return
        count = pending.get("rooms") or pending.get("passengers") or 1
        same = (
            pending["domain"] == old["domain"]
            and pending["id"] == old["item_id"]
            and pending.get("date") == old["date"]
            and int(pending.get("nights") or 1) == int(old.get("nights") or 1)
            and int(count) == int(old.get("quantity") or 1)
        )
        if not same:
            return
        lang = state["language"]
        state["pending"], state["open"] = None, "change"
        turn.parts[-1] = (
            f"这和订单{old['order_no']}现在的内容一样，没有变化。请问要改到哪天或哪个时间？"
            if lang == "zh"
            else f"That is booking {old['order_no']} as it is; nothing changes. To which date or time?"
        )
        turn.prompted = True

    def _moved(self, state: TaskState, acts: list[Act], text: str) -> list[Act]:
        """不是后天，是周五，能帮我改过去吗 right after a booking: a new day or time said in one clause and the
        move asked in another is a change of the booking made last (read back first), not a new request."""
        live = live_bookings(state["bookings"])
        if state["open"] not in (None, "anything_else") or not live or not MOVE.search(text):
            return acts
        if any(a.act not in ("inform", "modify", "out_of_scope", "deny") for a in acts):
            return acts
        said: JSONDict = {}
        for act in acts:
            if act.act in ("inform", "modify"):
                said |= act.slots
        booking = live[-1]
        if said.get("domain") not in (None, booking["domain"]):
            return acts
        said.pop("domain", None)
        if not said:  # 我记错日子了，应该是周五，能帮我挪过去吗 (read as an aside): the day or time in the turn
            whole = parse_slots(text, self.gazetteer, self.today)
            said = {k: v for k, v in (("date", whole.date), ("period", whole.period)) if v}
            said |= {k: v for k, v in (("time_from", whole.time_from), ("time_to", whole.time_to)) if v}
        if booking["domain"] == "hotel":  # (a time of day changes no stay)
            said = {k: v for k, v in said.items() if k in ("date", "nights", "rooms")}
        when = {"date", "time_from", "time_to", "period"}
        if not said or not set(said) <= when | {"nights", "rooms", "seat_class", "berth"} or not when & set(said):
            return acts
        return [Act("change_booking", {"domain": booking["domain"], "order_no": booking["order_no"], **said})]

    def _hotel_swap(self, state: TaskState, acts: list[Act], text: str) -> list[Act]:
        """换成四星的吧 / 酒店换到锦江区，机票不动 / 把订单3改成西湖区的四星 after a hotel was booked: a star level,
        district or price said with a change word is a change of the hotel booked (another hotel for the same
        stay, read back as a change), not a new request missing its city and day."""
        live = live_bookings(state["bookings"])
        booking = next((b for b in reversed(live) if b["domain"] == "hotel"), None)
        if state["open"] not in (None, "anything_else") or booking is None or not SWAP_WORD.search(text):
            return acts
        bare = [a for a in acts if a.act == "change_booking"]
        if bare and (set(bare[0].slots) - {"domain", "order_no"} or bare[0].slots.get("domain") not in (None, "hotel")):
            return acts
        if bare and bare[0].slots.get("order_no") not in (None, booking["order_no"]):
            booking = next((b for b in live if b["order_no"] == bare[0].slots["order_no"]), None)
            if booking is None or booking["domain"] != "hotel":
                return acts
        said: JSONDict = {}
        for act in acts:
            if act.act in ("inform", "modify"):
                slots = {k: v for k, v in act.slots.items() if k != "domain"}
                if not slots and UNCHANGED.search(text):
                    continue  # 机票不动: the other booking stays, nothing to do for it
                if act.slots.get("domain") not in (None, "hotel"):
                    return acts
                said |= slots
            elif act.act not in ("change_booking", "out_of_scope", "deny", "cancel_booking", "ask_about_booking"):
                return acts
        if bare and not said:
            whole = slots_for("inform", text, Context(), self.gazetteer, self.today)
            said = {k: v for k, v in whole.items() if k in (*HOTEL_FEATURES, "city", "date")}
        if said.get("city") in (None, booking.get("city")):
            said.pop("city", None)
        if said.get("date") == booking.get("date"):
            said.pop("date", None)  # 日期不变 said with the day booked
        for key, booked in (("nights", booking.get("nights") or 1), ("rooms", booking.get("quantity") or 1)):
            if key in said and as_int(said[key]) == int(booked):
                said.pop(key)  # 还是住两晚 / 一间: the stay as booked
        item = self.db.get("hotel", int(booking["item_id"]))
        brand = str(item["name"]).split("(")[0] if item else None
        if brand and said.get("brand") == brand and set(said) - {"brand"}:
            said.pop("brand")  # 刚订的那家亚朵，换成四星的: the brand names the booking, not what is wanted
        if not said or not set(said) <= set(HOTEL_FEATURES):
            return acts
        if brand and not {"brand", "not_brand"} & set(said):
            said["not_brand"] = [brand]  # another hotel, never the one booked again
        return [Act("change_booking", {"domain": "hotel", "order_no": booking["order_no"], **said})]

    @staticmethod
    def _again_as_before(state: TaskState, acts: list[Act], text: str) -> list[Act]:
        """重新订个四星的 / 再订一家西湖区的 right after a booking was cancelled: the request replacing it keeps its
        city and day (a stay's nights and rooms, a trip's route) unless said anew."""
        last = state["bookings"][-1] if state["bookings"] else None
        if state["open"] not in (None, "anything_else") or last is None or last.get("status") != "cancelled":
            return acts
        if not AGAIN.search(text):
            return acts
        informs = [a for a in acts if a.act in ("inform", "modify")]
        if len(informs) != 1 or {"city", "dep_city", "arr_city"} & set(informs[0].slots):
            return acts
        slots = informs[0].slots
        domain = text_or_none(slots.get("domain"))
        hotel_said = bool(set(slots) & set(HOTEL_FEATURES) | {"nights", "rooms"} & set(slots))
        if domain is None:
            domain = "hotel" if hotel_said else last["domain"]
        if domain != last["domain"] and "hotel" in (domain, last["domain"]):
            return acts
        for key, value in trip_of(last, domain).items():
            slots.setdefault(key, value)
        slots["domain"] = domain
        return acts

    @staticmethod
    def _cancel_or_change_said(state: TaskState, acts: list[Act], text: str) -> list[Act]:
        """Turns about a booking the reader could not place: 算了，把它取消吧 while a change is asked (the booking
        being changed is cancelled, read back first); 取消吧 / 退了吧 right after a booking (a cancellation of it,
        not a no to "anything else?"); 改一下 / change it at a read-back or after a booking (a change with nothing
        new said: what to change is asked)."""
        live = live_bookings(state["bookings"])
        names = {a.act for a in acts}
        if "confirm" in names and "ask_about_booking" in names and not re.search(r"(？|\?|吗|呢|哪|什么|多少)", text):
            acts = [a for a in acts if a.act != "ask_about_booking"]  # 好，酒店也订上: a yes, not a question
        said = bool(names & {"inform", "modify", "select", "confirm", "cancel_booking", "change_booking"})
        if live and CANCEL.search(text) and not said and not KEEP_IT.search(text):
            rebooked = state.get("rebook")
            if state["open"] == "change" and rebooked is not None:
                return [Act("cancel_booking", {"order_no": rebooked["order_no"]})]
            if state["open"] in (None, "anything_else") and names & {"deny", "out_of_scope"}:
                return [Act("cancel_booking", {})]
        if names == {"out_of_scope"} and state["bookings"] and ASKED_BOOKINGS.search(text):
            return [Act("ask_about_booking", {})]  # what did I book? / my bookings?: the list, not a refusal
        if names == {"out_of_scope"} and state["open"] == "choose_offer" and BARE_YES.fullmatch(text.strip()):
            return [Act("select", {"ref": "this"})]  # yes while a list is open: which one is asked (or the one)
        if not said and UNCLEAR_CHANGE.search(text.strip()):
            if state["open"] == "confirm_booking" and state.get("pending"):
                return [Act("change_booking", {"unclear": True})]
            if state["open"] in (None, "anything_else") and live:
                return [Act("change_booking", {})]
        return acts

    @staticmethod
    def _swapping(state: TaskState, acts: list[Act]) -> list[Act]:
        """把汉庭退了，换成亚朵: cancelling a booked hotel and asking for another hotel in the same turn is one
        change of that booking (read back once; the yes takes the new rooms and gives the old back in one
        transaction, so the user is never left with neither)."""
        names = [a.act for a in acts]
        if names[:1] != ["cancel_booking"] or len(acts) < 2 or acts[0].slots.get("back"):
            return acts
        booking = next((b for b in reversed(live_bookings(state["bookings"])) if b["domain"] == "hotel"), None)
        named = acts[0].slots.get("order_no")
        if booking is None or (named is not None and named != booking["order_no"]):
            return acts
        wanted: JSONDict = {}
        for act in acts[1:]:
            if act.act not in ("inform", "modify") or act.slots.get("domain") not in (None, "hotel"):
                return acts
            if {"dep_city", "arr_city", "city"} & set(act.slots):
                return acts  # (another city: a new request, not this stay changed)
            wanted |= {k: v for k, v in act.slots.items() if k != "domain"}
        if not wanted:
            return acts
        return [Act("change_booking", {"domain": "hotel", "order_no": booking["order_no"], **wanted})]

    def _on_ask_about_booking(self, state: TaskState, act: Act, turn: _Turn, rest: list[Act]) -> None:
        lang = state["language"]
        domain = as_text_or_none(act.slots.get("domain"))
        mine = [b for b in state["bookings"] if not domain or b["domain"] == domain]
        made = live_bookings(mine)
        cancelled = [b for b in mine if b.get("status") == "cancelled" and not b.get("changed_to")]
        changed = [b for b in mine if b.get("status") == "cancelled" and b.get("changed_to")]
        if not mine:
            what = R.TICKET_NAMES[lang][domain] if domain else ("预订" if lang == "zh" else "bookings")
            turn.parts.append(
                f"您在本次对话中还没有成功的{what}。" if lang == "zh" else f"You have no {what} in this session yet."
            )
            return
        parts = []
        if made:
            head = "您已成功预订（均已确认）：" if lang == "zh" else "Your confirmed bookings:"
            parts.append(head + "\n" + "\n".join(booking_line(b, lang) for b in made))
        if cancelled:
            head = "已取消的预订：" if lang == "zh" else "Cancelled bookings:"
            parts.append(head + "\n" + "\n".join(booking_line(b, lang) for b in cancelled))
        if changed:
            head = "已改签（原订单已取消）：" if lang == "zh" else "Changed (the old booking is cancelled):"
            lines = [
                booking_line(b, lang) + (f" → 订单号{b['changed_to']}" if lang == "zh" else f" → {b['changed_to']}")
                for b in changed
            ]
            parts.append(head + "\n" + "\n".join(lines))
        turn.parts.append("\n".join(parts))

    def _on_cancel_booking(self, state: TaskState, act: Act, turn: _Turn, rest: list[Act]) -> None:
        """Read the booking back and ask; only an explicit yes cancels it (``_cancel``)."""
        lang = state["language"]
        zh = lang == "zh"
        live = live_bookings(state["bookings"])
        together = [b for b in live if b["order_no"] in listed(act.slots.get("orders"))]
        if len(together) > 1:  # 机票和酒店都退了: one question naming each, one yes for all
            resume = (state.get("cancel") or {}).get("resume", state["open"])
            state["cancel"] = {"orders": [b["order_no"] for b in together], "resume": resume}
            state["open"] = "confirm_cancel"
            turn.cancel_asked = True
            turn.parts.append(cancel_all_question(together, lang))
            turn.prompted = True
            return
        fits = [
            b
            for b in live
            if (not act.slots.get("domain") or b["domain"] == act.slots["domain"])
            and (not act.slots.get("order_no") or b["order_no"] == act.slots["order_no"])
        ]
        asked = (state.get("cancel") or {}).get("among")
        if asked and "ordinal" in act.slots:
            index = as_int(act.slots["ordinal"]) - 1
            fits = [b for b in live if b["order_no"] == asked[index]] if 0 <= index < len(asked) else []
        elif asked:
            fits = [b for b in fits if b["order_no"] in asked]
        resume = (state.get("cancel") or {}).get("resume", state["open"])
        if not fits:
            turn.parts.append(
                ("没有找到您说的这个预订，" if live else "您在本次对话中没有可以取消的预订。")
                if zh
                else ("I found no such booking. " if live else "You have no booking to cancel in this session.")
            )
            if not live:
                state["cancel"], state["open"] = None, resume
                return
            fits = live
        if act.slots.get("back"):  # 退一张: only a booking of more than that can give part back
            fits = [b for b in fits if int(b.get("quantity") or 1) > as_int(act.slots["back"])] or fits
        if len(fits) > 1:
            question = "您要取消哪一个？" if zh else "Which one should I cancel?"
            turn.parts.append(which_booking(fits, question, lang))
            among: CancelQuestion = {"among": [b["order_no"] for b in fits], "resume": resume}
            if act.slots.get("back"):
                among["back"] = as_int(act.slots["back"])  # 退一张 of which booking: still one of it
            state["cancel"] = among
            state["open"] = "choose_cancel"
            turn.prompted = True
            return
        booking = fits[0]
        back = as_int(act.slots.get("back") or (state.get("cancel") or {}).get("back") or 0)
        quantity = int(booking.get("quantity") or 1)
        asking: CancelQuestion = {"order_no": booking["order_no"], "resume": resume}
        if act.slots.get("implied"):
            asking["implied"] = True
        if 0 < back < quantity:
            asking["back"] = back  # 两张退一张: the rest stays booked
        elif back and quantity == 1:
            turn.parts.append(
                f"订单{booking['order_no']}只有1{unit(booking, lang)}，退掉就是取消整个订单。"
                if zh
                else f"Booking {booking['order_no']} holds only one, so this cancels it."
            )
        state["cancel"] = asking
        state["open"] = "confirm_cancel"
        turn.cancel_asked = True
        turn.parts.append(cancel_question(booking, lang, back))
        turn.prompted = True

    def _on_change_booking(self, state: TaskState, act: Act, turn: _Turn, rest: list[Act]) -> None:
        """改签: search again from the booking's own trip (route, class, berth, tickets; for a hotel its city,
        district, nights and rooms) with the new values said; the offer chosen is read back with the booking it
        replaces, and only an explicit yes changes it (``TravelDB.rebook``: the new seats are taken and the old
        ones given back in one transaction)."""
        lang = state["language"]
        zh = lang == "zh"
        if act.slots.get("unclear"):  # 改一下 at a read-back: nothing is booked, what to change is asked
            pending = state.get("pending")
            turn.parts.append(WHAT_TO_CHANGE[lang][pending["domain"] == "hotel" if pending else False])
            turn.prompted = True
            return
        live = live_bookings(state["bookings"])
        slots = dict(act.slots)
        domain, order = slots.pop("domain", None), slots.pop("order_no", None)
        ordinal = slots.pop("ordinal", None)
        anew = slots.pop("said_anew", None)  # the change said anew while "which one?" was asked
        asked = state.get("change") if state["open"] == "choose_change" and not anew else None
        state["change"] = None
        if asked:  # the answer to "which one?": the values said with the request still hold
            live = [b for b in live if b["order_no"] in asked["among"]]
            slots = {**asked["slots"], **slots}
            if ordinal is not None:
                index = as_int(ordinal) - 1
                live = (
                    [b for b in live if b["order_no"] == asked["among"][index]]
                    if 0 <= index < len(asked["among"])
                    else []
                )
        fits = [b for b in live if (not domain or b["domain"] == domain) and (not order or b["order_no"] == order)]
        if len(fits) > 1 and not domain and not order:
            # a new time or class only fits a trip; nights or rooms only a hotel
            trip_only = {"period", "time_from", "time_to", "seat_class", "berth"} & set(slots)
            hotel_only = {"nights", "rooms"} & set(slots)
            fits = [b for b in fits if not (trip_only and b["domain"] == "hotel")]
            fits = [b for b in fits if not (hotel_only and b["domain"] != "hotel")] or fits
        if len(fits) > 1:  # several bookings could be meant: ask which, never change one by guessing
            question = "您要改签哪一个？" if zh else "Which booking should I change?"
            turn.parts.append(which_booking(fits, question, lang))
            state["change"] = {"among": [b["order_no"] for b in fits], "slots": slots}
            state["open"] = "choose_change"
            turn.prompted = True
            return
        if not fits:
            turn.parts.append(
                ("没有找到您说的这个预订。" if live else "您在本次对话中还没有可以改签的预订。")
                if zh
                else ("I found no such booking." if live else "You have no booking to change in this session.")
            )
            return
        booking = fits[0]
        none_left = text_or_none(slots.pop("none_left", None))  # 改晚一班 on the day's last departure
        if slots.get("code") and code_domain(as_str(slots["code"])) != booking["domain"]:
            slots.pop("code")  # (a train's code names no flight)
        item = self.db.get(booking["domain"], int(booking["item_id"])) or {}
        longer = as_int(slots.pop("longer", 0) or 0)  # 多住一晚: the stay booked, that many nights longer
        if booking["domain"] == "hotel":
            base = {
                "city": booking.get("city") or item.get("city"),
                "district": item.get("district"),
                "date": booking["date"],
                "nights": int(booking.get("nights") or 1) + longer,
                "rooms": int(booking.get("quantity") or 1),
            }
            if not {"brand", "not_brand", "stars", "min_stars", "district", "max_price"} & set(slots) and item.get(
                "name"
            ):
                base["brand"] = str(item["name"]).split("(")[0]  # 多住一晚 / 挪到周五: the same hotel
            elif "brand" in slots or "not_brand" in slots:
                base.pop("district", None)  # 把汉庭换成亚朵 / 换一家: wherever in the city the other one is
        else:
            base = {
                "dep_city": booking.get("dep_city") or item.get("dep_city"),
                "arr_city": booking.get("arr_city") or item.get("arr_city"),
                "date": booking["date"],
                "seat_class": item.get("seat_class"),
                "berth": item.get("berth"),
            }
            if int(booking.get("quantity") or 1) > 1:
                base["passengers"] = int(booking["quantity"])
            if (SAME_TRIP.search(turn.text) or (slots and set(slots) <= {"seat_class", "berth"})) and item:
                base["code"] = R.code_of(item)  # 改签到19号，还是这趟车 / 改成商务舱: the same train or flight
        if "seat_class" in slots and "berth" not in slots:
            base.pop("berth", None)
        state["domain"] = booking["domain"]
        state["slots"] = {k: v for k, v in base.items() if v}
        state["offers"], state["pending"], state["suggestion"], state["failures"] = [], None, None, {}
        state["queue"], state["cancel"], state["refused"] = [], None, []
        state["rebook"] = {"order_no": booking["order_no"]}
        head = (
            f"好的，为您改签订单{booking['order_no']}。"
            if zh
            else f"All right, changing booking {booking['order_no']}."
        )
        if none_left:  # said, and the change asks for another day or time
            which = ("最早" if none_left == "earlier" else "最晚") if zh else f"{none_left[:-2]}est"
            head = (
                f"订单{booking['order_no']}已经是当天{which}的一班了。"
                if zh
                else f"Booking {booking['order_no']} is already the day's {which} one. "
            )
        turn.parts.append(head)
        if not slots and not longer:
            state["open"] = "change"
            turn.parts.append(WHAT_TO_CHANGE[lang][booking["domain"] == "hotel"])
            turn.prompted = True
            return
        if self._class_not_there(state, booking, item, slots, turn):
            return
        state["open"] = None
        self._merge(state, slots)
        turn.dirty = True

    def _class_not_there(self, state: TaskState, booking: Booking, item: Row, slots: JSONDict, turn: _Turn) -> bool:
        """升头等舱 on a flight that has none: said, and the best class above the one booked that the same flight
        or train has is offered (a yes takes it); never a list of other flights in the class booked."""
        wanted = text_or_none(slots.get("seat_class"))
        code = text_or_none(slots.get("code") or state["slots"].get("code"))
        if not wanted or not code or booking["domain"] == "hotel" or slots.keys() - {"seat_class", "berth", "code"}:
            return False
        route: JSONDict = {k: state["slots"][k] for k in ("dep_city", "arr_city", "date") if k in state["slots"]}
        same = [r for r in self.db.search(booking["domain"], route, limit=1000) if R.code_of(r) == code]
        classes = {str(r.get("seat_class")) for r in same}
        if not same or wanted in classes:
            return False
        order = CLASS_ORDER[booking["domain"]]
        booked = str(item.get("seat_class"))
        rank = order.index(booked) if booked in order else -1
        better = [c for c in order[rank + 1 :] if c in classes and c != wanted]
        zh = state["language"] == "zh"
        text = f"{code}没有{wanted}。" if zh else f"{code} has no {wanted}. "
        if better:
            best = better[-1] if order.index(wanted) > order.index(better[-1]) else better[0]
            text += f"同一班有{best}，要改成{best}吗？" if zh else f"It has {best} on the same one: change to that?"
            state["suggestion"], state["alternative"] = {"seat_class": best, "code": code}, text
            state["open"] = "offer_alternative"
        else:
            text += (
                "也没有比现在更高的舱位了，订单保持不变。" if zh else "Nothing better than yours; the booking stays."
            )
            state["rebook"], state["open"] = None, "anything_else"
        turn.parts.append(text)
        turn.prompted = True
        return True

    def _cancel(self, state: TaskState, turn: _Turn) -> None:
        lang = state["language"]
        zh = lang == "zh"
        asked: CancelQuestion = state.get("cancel") or {}
        state["cancel"] = None
        if asked.get("orders"):
            self._cancel_all(state, asked, turn)
            return
        booking = next((b for b in state["bookings"] if b["order_no"] == asked.get("order_no")), None)
        state["open"] = asked.get("resume")
        if booking is None or booking.get("status") == "cancelled":
            turn.parts.append("这个预订已经取消过了。" if zh else "That booking was already cancelled.")
            return
        quantity = int(booking.get("quantity") or 1)
        back = int(asked.get("back") or 0)
        if 0 < back < quantity:
            kept = give_back_part(self.db, booking, back, lang)
            if kept is None:
                sorry = "抱歉，这个预订无法退改，请联系客服。" if zh else "Sorry, that booking cannot be changed here."
                turn.parts.append(sorry)
            else:
                state["bookings"].append(kept)
                turn.booked.append(kept)
                turn.parts.append(
                    f"已退掉{back}{unit(booking, lang)}，座位或房间已释放；原订单{booking['order_no']}已变更为"
                    f"订单号{kept['order_no']}：{kept['details']}。"
                    if zh
                    else f"Gave back {back}; booking {booking['order_no']} is now booking {kept['order_no']}: "
                    f"{kept['details']}."
                )
            self._ask_anything_else(state, turn)
            return
        done = self.db.cancel(int(booking["number"]))
        if not done:  # not in this database (e.g. another session's scratch copy): say so, change nothing
            turn.parts.append(
                "抱歉，这个预订无法取消，请联系客服。" if zh else "Sorry, that booking cannot be cancelled here."
            )
            return
        booking["status"] = "cancelled"
        rebook = state.get("rebook")
        if rebook is not None and rebook["order_no"] == booking["order_no"]:
            state["rebook"] = None  # the booking being changed is gone: so is the change (and its hotel's brand)
            state["domain"], state["slots"], state["offers"], state["pending"] = None, {}, [], None
            if state["open"] in ("change", None):
                state["open"] = "anything_else"
        turn.parts.append(
            f"已取消订单{booking['order_no']}，座位或房间已释放。"
            if zh
            else f"Booking {booking['order_no']} is cancelled; the seats or rooms are released."
        )
        waiting = [q for q in state["queue"] if q.get("after_cancel")]
        if waiting:  # the request said with the cancellation: the trip cancelled is the one to replace
            state["queue"] = [q for q in state["queue"] if not q.get("after_cancel")]
            queued = {k: v for k, v in waiting[0].items() if k not in ("after_cancel", "implied")}
            domain = text_or_none(queued.pop("domain", None)) or booking["domain"]
            trip = trip_of(booking, domain)
            slots = state["slots"]
            if domain != "hotel" and all(slots.get(k) == v for k, v in trip.items()):
                trip |= {k: v for k, v in slots.items() if k in TRIP_KEYS}  # its time window too
            self._start(state, domain, {**trip, **queued}, switch=False, turn=turn)
            turn.dirty = True
            return
        self._ask_anything_else(state, turn)

    def _cancel_all(self, state: TaskState, asked: CancelQuestion, turn: _Turn) -> None:
        """Cancel each of several bookings asked about together; the reply names every one (cancelled or not)."""
        lang = state["language"]
        zh = lang == "zh"
        state["open"] = asked.get("resume")
        done, failed = [], []
        for order in asked.get("orders") or []:
            booking = next((b for b in state["bookings"] if b["order_no"] == order), None)
            if booking is None or booking.get("status") == "cancelled":
                continue
            if self.db.cancel(int(booking["number"])):
                booking["status"] = "cancelled"
                done.append(str(booking["order_no"]))
            else:
                failed.append(str(booking["order_no"]))
        if done:
            turn.parts.append(
                f"已取消订单{'、'.join(done)}，座位或房间已释放。"
                if zh
                else f"Bookings {', '.join(done)} are cancelled; the seats or rooms are released."
            )
        if failed:
            turn.parts.append(
                f"抱歉，订单{'、'.join(failed)}无法取消，请联系客服。"
                if zh
                else f"Sorry, bookings {', '.join(failed)} cannot be cancelled here."
            )
        if not done and not failed:
            turn.parts.append("这些预订已经取消过了。" if zh else "Those bookings were already cancelled.")
        self._ask_anything_else(state, turn)

    def _ask_anything_else(self, state: TaskState, turn: _Turn) -> None:
        """Ask whether the user wants anything else, unless another question is open."""
        if state["open"] in (None, "anything_else"):
            state["open"] = "anything_else"
            turn.parts.append(R.ANYTHING_ELSE[state["language"]])
            turn.prompted = True

    def _keep_booking(self, state: TaskState, turn: _Turn) -> None:
        waiting = [q for q in state["queue"] if q.get("after_cancel") and q.get("implied")]
        state["queue"] = [q for q in state["queue"] if not q.get("after_cancel")]
        asked = state.get("cancel") or {}
        state["cancel"] = None
        state["open"] = asked.get("resume")
        lang = state["language"]
        kept = "好的，没有取消，预订仍然有效。" if lang == "zh" else "All right, the booking stays as it is."
        turn.parts.append(kept)
        booking = next((b for b in state["bookings"] if b["order_no"] == asked.get("order_no")), None)
        if waiting and booking is not None:  # 还是坐高铁吧 → 不用退: the booking stays, the train is still searched
            queued = {k: v for k, v in waiting[0].items() if k not in ("after_cancel", "implied")}
            domain = text_or_none(queued.pop("domain", None)) or booking["domain"]
            self._start(state, domain, {**trip_of(booking, domain), **queued}, switch=False, turn=turn)
            turn.dirty = True
            return
        self._ask_anything_else(state, turn)

    def _book(self, state: TaskState, pending: Pending, turn: _Turn) -> None:
        domain, lang = pending["domain"], state["language"]
        item = self._pending_item(state)
        if item is None:
            state["pending"], state["open"] = None, None
            turn.parts.append("抱歉，这个选项已经失效了。" if lang == "zh" else "Sorry, that option is gone.")
            return
        details_zh = R.offer_details(domain, item, pending, "zh")
        quantity = int(pending.get("rooms") or pending.get("passengers") or 1)
        nights = int(pending.get("nights") or 1)
        date = as_str(pending["date"])
        old = self._rebooked(state)
        if old is not None:
            number = self.db.rebook(int(old["number"]), domain, item, date, details_zh, quantity, nights)
        else:
            number = self.db.book(domain, item, date, details_zh, quantity, nights)
        if number is None:
            state["pending"] = None
            state["open"] = "choose_offer" if state["offers"] else None
            turn.parts.append(
                "抱歉，刚刚这个已经订满了，没有为您预订。请换一个。"
                if lang == "zh"
                else "Sorry, it just sold out; nothing was booked."
            )
            turn.dirty = True
            return
        booking = new_booking(domain, item, cast(JSONDict, pending), number, lang)
        if old is not None:
            old["status"], old["changed_to"] = "cancelled", number
            booking["changed_from"] = old["order_no"]
            turn.parts.append(
                f"已为您改签，原订单{old['order_no']}已取消，座位或房间已释放。"
                if lang == "zh"
                else f"Changed: booking {old['order_no']} is cancelled and its seats or rooms released."
            )
        state["rebook"], state["refused"] = None, []
        state["bookings"].append(booking)
        turn.booked.append(booking)
        counts = {"nights": nights, "rooms": quantity, "passengers": quantity}
        facts = {**state["slots"], **cast(JSONDict, item), **cast(JSONDict, pending), **counts, "domain": domain}
        turn.booked_facts = facts
        state["pending"], state["offers"], state["suggestion"] = None, [], None
        state["open"] = "anything_else"
        state["failures"] = {}
        turn.parts.append(R.booked(domain, item, pending, number, lang))
        if state["queue"]:
            queued = state["queue"].pop(0)
            next_domain = text_or_none(queued.pop("domain"))
            self._start(state, next_domain, queued, switch=False, turn=turn)
            turn.dirty = True
        else:
            turn.prompted = False

    @staticmethod
    def _rebooked(state: TaskState) -> Booking | None:
        """The booking a change (改签) under way replaces, if one is under way and that booking is still live."""
        rebook = state.get("rebook")
        order = rebook["order_no"] if rebook else None
        return next((b for b in live_bookings(state["bookings"]) if b["order_no"] == order), None)
