"""Round-4 failure classes of the independent online test, in our own words: a yes said together with the next
request books and goes on; the way back after a trip; changing a booking without 改签 and an order number
(a longer stay, another day for the hotel, another hotel, giving back part of it). Every change is read back,
done only on a yes, and the database's seats and rooms move exactly. Small generated database (seed 7, today
2026-12-01, a Tuesday; dates 12-01 to 12-05), both act readers."""

from __future__ import annotations

import pytest

from ragdial.task.db import TravelDB
from ragdial.task.manager import TaskBranch
from task_dialogs import talk


@pytest.fixture(params=["learned", "rules"])
def branch(request, travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True), acts=request.param)


FLIGHT_READ_BACK = ("后天上海到北京的机票", "第一个")  # HU… 上海→北京 on 12-03, read back
HOTEL_BOOKED = ("后天在北京订个酒店", "第一个", "确认")  # 汉庭 北京海淀, 12-03, one night, booked


def _live(state):
    return [b for b in state["bookings"] if b.get("status") != "cancelled"]


def _rooms(branch, hotel_id, *days):
    sql = f"SELECT rooms FROM hotel_rooms WHERE hotel_id = ? AND date IN ({','.join('?' * len(days))}) ORDER BY date"
    return [row[0] for row in branch.db.conn.execute(sql, (hotel_id, *days))]


# 1. a yes and the next request in one turn: the offer read back is booked, then the next request is served
@pytest.mark.parametrize(
    "text",
    [
        "可以，订吧。回程的话看看周五北京回上海的",
        "可以就订它。那周五回来的呢",
        "行，就这个。周五从北京飞回上海的也帮我查查",
    ],
)
def test_a_yes_with_the_way_back_books_and_searches_the_way_back(branch, text):
    turns = talk(branch, *FLIGHT_READ_BACK, text)
    last = turns[-1]
    assert last.booked is not None and "预订成功" in last.reply, last.reply
    assert branch.db.booking(last.booked["number"])["status"] == "booked"
    slots = last.state["slots"]
    assert last.state["domain"] == "flight" and last.state["open"] == "choose_offer", last.reply
    assert (slots["dep_city"], slots["arr_city"], slots["date"]) == ("北京", "上海", "2026-12-04"), last.reply
    (listing,) = talk(branch, "我现在订了什么", state=last.state)
    assert "订单号1" in listing.reply and "还没有成功" not in listing.reply


@pytest.mark.parametrize("text", ["嗯订吧，然后再帮我看看北京海淀的酒店", "没问题，确认。另外还要北京的酒店"])
def test_a_yes_with_a_hotel_request_books_and_lists_hotels(branch, text):
    turns = talk(branch, *FLIGHT_READ_BACK, text)
    last = turns[-1]
    assert last.booked is not None and last.booked["domain"] == "flight", last.reply
    assert last.state["domain"] == "hotel" and last.state["slots"]["city"] == "北京", last.reply


def test_a_change_of_the_offer_said_with_the_yes_still_books_nothing(branch):
    # (the session-6 guard stays: a yes said with a change of the offer itself waits for the changed read-back)
    turns = talk(branch, *FLIGHT_READ_BACK, "行，改成周五的，订吧")
    assert turns[-1].booked is None and not turns[-1].state["bookings"], turns[-1].reply


def test_the_way_back_asked_after_the_booking_reverses_the_route(branch):
    turns = talk(branch, *FLIGHT_READ_BACK, "确认", "周五回来的也看一下")
    slots = turns[-1].state["slots"]
    assert turns[-1].state["domain"] == "flight", turns[-1].reply
    assert (slots["dep_city"], slots["arr_city"], slots["date"]) == ("北京", "上海", "2026-12-04")


def test_the_same_day_after_a_hotel_booking_is_its_check_in_day(branch):
    turns = talk(branch, *HOTEL_BOOKED, "再帮我订同一天北京去上海的高铁")
    slots = turns[-1].state["slots"]
    assert turns[-1].state["domain"] == "train" and slots.get("date") == "2026-12-03", turns[-1].reply


# 3. changing a booking without the words 改签 / 取消 and an order number
@pytest.mark.parametrize("text", ["我想多住一晚，还是这家", "能不能再续一天", "帮我延住一晚吧"])
def test_a_longer_stay_is_read_back_and_done_on_the_yes(branch, text):
    turns = talk(branch, *HOTEL_BOOKED)
    old = turns[-1].booked
    hotel = old["item_id"]
    before = _rooms(branch, hotel, "2026-12-03", "2026-12-04")
    (asked,) = talk(branch, text, state=turns[-1].state)
    assert asked.acts == ["change_booking"] and asked.state["open"] == "confirm_booking", asked.reply
    assert "住2晚" in asked.reply and "确认改签" in asked.reply and asked.booked is None
    assert _rooms(branch, hotel, "2026-12-03", "2026-12-04") == before  # nothing before the yes
    (done,) = talk(branch, "好的", state=asked.state)
    assert done.booked is not None and done.booked["item_id"] == hotel and done.booked["nights"] == 2, done.reply
    assert _rooms(branch, hotel, "2026-12-03", "2026-12-04") == [before[0], before[1] - 1]  # one room, one more night
    record = branch.db.booking(old["number"])
    assert (record["status"], record["changed_into"]) == ("changed", done.booked["number"])
    assert [b["order_no"] for b in _live(done.state)] == [done.booked["order_no"]]


def test_moving_the_hotel_to_another_day_keeps_the_hotel(branch):
    turns = talk(branch, *HOTEL_BOOKED)
    old = turns[-1].booked
    before = _rooms(branch, old["item_id"], "2026-12-03", "2026-12-04")
    (asked,) = talk(branch, "酒店日期能不能挪到周五", state=turns[-1].state)
    assert asked.state["open"] == "confirm_booking" and "12月4日入住" in asked.reply, asked.reply
    assert asked.state["pending"]["id"] == old["item_id"]
    (done,) = talk(branch, "可以", state=asked.state)
    assert done.booked["date"] == "2026-12-04" and done.booked["item_id"] == old["item_id"], done.reply
    assert _rooms(branch, old["item_id"], "2026-12-03", "2026-12-04") == [before[0] + 1, before[1] - 1]
    assert branch.db.booking(old["number"])["status"] == "changed"


@pytest.mark.parametrize("text", ["把汉庭退了，换成亚朵", "汉庭不要了，帮我换成亚朵吧", "换一家吧，亚朵那种的"])
def test_swapping_the_hotel_is_one_change_read_back_once(branch, text):
    turns = talk(branch, *HOTEL_BOOKED)
    old = turns[-1].booked
    before = _rooms(branch, old["item_id"], "2026-12-03")
    (asked,) = talk(branch, text, state=turns[-1].state)
    assert asked.state["open"] == "confirm_booking" and "亚朵" in asked.reply and "确认改签" in asked.reply, asked.reply
    assert branch.db.booking(old["number"])["status"] == "booked"  # nothing cancelled before the yes
    (done,) = talk(branch, "好", state=asked.state)
    assert done.booked is not None and "亚朵" in done.booked["details"], done.reply
    assert _rooms(branch, old["item_id"], "2026-12-03") == [before[0] + 1]  # the old room given back
    assert [b["order_no"] for b in _live(done.state)] == [done.booked["order_no"]]


@pytest.mark.parametrize("text", ["两张里退掉一张吧", "能帮我退一张吗", "只留一张就行了"])
def test_giving_back_one_of_two_tickets(branch, text):
    turns = talk(branch, "后天上海到北京的火车，两张", "第一个", "确认")
    old = turns[-1].booked
    assert old["quantity"] == 2
    seats = branch.db.get("train", old["item_id"])["seats"]
    (asked,) = talk(branch, text, state=turns[-1].state)
    assert asked.state["open"] == "confirm_cancel" and "保留1张" in asked.reply, asked.reply
    assert branch.db.get("train", old["item_id"])["seats"] == seats
    (done,) = talk(branch, "对", state=asked.state)
    assert branch.db.get("train", old["item_id"])["seats"] == seats + 1, done.reply  # exactly one seat back
    (kept,) = _live(done.state)
    assert kept["quantity"] == 1 and kept["item_id"] == old["item_id"] and "1张" in kept["details"]
    assert branch.db.booking(kept["number"])["quantity"] == 1
    assert branch.db.booking(old["number"])["status"] == "changed"


def test_giving_back_part_declined_changes_nothing(branch):
    turns = talk(branch, "后天上海到北京的火车，两张", "第一个", "确认", "退一张")
    seats = branch.db.get("train", turns[2].booked["item_id"])["seats"]
    (kept,) = talk(branch, "算了不退了", state=turns[-1].state)
    assert branch.db.get("train", turns[2].booked["item_id"])["seats"] == seats
    assert branch.db.booking(turns[2].booked["number"])["status"] == "booked", kept.reply


# 2. a change is claimed only when made; a change's target said by code is read back and done on 确认改签
def test_no_change_is_claimed_when_the_offer_read_back_stays_the_same(branch):
    turns = talk(branch, *FLIGHT_READ_BACK)
    pending = turns[-1].state["pending"]
    (same,) = talk(branch, "改成周四的", state=turns[-1].state)  # 12-03 is a Thursday: nothing to change
    assert "已按您说的修改" not in same.reply and "没有变化" in same.reply, same.reply
    assert same.state["pending"] == pending
    (more,) = talk(branch, "改成两张", state=turns[-1].state)
    assert "已按您说的修改" in more.reply and more.state["pending"]["passengers"] == 2, more.reply


@pytest.mark.parametrize(
    "texts", [("我要改签", "你没听懂，改成MU8570"), ("确认改签，改成MU8570",), ("把订单1改签到晚上那班MU8570",)]
)
def test_a_change_to_a_named_flight_is_read_back_and_done_on_the_yes(branch, texts):
    turns = talk(branch, *FLIGHT_READ_BACK, "确认", *texts)
    old = turns[2].booked
    asked = turns[-1]
    assert asked.state["open"] == "confirm_booking" and "MU8570" in asked.reply, asked.reply
    assert "确认改签" in asked.reply and "请问您要订哪一个" not in asked.reply
    (done,) = talk(branch, "确认改签", state=asked.state)
    assert done.booked is not None and done.booked["details"].startswith("MU8570"), done.reply
    assert branch.db.booking(old["number"])["status"] == "changed"


def test_a_no_after_a_new_choice_in_the_same_turn_does_not_undo_it(branch):
    turns = talk(branch, *FLIGHT_READ_BACK, "确认", "我要改签", "改成MU8570，刚才那个不对")
    last = turns[-1]
    assert last.state["open"] == "confirm_booking" and "MU8570" in last.reply, last.reply
    assert "没有预订" not in last.reply and "再见" not in last.reply


# 4. at a list or an alternative, "X也可以" adds X; a no to an implied switch keeps the booking and the request
def test_another_window_said_as_also_fine_widens_the_search(branch):
    turns = talk(branch, "后天上海到北京的高铁，上午的", "下午的也可以")
    slots = turns[-1].state["slots"]
    assert (slots.get("time_from"), slots.get("time_to")) == ("06:00", "18:00"), turns[-1].reply
    assert "08:25" in turns[-1].reply and "17:35" in turns[-1].reply


@pytest.mark.parametrize("no", ["不用退了", "机票不用退", "先留着吧"])
def test_a_no_to_an_implied_switch_keeps_the_flight_and_searches_the_train(branch, no):
    turns = talk(branch, *FLIGHT_READ_BACK, "确认", "算了，我还是坐高铁吧")
    assert turns[-1].state["open"] == "confirm_cancel", turns[-1].reply
    (kept,) = talk(branch, no, state=turns[-1].state)
    assert kept.state["bookings"][0].get("status") != "cancelled", kept.reply
    assert branch.db.booking(kept.state["bookings"][0]["number"])["status"] == "booked"
    slots = kept.state["slots"]
    assert kept.state["domain"] == "train" and kept.state["open"] in ("choose_offer", "confirm_booking"), kept.reply
    assert (slots["dep_city"], slots["arr_city"], slots["date"]) == ("上海", "北京", "2026-12-03")


def test_thanks_said_with_the_yes_is_no_goodbye(branch):
    turns = talk(branch, *FLIGHT_READ_BACK, "好的确认，谢谢啦")
    last = turns[-1]
    assert last.booked is not None and "再见" not in last.reply, last.reply
    assert last.state["open"] == "anything_else" and last.reply.endswith("还需要别的帮助吗？")
    (bye,) = talk(branch, "没有了", state=last.state)
    assert "再见" in bye.reply


@pytest.mark.parametrize("text", ["改签到第二天同一班", "能不能往后推一天，还是这班"])
def test_the_next_day_of_a_change_counts_from_the_day_booked(branch, text):
    turns = talk(branch, *FLIGHT_READ_BACK, "确认", text)
    last = turns[-1]
    assert last.state["open"] == "confirm_booking" and last.state["pending"]["date"] == "2026-12-04", last.reply
    code = turns[2].booked["details"].split(" ")[0]
    assert f"改为：{code} 12月4日" in last.reply, last.reply


@pytest.mark.parametrize("text", ["就第一个吧，要两张", "第二个，我们两个人", "订第二个，两张票，确认"])
def test_a_choice_and_a_count_in_one_turn_are_read_back_once(branch, text):
    turns = talk(branch, "后天上海到北京的机票", text)
    last = turns[-1]
    assert last.reply.count("即将为您预订") == 1 and "已按您说的修改" not in last.reply, last.reply
    assert last.state["pending"]["passengers"] == 2 and last.booked is None


def test_a_choice_that_fits_none_said_with_a_yes_asks_once(branch):
    turns = talk(branch, "后天上海到北京的机票", "就CA7410，订吧")  # (no CA7410 on that route)
    last = turns[-1]
    assert last.booked is None and last.state["open"] == "choose_offer"
    assert "请先告诉我要订哪一个" not in last.reply and last.reply.endswith("请问您要订哪一个？"), last.reply


def test_a_yes_said_twice_books_once_and_says_no_goodbye(branch):
    turns = talk(branch, "后天上海到北京的机票", "670那个，两张", "对，两张，确认")
    last = turns[-1]
    assert last.booked is not None and last.booked["quantity"] == 2 and len(last.state["bookings"]) == 1
    assert "再见" not in last.reply and last.state["open"] == "anything_else", last.reply


def test_the_day_said_with_a_longer_stay_is_the_night_added(branch):
    turns = talk(branch, *HOTEL_BOOKED, "是刚订的北京那家汉庭，4号再住一晚")
    last = turns[-1]
    assert last.acts == ["change_booking"], last.reply
    assert last.state["pending"]["date"] == "2026-12-03" and last.state["pending"]["nights"] == 2, last.reply


def test_cancelling_all_and_booking_fewer_again_gives_part_back(branch):
    turns = talk(branch, "后天上海到北京的火车，两张", "第一个", "确认", "把订单1整个退了，再给我重新订一张同一趟的")
    old = turns[2].booked
    seats = branch.db.get("train", old["item_id"])["seats"]
    assert turns[-1].state["open"] == "confirm_cancel" and "保留1张" in turns[-1].reply, turns[-1].reply
    (done,) = talk(branch, "确认", state=turns[-1].state)
    (kept,) = _live(done.state)
    assert kept["quantity"] == 1 and kept["item_id"] == old["item_id"]
    assert branch.db.get("train", old["item_id"])["seats"] == seats + 1


@pytest.mark.parametrize("text", ["我记错日子了，应该是周五，能帮我挪过去吗", "日子弄错了，帮我挪到周五吧"])
def test_a_new_day_said_apart_from_the_move_changes_the_booking(branch, text):
    turns = talk(branch, *HOTEL_BOOKED, text)
    last = turns[-1]
    assert "change_booking" in last.acts and last.state["open"] == "confirm_booking", last.reply
    assert last.state["pending"]["date"] == "2026-12-04" and "确认改签" in last.reply and "帮不上忙" not in last.reply


def test_a_change_to_what_is_booked_already_is_said_to_be_none(branch):
    turns = talk(branch, *HOTEL_BOOKED, "酒店改到后天吧")  # booked for 后天 already
    last = turns[-1]
    assert "没有变化" in last.reply and "确认改签" not in last.reply and last.state["open"] == "change", last.reply
    (moved,) = talk(branch, "改到周五", state=last.state)
    assert moved.state["pending"]["date"] == "2026-12-04" and "确认改签" in moved.reply, moved.reply


def test_a_yes_with_a_question_about_the_order_number_books_and_answers(branch):
    turns = talk(branch, "后天在北京订个酒店", "第一个", "确认。新的订单号是多少？")
    last = turns[-1]
    assert last.booked is not None and "订单号1" in last.reply and "您已成功预订" in last.reply, last.reply


def test_a_train_from_another_city_after_a_hotel_goes_to_the_stay(branch):
    turns = talk(branch, "后天在北京订个酒店", "第一个", "确认。再帮我订上海过去的高铁，二等座")
    slots = turns[-1].state["slots"]
    assert turns[-1].booked is not None and turns[-1].state["domain"] == "train", turns[-1].reply
    assert (slots["dep_city"], slots["arr_city"]) == ("上海", "北京"), turns[-1].reply


def test_a_train_home_on_the_check_out_day_after_a_hotel(branch):
    turns = talk(branch, "后天在北京订个酒店", "第一个", "好的就它。退房那天我要回上海，帮我看看火车")
    last = turns[-1]
    slots = last.state["slots"]
    assert last.booked is not None and last.state["domain"] == "train", last.reply
    assert (slots["dep_city"], slots["arr_city"], slots["date"]) == ("北京", "上海", "2026-12-04"), last.reply


def test_giving_back_a_ticket_picks_the_tickets_not_the_rooms(branch):
    turns = talk(branch, "后天上海到北京的火车，两张", "第一个", "确认", "再订后天北京的酒店，两间房", "第一个", "确认")
    assert len(_live(turns[-1].state)) == 2, turns[-1].reply
    (asked,) = talk(branch, "退一张", state=turns[-1].state)
    assert asked.state["cancel"]["order_no"] == turns[2].booked["order_no"] and "保留1张" in asked.reply, asked.reply
    (rooms,) = talk(branch, "房间只留一间就行", state=turns[-1].state)
    assert rooms.state["cancel"]["order_no"] == turns[-1].booked["order_no"] and "保留1间" in rooms.reply, rooms.reply


# an aside about an outing, with the day one means to go, said at a read-back changes nothing
@pytest.mark.parametrize(
    "text, booked",
    [
        ("好。你知道灵隐寺几点开门吗，我5号想去", True),
        ("行。听说西湖那边有灯会吗，我5号想去看看", True),
        ("你知道灵隐寺门票多少钱吗，我4号想去", False),
    ],
)
def test_an_aside_with_the_day_of_an_outing_keeps_the_read_back(branch, text, booked):
    turns = talk(branch, "后天在杭州订个酒店", "第一个")
    pending = turns[-1].state["pending"]
    (turn,) = talk(branch, text, state=turns[-1].state)
    assert "已按您说的修改" not in turn.reply and "重新查找" not in turn.reply, turn.reply
    if booked:
        assert turn.booked is not None and turn.booked["date"] == "2026-12-03", turn.reply
    else:
        assert turn.booked is None and turn.state["pending"] == pending and "请问确认预订吗" in turn.reply


@pytest.mark.parametrize("text", ["我想改一下日期", "能换个时间吗"])
def test_asking_to_change_without_the_new_value_asks_for_it(branch, text):
    turns = talk(branch, *FLIGHT_READ_BACK, "确认", text)
    last = turns[-1]
    assert last.acts == ["change_booking"] and last.state["open"] == "change", last.reply
    assert "帮不上忙" not in last.reply and last.state["rebook"]["order_no"] == turns[2].booked["order_no"]
    (moved,) = talk(branch, "改到周五吧", state=last.state)
    assert moved.state["slots"]["date"] == "2026-12-04" and moved.state["rebook"], moved.reply
