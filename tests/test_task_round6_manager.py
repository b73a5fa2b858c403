"""Round-6 failure classes of the dialog manager, in our own words (not the tester's): a booked hotel swapped for one
of another star level or district, a change asked without saying what, a cancellation said while a change is asked,
a request after a cancellation keeping the stay, two legs in one first turn (each with its own conditions, in the
order said), too few seats left said as such, English replies without Chinese, a yes while a list is open, and a yes
with "the hotel too" that is no question about bookings. Small generated database (seed 7, today 2026-12-01, a
Tuesday; dates 12-01 to 12-05), both act readers."""

from __future__ import annotations

import re

import pytest

from ragdial.task.db import TravelDB
from ragdial.task.manager import TaskBranch
from task_dialogs import talk

HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(params=["learned", "rules"])
def branch(request, travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True), acts=request.param)


def _live(state):
    return [b for b in state["bookings"] if b.get("status") != "cancelled"]


def _hotel(branch, item_id):
    return branch.db.get("hotel", item_id)


# 成都锦江: 维也纳 3星 200, 全季 3星 270, 美居 4星 390; 北京: 亚朵 海淀 3星, 维也纳 朝阳 3星, 希尔顿 朝阳 5星
CHENGDU_THREE_STAR = ("后天在成都锦江区订个三星的酒店，住两晚", "维也纳那家", "确认")
BEIJING_HAIDIAN = ("后天北京海淀区的三星酒店住一晚", "确认")


# 1. a booked hotel swapped by star level or district: a change of that booking, never a new request
@pytest.mark.parametrize(
    "text", ["住着不太满意，帮我换成四星的吧，日期照旧", "酒店给我换成四星的", "能不能换一家四星的，别的不变"]
)
def test_a_hotel_swapped_for_four_stars_is_read_back_as_a_change(branch, text):
    turns = talk(branch, *CHENGDU_THREE_STAR)
    old = turns[-1].booked
    assert old is not None and "维也纳" in old["details"], turns[-1].reply
    (asked,) = talk(branch, text, state=turns[-1].state)
    assert asked.state["open"] == "confirm_booking", asked.reply
    assert "哪个城市" not in asked.reply and "没有变化" not in asked.reply, asked.reply
    new = _hotel(branch, asked.state["pending"]["id"])
    assert new["stars"] == 4 and new["city"] == "成都", asked.reply
    assert asked.state["pending"]["date"] == "2026-12-03" and asked.state["pending"]["nights"] == 2
    assert branch.db.booking(old["number"])["status"] == "booked"  # nothing changed before the yes
    (done,) = talk(branch, "好的", state=asked.state)
    assert done.booked is not None and "美居" in done.booked["details"], done.reply
    assert branch.db.booking(old["number"])["status"] == "changed"
    assert [b["order_no"] for b in _live(done.state)] == [done.booked["order_no"]]


@pytest.mark.parametrize("text", ["酒店换到朝阳区那边吧，还是三星，机票不用动", "帮我把酒店挪到朝阳区去，三星就行"])
def test_a_hotel_swapped_to_another_district_keeps_the_stay(branch, text):
    turns = talk(branch, *BEIJING_HAIDIAN)
    old = turns[-1].booked
    assert old is not None and "海淀" in old["details"], turns[-1].reply
    (asked,) = talk(branch, text, state=turns[-1].state)
    assert asked.state["open"] == "confirm_booking", asked.reply
    new = _hotel(branch, asked.state["pending"]["id"])
    assert (new["district"], new["stars"]) == ("朝阳", 3), asked.reply
    assert asked.state["pending"]["date"] == "2026-12-03"


def test_a_swap_to_the_district_already_booked_is_another_hotel_there_not_no_change(branch):
    turns = talk(branch, *CHENGDU_THREE_STAR)
    (asked,) = talk(branch, "换成锦江区的另一家吧", state=turns[-1].state)
    assert "没有变化" not in asked.reply, asked.reply
    shown = asked.state.get("offers") or [asked.state["pending"]["id"]]
    assert all("维也纳" not in _hotel(branch, i)["name"] for i in shown), asked.reply


def test_a_swap_naming_the_booking_by_its_order_number(branch):
    turns = talk(branch, *CHENGDU_THREE_STAR)
    order = turns[-1].booked["order_no"]
    (asked,) = talk(branch, f"把订单{order}改成锦江区的四星", state=turns[-1].state)
    assert asked.state["open"] == "confirm_booking" and "没有变化" not in asked.reply, asked.reply
    assert _hotel(branch, asked.state["pending"]["id"])["stars"] == 4


# 2. a change asked without saying what: what to change is asked, nothing is booked or dropped
@pytest.mark.parametrize("text", ["改一下", "我想改改", "change it"])
def test_an_unclear_change_at_a_read_back_asks_what_to_change(branch, text):
    turns = talk(branch, "后天北京到天津的高铁，二等座", "第一个")
    assert turns[-1].state["open"] == "confirm_booking", turns[-1].reply
    (asked,) = talk(branch, text, state=turns[-1].state)
    assert asked.booked is None and asked.state["open"] == "confirm_booking", asked.reply
    assert ("要改什么" in asked.reply) or ("What should I change" in asked.reply), asked.reply
    assert "帮不上" not in asked.reply and "can't help" not in asked.reply
    (again,) = talk(branch, "要两张", state=asked.state)
    assert again.state["pending"]["passengers"] == 2, again.reply


def test_an_unclear_change_of_a_hotel_booking_names_what_can_change(branch):
    turns = talk(branch, *BEIJING_HAIDIAN)
    (asked,) = talk(branch, "帮我改一下这个订单", state=turns[-1].state)
    assert "要改什么" in asked.reply and "换一家" in asked.reply, asked.reply


# 3. cancelling said while a change is asked, or right after a booking; the request after it keeps the stay
def test_cancelling_while_a_change_is_asked_cancels_that_booking(branch):
    turns = talk(branch, *BEIJING_HAIDIAN)
    old = turns[-1].booked
    turns = talk(branch, "帮我改一下这个订单", "算了，直接给我退掉吧", state=turns[-1].state)
    assert turns[-1].state["open"] == "confirm_cancel", turns[-1].reply
    (done,) = talk(branch, "确认", state=turns[-1].state)
    assert branch.db.booking(old["number"])["status"] == "cancelled", done.reply
    assert done.state["open"] == "anything_else" and "改哪个条件" not in done.reply, done.reply
    (again,) = talk(branch, "那重新订个五星的吧", state=done.state)
    assert "哪个城市" not in again.reply and "品牌" not in again.reply, again.reply
    shown = again.state.get("offers") or [again.state["pending"]["id"]]
    assert all(_hotel(branch, i)["stars"] == 5 and _hotel(branch, i)["city"] == "北京" for i in shown), again.reply


@pytest.mark.parametrize("text", ["取消吧", "还是退了吧"])
def test_cancel_said_right_after_a_booking_asks_to_cancel_it_not_goodbye(branch, text):
    turns = talk(branch, *BEIJING_HAIDIAN)
    (asked,) = talk(branch, text, state=turns[-1].state)
    assert asked.state["open"] == "confirm_cancel" and "再见" not in asked.reply, asked.reply
    assert branch.db.booking(turns[-1].booked["number"])["status"] == "booked"


# 4. two legs in the first turn, each with its own conditions, in the order said
def test_the_way_back_keeps_its_own_time_and_the_way_out_its_own(branch):
    (first,) = talk(branch, "后天早上从北京坐高铁去天津，两张二等座；大后天晚上再回北京")
    state = first.state
    assert state["slots"].get("period") == "早上" and state["slots"]["date"] == "2026-12-03", first.reply
    assert state["slots"]["dep_city"] == "北京" and state["slots"]["arr_city"] == "天津"
    (back,) = state["queue"]
    assert (back["dep_city"], back["arr_city"], back["date"]) == ("天津", "北京", "2026-12-04")
    assert back.get("period") == "晚上" and back.get("passengers") == 2, back
    assert "回程" in first.reply, first.reply


def test_the_way_back_class_said_for_it_is_not_the_way_outs(branch):
    (first,) = talk(branch, "后天从北京飞上海，经济舱；周五再飞回北京，回程要商务舱")
    state = first.state
    assert state["slots"].get("seat_class") in (None, "经济舱"), first.reply
    assert "time_to" not in state["slots"] and state["slots"]["date"] == "2026-12-03"
    (back,) = state["queue"]
    assert back["date"] == "2026-12-04" and back["seat_class"] == "商务舱", back


def test_a_stay_then_a_trip_in_one_turn_is_two_requests_in_order(branch):
    (first,) = talk(branch, "后天在杭州西湖区住两晚，四星，一间；退房那天下午从杭州坐高铁去上海")
    assert "不能相同" not in first.reply and first.state["domain"] == "hotel", first.reply
    assert first.state["open"] == "confirm_booking" and "美居" in first.reply, first.reply
    (trip,) = first.state["queue"]
    assert (trip["domain"], trip["dep_city"], trip["arr_city"], trip["date"]) == ("train", "杭州", "上海", "2026-12-05")
    (booked,) = talk(branch, "好的", state=first.state)
    assert booked.booked is not None and booked.state["domain"] == "train", booked.reply


# 5. too few seats left: how many, and the choice to take them
def test_too_few_seats_says_how_many_are_left_and_offers_them(branch):
    turns = talk(branch, "12月3号北京飞上海的经济舱，两张", "CA3725")
    assert "只剩1张" in turns[-1].reply and "售完" not in turns[-1].reply, turns[-1].reply
    assert turns[-1].booked is None and turns[-1].state["pending"] is None
    (taken,) = talk(branch, "行", state=turns[-1].state)
    assert taken.state["open"] == "confirm_booking" and "CA3725" in taken.reply, taken.reply
    assert taken.state["pending"]["passengers"] == 1


# 6. English replies carry no Chinese: names of airports, stations, classes and hotels in English
def test_english_replies_have_no_chinese(branch):
    turns = talk(branch, "a train from Beijing to Tianjin on December 3, second class", "the first one", "yes")
    turns += talk(branch, "I also need a hotel in Beijing that night", "the first one", state=turns[-1].state)
    for turn in turns:
        assert not HAN.search(turn.reply), turn.reply
    assert "Station" in turns[0].reply and "second class" in turns[0].reply, turns[0].reply


# 7. a yes while a list is open asks which one; a yes with "the hotel too" is no question about bookings
@pytest.mark.parametrize("text", ["好的", "yes"])
def test_a_bare_yes_at_a_list_asks_which_one(branch, text):
    turns = talk(branch, "后天北京到天津的高铁，二等座", text)
    assert turns[-1].state["open"] == "choose_offer" and turns[-1].booked is None, turns[-1].reply
    assert "帮不上" not in turns[-1].reply and "can't help" not in turns[-1].reply, turns[-1].reply


def test_a_yes_for_the_hotel_too_is_no_question_about_bookings(branch):
    turns = talk(branch, "后天北京到天津的高铁，二等座", "第一个", "确认。另外天津也订个酒店住一晚")
    if turns[-1].state["open"] == "choose_offer":
        turns += talk(branch, "第一个", state=turns[-1].state)
    (done,) = talk(branch, "好，酒店也订上", state=turns[-1].state)
    assert "还没有成功" not in done.reply, done.reply


# 8. an upgrade to a class the flight does not have: the best it has is offered, not other flights
@pytest.mark.parametrize("text", ["帮我升到头等舱吧，还是这班", "这班能换成头等舱吗"])
def test_an_upgrade_to_a_class_the_flight_lacks_offers_the_one_it_has(branch, text):
    turns = talk(branch, "后天上海飞北京的机票，经济舱", "HU9746", "确认")
    old = turns[-1].booked
    assert old is not None and "HU9746" in old["details"], turns[-1].reply
    (asked,) = talk(branch, text, state=turns[-1].state)
    assert "没有头等舱" in asked.reply and "商务舱" in asked.reply, asked.reply
    assert "MU8570" not in asked.reply and "ZH1189" not in asked.reply, asked.reply
    turns = talk(branch, "好的", "确认", state=asked.state)
    assert turns[-1].booked is not None and "HU9746" in turns[-1].booked["details"], turns[-1].reply
    assert "商务舱" in turns[-1].booked["details"] and branch.db.booking(old["number"])["status"] == "changed"


def test_too_few_rooms_says_how_many_are_left_not_full(branch):
    (asked,) = talk(branch, "后天在广州天河区订亚朵酒店，两间，住一晚")
    assert "亚朵酒店(广州天河店)只剩1间" in asked.reply and "订满" not in asked.reply, asked.reply
    assert asked.booked is None


def test_an_english_sentence_with_a_chinese_name_stays_english(branch):
    turns = talk(branch, "I need a hotel in Shanghai the day after tomorrow", "Book the 亚朵 in Jing'an please")
    assert turns[-1].state["language"] == "en" and not HAN.search(turns[-1].reply), turns[-1].reply


def test_a_condition_every_listed_offer_meets_said_with_a_choice_reads_the_choice_back(branch):
    turns = talk(branch, "后天上海飞北京的机票，经济舱", "浦东走就浦东走吧，第二个")
    assert turns[-1].state["open"] == "confirm_booking", turns[-1].reply
    assert turns[-1].reply.count("请问") == 1 and "订哪一个" not in turns[-1].reply, turns[-1].reply


def test_stars_said_after_an_unclear_change_of_a_hotel_are_another_hotel_not_the_same_brand(branch):
    turns = talk(branch, *CHENGDU_THREE_STAR)
    turns = talk(branch, "帮我改一下这个订单", "换成四星的", state=turns[-1].state)
    asked = turns[-1]
    assert "品牌" not in asked.reply and asked.state["open"] == "confirm_booking", asked.reply
    assert _hotel(branch, asked.state["pending"]["id"])["stars"] == 4


@pytest.mark.parametrize("question", ["what did I book?", "can you show me my bookings"])
def test_an_english_question_about_the_bookings_lists_them(branch, question):
    turns = talk(branch, "a train from Beijing to Tianjin on December 3, second class", "the first one", "yes")
    (asked,) = talk(branch, question, state=turns[-1].state)
    assert f"booking {turns[-1].booked['order_no']}" in asked.reply and "can't help" not in asked.reply, asked.reply


def test_english_district_names_follow_how_they_are_said():
    from ragdial.task import english

    assert english.hotel("维也纳酒店(北京朝阳店)") == "Vienna Hotel (Beijing Chaoyang)"
    assert english.place("首都机场") == "Capital Airport" and english.place("北京西站") == "Beijing West Station"
    assert english.scrub("4星及以上、朝阳（经济舱）") == "4-star or better, Chaoyang (economy)"
