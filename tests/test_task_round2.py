"""Regression dialogs for the failure classes an independent tester found in round 2 of the online test
(notes/session4/tester15-round2.md). The utterances are our own wording, not the tester's; every dialog runs
through ``TaskBranch`` with both act readers over a small generated database (seed 7, today 2026-12-01)."""

from __future__ import annotations

import pytest

from ragdial.task import replies as R
from ragdial.task.db import TravelDB
from ragdial.task.manager import TaskBranch
from ragdial.task.simulator import read_item
from task_dialogs import talk


@pytest.fixture(params=["learned", "rules"])
def branch(request, travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True), acts=request.param)


def offers(reply: str) -> list[dict]:
    return [item for item in map(read_item, reply.splitlines()) if item]


TRAIN_LIST = "后天从北京去上海的高铁"  # G5281 / G1500 二等座, G1500 一等座 (and more classes)
NO_DAWN_TRAIN = "后天凌晨北京到上海的高铁"  # none at dawn: the trains of the day are offered instead


# 1. a yes said with a choice and a further request books the choice; a yes with no choice books nothing
def test_a_class_confirmed_with_a_hotel_request_books_the_train_first(branch):
    turns = talk(branch, TRAIN_LIST, "一等座，就订它，另外帮我在上海订两晚酒店")
    turn = turns[-1]
    assert "一等座的酒店" not in turn.reply
    if not turn.state["bookings"]:  # (the learned reader may not hear the yes: then the choice is read back)
        pending = branch.db.get("train", turn.state["pending"]["id"])
        assert pending["seat_class"] == "一等座" and turn.reply.rstrip().endswith("请问确认预订吗？")
        assert turn.state["queue"] and turn.state["queue"][0]["domain"] == "hotel"
        (turn,) = talk(branch, "对", state=turn.state)
    (booking,) = turn.state["bookings"]
    assert booking["domain"] == "train" and "一等座" in booking["details"]
    assert turn.state["domain"] == "hotel" and "seat_class" not in turn.state["slots"]
    assert "一等座的酒店" not in turn.reply and turn.state["slots"]["nights"] == 2
    (asked,) = talk(branch, "我那张高铁票订好了吧？", state=turn.state)
    assert f"订单号{booking['order_no']}" in asked.reply


def test_a_yes_without_a_choice_books_nothing_and_the_hotel_waits(branch):
    turns = talk(branch, TRAIN_LIST, "行，订吧，然后上海的酒店也来一晚")
    turn = turns[-1]
    assert not turn.state["bookings"] and turn.booked is None
    assert "哪一个" in turn.reply and turn.state["domain"] == "train"
    turns = talk(branch, "第二个", "确认", state=turn.state)
    assert turns[-1].booked is not None and turns[-1].booked["domain"] == "train"
    assert turns[-1].state["domain"] == "hotel" and offers(turns[-1].reply)  # the hotel asked for comes next


# 2. one of the alternatives offered when nothing matched is chosen by its time or its code
@pytest.mark.parametrize(("text", "code"), [("好吧，就下午三点五十那趟，二等座", "G1500"), ("那行，G5281吧", "G5281")])
def test_an_alternative_is_chosen_by_time_or_code(branch, text, code):
    turns = talk(branch, NO_DAWN_TRAIN)
    assert turns[0].state["open"] == "offer_alternative", turns[0].reply
    (turn,) = talk(branch, text, state=turns[0].state)
    assert "请问确认预订吗" in turn.reply and turn.reply.count("即将为您预订") == 1, turn.reply
    assert code in turn.reply and "没有找到" not in turn.reply
    (done,) = talk(branch, "确认", state=turn.state)
    assert done.booked is not None and code in done.booked["details"]


def test_the_earliest_with_a_new_budget_is_the_earliest_of_the_whole_day(branch):
    turns = talk(branch, NO_DAWN_TRAIN, "行吧，那给我最早的一趟，600以内")
    item = branch.db.get("train", turns[-1].state["pending"]["id"])
    every = branch.db.search(
        "train", {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-03", "max_price": 600, "train_kinds": ["G"]}
    )
    assert item["dep_time"] == min(r["dep_time"] for r in every) and item["price"] <= 600


# 3. switching flight -> train keeps the route; a cancellation said with a new request; 同一天
def test_switching_to_the_train_after_a_refused_alternative_keeps_the_route(branch):
    turns = talk(branch, "后天上午从上海飞北京，公务舱，600以内", "价格太高了，那改坐高铁好了，二等座")
    turn = turns[-1]
    assert turn.state["domain"] == "train" and "哪个城市" not in turn.reply
    assert (turn.state["slots"]["dep_city"], turn.state["slots"]["arr_city"]) == ("上海", "北京")
    assert turn.state["slots"]["seat_class"] == "二等座" and "max_price" not in turn.state["slots"]


def test_cancelling_a_flight_and_asking_for_a_train_in_one_turn(branch):
    turns = talk(branch, "后天晚上北京飞上海", "第一个", "确认", "把刚订的机票退掉，换成火车吧")
    turn = turns[-1]
    assert turn.state["open"] == "confirm_cancel" and "确认取消吗" in turn.reply
    assert "没有取消" not in turn.reply and turn.state["bookings"][0].get("status") != "cancelled"
    (done,) = talk(branch, "对，退掉", state=turn.state)
    assert done.state["bookings"][0]["status"] == "cancelled"
    assert done.state["domain"] == "train" and offers(done.reply), done.reply
    slots = done.state["slots"]
    assert (slots["dep_city"], slots["arr_city"], slots["date"]) == ("北京", "上海", "2026-12-03")


def test_no_to_the_cancellation_drops_the_request_said_with_it(branch):
    turns = talk(branch, "后天晚上北京飞上海", "第一个", "确认", "把刚订的机票退掉，换成火车吧", "不退了")
    assert turns[-1].state["bookings"][0].get("status") != "cancelled" and not turns[-1].state["queue"]


def test_the_same_day_is_the_day_of_the_trip_talked_about(branch):
    turns = talk(branch, "后天晚上北京飞上海", "第一个", "确认", "再帮我看看同一天上海到杭州的高铁")
    assert turns[-1].state["slots"]["date"] == "2026-12-03" and "哪天" not in turns[-1].reply


# 4. a window refused, a budget raised, a fallback class of hotel
def test_a_refused_window_is_no_window(branch):
    turns = talk(branch, "后天下午北京飞上海", "下午的不行")
    assert "period" not in turns[-1].state["slots"] and "下午" not in turns[-1].reply.splitlines()[0]


def test_refusing_the_alternative_window_and_raising_the_budget(branch):
    turns = talk(branch, NO_DAWN_TRAIN + "，500以内", "下午的也不行，那预算放到700呢")
    slots = turns[-1].state["slots"]
    assert slots.get("period") == "凌晨" and slots["max_price"] == 700 and not turns[-1].state["bookings"]


def test_a_fallback_star_rating_replaces_the_one_that_failed(branch):
    turns = talk(branch, "明天在杭州住一晚，五星级，200以内", "五星的没有就二星的吧")
    assert turns[-1].state["slots"].get("stars") == 2 and offers(turns[-1].reply), turns[-1].reply


# 5. asides and questions
def test_the_date_is_answered_next_to_a_request(branch):
    (turn,) = talk(branch, "今天星期几啊？帮我查下明天北京到上海的高铁")
    assert "12月1日" in turn.reply and offers(turn.reply)


def test_a_question_whether_there_really_is_none_is_answered(branch):
    turns = talk(branch, NO_DAWN_TRAIN, "凌晨的一趟都没有吗？")
    turn = turns[-1]
    assert R.GUIDE["zh"] not in turn.reply and "确实没有" in turn.reply
    assert turn.state["open"] == "offer_alternative" and offers(turn.reply)


def test_an_aside_after_a_choice_is_turned_down_before_the_read_back(branch):
    turns = talk(branch, TRAIN_LIST, "第一个，顺便问下上海那边下雨没")
    reply = turns[-1].reply
    assert R.GUIDE["zh"] in reply and reply.rstrip().endswith("请问确认预订吗？"), reply


# 6. closing the request
@pytest.mark.parametrize("text", ["那就算了，我再考虑考虑", "算了，这次不订了"])
def test_closing_after_nothing_matched(branch, text):
    turns = talk(branch, "明天在杭州住一晚，五星级，200以内", text)
    turn = turns[-1]
    assert "想改哪个条件" not in turn.reply and turn.state["open"] == "anything_else"
    assert not turn.state["bookings"]


def test_giving_up_a_change_keeps_the_booking_and_no_change_prompt_lingers(branch):
    turns = talk(branch, TRAIN_LIST, "第一个", "确认", "帮我改签到凌晨的", "那算了，不改了")
    turn = turns[-1]
    assert "仍然有效" in turn.reply and not turn.state.get("rebook")
    (asked,) = talk(branch, "我的订单号是多少", state=turn.state)
    assert "想改哪个条件" not in asked.reply and "订单号" in asked.reply


# rooms left at a hotel list, and changing one of several bookings
def test_rooms_left_is_a_number_for_the_stay(branch):
    turns = talk(branch, "明天在杭州住两晚", "第一家还剩几间房")
    assert "None" not in turns[-1].reply and "个空房" in turns[-1].reply


def test_a_change_with_several_bookings_asks_which_one(branch):
    turns = talk(branch, TRAIN_LIST, "第一个", "确认", "再订一张后天晚上北京飞上海的机票", "第一个", "确认")
    assert len(turns[-1].state["bookings"]) == 2
    (turn,) = talk(branch, "帮我改签到大后天", state=turns[-1].state)
    assert turn.state["open"] == "choose_change" and "改签哪一个" in turn.reply
    assert not turn.state.get("rebook") and all(b.get("status") != "cancelled" for b in turn.state["bookings"])
    (turn,) = talk(branch, "第一个", state=turn.state)  # the train, booked first
    train = turn.state["bookings"][0]
    assert turn.state["rebook"] == {"order_no": train["order_no"]} and turn.state["domain"] == "train"
    assert turn.state["slots"]["date"] == "2026-12-04"


def test_a_change_naming_a_time_goes_to_the_trip_not_the_hotel(branch):
    turns = talk(branch, TRAIN_LIST, "第一个", "确认", "上海的酒店住一晚", "第一个", "确认")
    assert [b["domain"] for b in turns[-1].state["bookings"]] == ["train", "hotel"]
    (turn,) = talk(branch, "帮我改签到下午的", state=turns[-1].state)
    assert (
        turn.state["domain"] == "train"
        and turn.state["rebook"]["order_no"] == turns[-1].state["bookings"][0]["order_no"]
    )


def test_a_train_code_said_while_hotels_are_listed_is_a_request_for_that_train(branch):
    turns = talk(branch, "后天在上海住一晚", "等等，先把后天北京到上海的G1500一等座给我订上")
    turn = turns[-1]
    assert turn.state["domain"] == "train" and "列出的结果里没有" not in turn.reply
    item = branch.db.get("train", turn.state["pending"]["id"])
    assert (item["train_no"], item["seat_class"]) == ("G1500", "一等座") and not turn.state["bookings"]


@pytest.mark.parametrize("text", ["CZ6572", "21点15那个"])
def test_naming_the_offer_read_back_again_reads_it_back_and_books_nothing(branch, text):
    turns = talk(branch, "后天晚上北京飞上海", "第一个", text)
    turn = turns[-1]
    assert R.GUIDE["zh"] not in turn.reply and "CZ6572" in turn.reply and "请问确认预订吗" in turn.reply
    assert not turn.state["bookings"]


def test_no_thanks_after_nothing_matched_says_goodbye_once(branch):
    turns = talk(branch, NO_DAWN_TRAIN, "不用了，谢谢")
    reply = turns[-1].reply
    assert "还需要别的帮助吗" not in reply and "想改哪个条件" not in reply and "再见" in reply


def test_this_one_then_a_refusal_books_and_reads_back_nothing(branch):
    turns = talk(branch, TRAIN_LIST, "那就这样吧，不订了")
    turn = turns[-1]
    assert "请问确认预订吗" not in turn.reply and not turn.state["pending"] and not turn.state["bookings"]
    assert "哪一个" not in turn.reply and turn.state["open"] == "anything_else"


def test_a_fallback_in_its_own_clause_and_a_lower_bound_on_stars(branch):
    turns = talk(branch, "明天在杭州住一晚，五星级，200以内", "五星级没有的话，三星以上也可以，预算可以到400")
    slots = turns[-1].state["slots"]
    assert "stars" not in slots and slots["min_stars"] == 3 and slots["max_price"] == 400
    assert offers(turns[-1].reply) and all(item.get("stars", 3) >= 3 for item in offers(turns[-1].reply))


def test_a_choice_and_its_yes_with_a_hotel_request_books_with_either_reader(branch):
    turns = talk(branch, TRAIN_LIST, "第二趟，行，顺便帮我看看上海的宾馆")
    turn = turns[-1]
    assert turn.booked is not None and turn.booked["domain"] == "train"
    assert turn.state["domain"] == "hotel" and offers(turn.reply)


def test_a_refused_window_with_the_window_wanted_next_to_it(branch):
    turns = talk(branch, "后天下午北京飞上海", "下午那些都不行，我得上午走")
    assert turns[-1].state["slots"].get("period") == "上午"


def test_insisting_on_the_conditions_that_have_none_is_answered(branch):
    turns = talk(branch, NO_DAWN_TRAIN, "不是，我就要凌晨的高铁")
    turn = turns[-1]
    assert "确实没有" in turn.reply and "想改哪个条件" not in turn.reply
    assert turn.state["open"] == "offer_alternative" and offers(turn.reply)
