"""Cancelling a booking (read back, explicit yes, seats given back, marked cancelled in the session's list),
relative preferences (便宜点的 / 贵一点的 / 早一点的) and routing in the middle of a booking, over a small
generated database. Utterances are our own."""

from __future__ import annotations

import pytest

from ragdial.task.acts import Context, understand
from ragdial.task.db import TravelDB
from ragdial.task.manager import TaskBranch
from task_dialogs import TODAY, talk


@pytest.fixture
def branch(travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True))


def _seats(branch, booking):
    return branch.db.get(booking["domain"], booking["item_id"])["seats"]


def _rooms(branch, hotel_id):
    sql = "SELECT rooms FROM hotel_rooms WHERE hotel_id = ? AND date IN ('2026-12-02', '2026-12-03') ORDER BY date"
    return [row[0] for row in branch.db.conn.execute(sql, (hotel_id,))]


def test_cancel_is_read_back_and_needs_an_explicit_yes(branch):
    turns = talk(branch, "明天从北京到上海的火车票", "第一个", "确认")
    booking = turns[-1].booked
    seats = _seats(branch, booking)
    state = turns[-1].state
    ask = branch.respond(state, "把刚才那张火车票退了")
    assert ask.acts == ["cancel_booking"]
    assert "确认取消吗" in ask.reply and f"订单号{booking['order_no']}" in ask.reply  # read back, not done yet
    assert ask.state["bookings"][0].get("status") != "cancelled" and _seats(branch, booking) == seats
    # an aside or a question is no yes: nothing changes, the question is asked again
    aside = branch.respond(ask.state, "上海明天下雨吗")
    assert "确认取消吗" in aside.reply and aside.state["bookings"] == ask.state["bookings"]
    done = branch.respond(aside.state, "确定")
    assert "已取消订单" in done.reply and done.state["bookings"][0]["status"] == "cancelled"
    assert _seats(branch, booking) == seats + 1  # the seat is given back in the database
    assert branch.db.booking(booking["number"])["status"] == "cancelled"
    listing = branch.respond(done.state, "我订了哪些")
    assert "已取消的预订" in listing.reply and "您已成功预订" not in listing.reply
    # a cancelled booking cannot be cancelled twice
    again = branch.respond(done.state, "取消那张火车票")
    assert "没有可以取消的预订" in again.reply and again.state["bookings"] == done.state["bookings"]


def test_cancel_declined_keeps_the_booking(branch):
    turns = talk(branch, "明天北京飞上海的机票", "第一个", "确定", "取消那张机票", "算了")
    assert turns[3].acts == ["cancel_booking"] and turns[4].acts == ["deny"]
    assert "预订仍然有效" in turns[4].reply
    booking = turns[4].state["bookings"][0]
    assert booking.get("status") != "cancelled" and branch.db.booking(booking["number"])["status"] == "booked"


def test_cancel_asks_which_when_several_and_frees_hotel_rooms(branch):
    turns = talk(
        branch, "明天北京飞上海的机票", "第一个", "确定", "再帮我订上海的酒店，明天住两晚", "第一个", "确定", "取消订单"
    )
    _flight, hotel = turns[-1].state["bookings"]
    assert "您要取消哪一个" in turns[-1].reply and turns[-1].state["open"] == "choose_cancel"
    before = _rooms(branch, hotel["item_id"])
    turns = talk(branch, "第二个", "好的", state=turns[-1].state)
    assert f"订单号{hotel['order_no']}" in turns[0].reply and "确认取消吗" in turns[0].reply
    flight_after, hotel_after = turns[-1].state["bookings"]
    assert hotel_after["status"] == "cancelled" and flight_after.get("status") != "cancelled"
    after = _rooms(branch, hotel["item_id"])
    assert after == [n + 1 for n in before]  # one room back on each of the two nights


def test_cancel_words_during_a_read_back_refuse_the_offer_not_the_earlier_booking(branch):
    turns = talk(branch, "明天北京飞上海的机票", "第一个", "确定", "再帮我订上海的酒店，明天住一晚", "第一个", "取消吧")
    assert turns[-1].acts == ["deny"] and "没有预订" in turns[-1].reply
    assert [b.get("status") for b in turns[-1].state["bookings"]] == [None]


def test_relative_choice_among_listed_offers(branch):
    turns = talk(branch, "明天从北京到上海的火车票")
    offers = branch._offer_rows(turns[0].state)
    turn = branch.respond(turns[0].state, "早一点的那个")
    assert turn.acts == ["select"] and turn.state["open"] == "confirm_booking"
    assert turn.state["pending"]["id"] == min(offers, key=lambda r: r["dep_time"])["id"]
    turn = branch.respond(turns[0].state, "要贵一点的")
    assert turn.state["pending"]["id"] == max(offers, key=lambda r: r["price"])["id"]


def test_cheaper_than_the_read_back_searches_again_and_says_when_there_is_none(branch):
    turns = talk(branch, "明天从北京到上海的火车票", "第三个")
    pending = branch._pending_item(turns[-1].state)
    turn = branch.respond(turns[-1].state, "有没有便宜点的？")
    assert turn.acts == ["modify"] and "更便宜的有" in turn.reply
    shown = branch._offer_rows(turn.state) or [branch._pending_item(turn.state)]
    assert shown and all(r["price"] < pending["price"] for r in shown)
    assert turn.state["bookings"] == []  # nothing booked by asking
    # against the cheapest listed offers there is nothing cheaper: said, and the same offers stay
    first = talk(branch, "明天从北京到上海的火车票")[0]
    none = branch.respond(first.state, "还有更便宜的吗")
    assert "没有比这更便宜的了" in none.reply
    assert none.state["offers"] == first.state["offers"] and none.state["slots"] == first.state["slots"]


def test_earlier_keeps_the_window_the_user_asked_for(branch):
    first = talk(branch, "明天晚上从北京到上海的火车票")[0]
    latest = max(branch._offer_rows(first.state), key=lambda r: r["dep_time"])
    acts = understand("有没有早一点的", branch.context(first.state), branch.gazetteer, TODAY)
    assert [a.act for a in acts] == ["modify"] and acts[0].slots["time_to"] <= latest["dep_time"]
    turn = branch.respond(first.state, "有没有早一点的")
    rows = branch._offer_rows(turn.state) or [branch._pending_item(turn.state)]
    earliest = min(r["dep_time"] for r in branch._offer_rows(first.state))
    assert all("18:00" <= r["dep_time"] < earliest for r in rows if r) or "没有更早的了" in turn.reply


def test_relative_words_without_offers_or_with_no_matter_are_no_bound(branch):
    gaz = branch.gazetteer
    acts = understand("找个便宜点的住的地方 昆明 今天晚上", Context(), gaz, TODAY)
    assert [a.act for a in acts] == ["inform"] and "max_price" not in acts[0].slots
    ctx = Context("hotel", "choose_offer", [{"price": 300, "stars": 3}, {"price": 500, "stars": 5}], {"city": "上海"})
    acts = understand("贵一点没关系，要最好的", ctx, gaz, TODAY)
    assert [(a.act, a.slots) for a in acts] == [("select", {"feature": "best"})]


def test_routing_mid_booking_sends_telecom_questions_to_the_knowledge_base(branch):
    turns = talk(branch, "明天从北京到上海的火车票", "第一个")
    state = turns[-1].state
    assert branch.claims(state, "第二个") and branch.claims(state, "确认")
    assert not branch.claims(state, "怎么查询话费余额")  # the knowledge branch answers, the state is untouched
    assert not branch.claims(state, "我的套餐还剩多少流量")
    assert branch.claims(state, "上海明天下雨吗")  # another aside: this branch guides back to the read-back
    aside = branch.respond(state, "上海明天下雨吗")
    assert aside.acts == ["out_of_scope"] and "确认预订吗" in aside.reply
    assert {k: v for k, v in aside.state.items() if k != "turns"} == {k: v for k, v in state.items() if k != "turns"}
    # the booking resumes where it was: the next turn's yes books the offer read back before the detour
    done = branch.respond(state, "确认")
    assert done.booked and done.booked["item_id"] == state["pending"]["id"]


def test_cancelling_is_claimed_after_the_dialog_closed(branch):
    turns = talk(branch, "明天北京飞上海的机票", "第一个", "确定", "谢谢")
    assert turns[-1].done and not branch.claims(turns[-1].state, "怎么查询话费余额")
    assert branch.claims(turns[-1].state, "帮我把那张机票退了")
