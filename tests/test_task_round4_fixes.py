"""Dialogs for the failures still open after round 3 of the independent online test (notes/tester15-round3.md):
replacing a booked flight by the train, closings and declines, comparing flight and train, a full hotel, a
refused window said alone, a fallback class, a calendar question as the first turn, a longer stay said with a
day. The utterances are our own wording; each dialog runs through ``TaskBranch`` with both act readers over the
small generated database (seed 7, today 2026-12-01, a Tuesday; dates 12-01 to 12-05)."""

from __future__ import annotations

import pytest

from ragdial.task.db import TravelDB
from ragdial.task.manager import TaskBranch
from task_dialogs import talk


@pytest.fixture(params=["learned", "rules"])
def branch(request, travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True), acts=request.param)


FLIGHT_BOOKED = ("后天上海到北京的机票", "第一个", "确认")  # a flight 上海→北京 on 12-03, booked


# 1. the booked flight replaced by the train: the cancellation is asked first, the train searched on its route
@pytest.mark.parametrize("text", ["算了，我还是坐高铁吧", "机票不要了，改坐火车", "要不还是换成高铁吧，飞机退了"])
def test_replacing_a_booked_flight_by_the_train_asks_to_cancel_it_first(branch, text):
    turns = talk(branch, *FLIGHT_BOOKED)
    assert turns[-1].booked is not None
    (asked,) = talk(branch, text, state=turns[-1].state)
    assert asked.state["open"] == "confirm_cancel", asked.reply
    assert "取消" in asked.reply and asked.state["bookings"][0].get("status") != "cancelled"
    (done,) = talk(branch, "好的", state=asked.state)
    assert done.state["bookings"][0].get("status") == "cancelled", done.reply
    assert done.state["domain"] == "train", done.reply
    slots = done.state["slots"]
    assert (slots["dep_city"], slots["arr_city"], slots["date"]) == ("上海", "北京", "2026-12-03")


def test_the_train_window_said_with_the_replacement_is_searched(branch):
    turns = talk(branch, *FLIGHT_BOOKED, "算了，飞机帮我退了，改订下午的高铁")
    assert turns[-1].state["open"] == "confirm_cancel", turns[-1].reply
    (done,) = talk(branch, "确认", state=turns[-1].state)
    assert done.state["slots"].get("period") == "下午" and done.state["domain"] == "train", done.reply


def test_a_train_for_the_way_back_is_no_replacement(branch):
    turns = talk(branch, *FLIGHT_BOOKED, "回来的时候我坐高铁，12月5号北京回上海")
    assert turns[-1].state["open"] != "confirm_cancel", turns[-1].reply
    assert turns[-1].state["bookings"][0].get("status") != "cancelled"
    assert turns[-1].state["domain"] == "train"


# 2. closings and declines end the request; nothing is pushed after them
def test_declining_the_hotel_after_a_booking_lists_nothing(branch):
    turns = talk(branch, "后天上海到北京的高铁", "第一个", "确认，然后帮我订北京的酒店")
    assert turns[-1].state["domain"] == "hotel" and turns[-1].state["open"] == "choose_offer", turns[-1].reply
    (turn,) = talk(branch, "酒店我到了再说，先不订了，谢谢", state=turns[-1].state)
    assert "请问您要订哪一个" not in turn.reply and turn.state["open"] != "choose_offer", turn.reply
    (turn,) = talk(branch, "不订酒店了。我现在订了哪些？", state=turns[-1].state)
    assert "订单号1" in turn.reply and "请问您要订哪一个" not in turn.reply, turn.reply
    assert turn.reply.rstrip().endswith("还需要别的帮助吗？"), turn.reply


def test_putting_off_at_a_read_back_ends_the_request(branch):
    turns = talk(branch, "后天上海到北京的机票", "第二个", "那我再想想，先不订了")
    last = turns[-1]
    assert last.booked is None and not last.state["bookings"]
    assert "请问您要订哪一个" not in last.reply and last.state["open"] == "anything_else", last.reply


def test_what_was_booked_said_again_with_the_yes_starts_nothing(branch):
    turns = talk(branch, "后天在杭州订个酒店", "第一个")
    assert turns[-1].reply.rstrip().endswith("请问确认预订吗？"), turns[-1].reply
    (turn,) = talk(branch, "周四对吧，行，就订一晚", state=turns[-1].state)
    assert turn.booked is not None, turn.reply
    assert turn.state["open"] == "anything_else" and "哪个城市" not in turn.reply, turn.reply
    (bye,) = talk(branch, "不用了，就这家，谢谢", state=turn.state)
    assert "哪个城市" not in bye.reply and bye.state["open"] is None, bye.reply


# 3. comparing the two ways to travel, and a question naming the other one
@pytest.mark.parametrize(("text", "word"), [("坐飞机和坐火车哪个便宜", "最便宜"), ("高铁和飞机哪个快", "最快")])
def test_comparing_flight_and_train_answers_both_and_asks_which(branch, text, word):
    (turn,) = talk(branch, f"后天从上海去北京，{text}？")
    assert f"飞机{word}" in turn.reply and f"火车{word}" in turn.reply, turn.reply
    assert turn.state["open"] == "domain" and turn.state["domain"] is None
    (chosen,) = talk(branch, "那就坐火车", state=turn.state)
    assert chosen.state["domain"] == "train" and chosen.state["slots"]["date"] == "2026-12-03", chosen.reply
    assert chosen.state["open"] in ("choose_offer", "confirm_booking"), chosen.reply


def test_a_price_question_naming_the_other_mode_lists_it(branch):
    turns = talk(branch, "后天上海到北京的火车", "那飞机最便宜多少钱")
    assert turns[-1].state["domain"] == "flight", turns[-1].reply
    assert "航班" in turns[-1].reply and turns[-1].state["slots"]["arr_city"] == "北京"


# 4. a hotel that is there but full is said to be full, with what else there is
def test_a_full_hotel_is_full_not_absent(branch):
    (turn,) = talk(branch, "后天在杭州订万豪酒店")  # 万豪酒店(杭州滨江店) has no room on 12-03
    assert "万豪酒店(杭州滨江店)" in turn.reply and "订满" in turn.reply, turn.reply
    assert "不能满足的是" not in turn.reply
    assert turn.state["open"] == "offer_alternative" and turn.state["offers"], turn.reply


def test_asking_about_an_unlisted_brand_while_choosing_searches_it(branch):
    turns = talk(branch, "后天在杭州订个酒店", "那万豪呢？")
    assert "订满" in turns[-1].reply and "帮不上忙" not in turns[-1].reply, turns[-1].reply


# 5. a window refused on its own, and a fallback class
@pytest.mark.parametrize("text", ["上午不行", "我上午没空"])
def test_a_morning_refused_alone_bounds_the_departures(branch, text):
    turns = talk(branch, "后天上海到北京的高铁", text)
    assert turns[-1].state["slots"].get("time_from") == "12:00", turns[-1].reply
    assert "帮不上忙" not in turns[-1].reply


def test_a_fallback_class_keeps_the_window_said_with_it(branch):
    turns = talk(branch, "后天上海到北京的高铁", "上午不行，我下午才有空。下午没商务座的话一等座也行")
    slots = turns[-1].state["slots"]
    assert slots.get("period") == "下午" and slots.get("seat_class") == "一等座", turns[-1].reply


# 6. a calendar question is answered, also as the first turn; 那天 then names that day
def test_a_calendar_question_as_the_first_turn_is_answered(branch):
    assert branch.claims(None, "下下周二是几号来着？")
    (turn,) = talk(branch, "下下周二是几号来着？")
    assert "12月15日" in turn.reply and "星期二" in turn.reply and "帮不上忙" not in turn.reply, turn.reply
    (turn,) = talk(branch, "那天从上海飞北京", state=turn.state)
    assert turn.state["slots"].get("date") == "2026-12-15", turn.reply


def test_today_asked_mid_dialog_gets_no_refusal(branch):
    turns = talk(branch, "后天上海到北京的机票", "今天星期几来着")
    assert "12月1日，星期二" in turns[-1].reply and "帮不上忙" not in turns[-1].reply, turns[-1].reply


# 7. a day said with staying longer is the last night, not a new check-in
@pytest.mark.parametrize("text", ["哦对了，我们周五还要再住一天", "再住一晚吧"])
def test_staying_longer_lengthens_the_stay(branch, text):
    turns = talk(branch, "后天在杭州订个酒店", "第一个", text)
    last = turns[-1]
    assert last.booked is None and last.state["slots"]["date"] == "2026-12-03", last.reply
    assert last.state["slots"].get("nights") == 2, last.reply


# 8. a yes said with a code or an aside at a read-back
def test_a_yes_naming_the_offer_read_back_books_it_once(branch):
    turns = talk(branch, "后天上海到北京的机票", "第一个")
    code = turns[-1].reply.split("即将为您预订：")[1].split()[0]
    (turn,) = talk(branch, f"确认预订，{code}", state=turns[-1].state)
    assert turn.booked is not None and code in turn.booked["details"], turn.reply
    assert "没有可选" not in turn.reply and len(turn.state["bookings"]) == 1, turn.reply


def test_a_yes_naming_another_offer_reads_that_one_back_and_books_nothing(branch):
    turns = talk(branch, "后天上海到北京的机票")
    codes = [line.split()[1] for line in turns[-1].reply.splitlines() if line[:2] in ("1.", "2.")]
    turns = talk(branch, "第一个", f"确认预订，{codes[1]}", state=turns[-1].state)
    assert turns[-1].booked is None and not turns[-1].state["bookings"], turns[-1].reply
    assert f"即将为您预订：{codes[1]}" in turns[-1].reply, turns[-1].reply


def test_a_yes_before_an_aside_question_still_books(branch):
    turns = talk(branch, "后天上海到北京的机票", "第一个", "行，确定。话说北京烤鸭哪家最正宗啊？")
    assert turns[-1].booked is not None, turns[-1].reply
    assert turns[-1].reply.rstrip().endswith("还需要别的帮助吗？"), turns[-1].reply


# 9. nothing more after "anything else?", and a turn said plainly keeps its words
@pytest.mark.parametrize("text", ["就这些吧", "先这样吧", "好，就这样"])
def test_nothing_more_after_a_booking_says_goodbye(branch, text):
    turns = talk(branch, "后天上海到北京的机票", "第一个", "确认", text)
    assert "再见" in turns[-1].reply and "帮不上忙" not in turns[-1].reply, turns[-1].reply
    assert turns[-1].state["open"] is None


def test_an_english_yes_with_a_further_request_is_not_glued_together(travel_db_path):
    from ragdial.task.acts import Context, said_plainly

    context = Context("flight", "confirm_booking", state={"dep_city": "上海", "arr_city": "北京"})
    text = "yes, and I also need a hotel in Beijing for 2 nights"
    assert said_plainly(text, context) == text
    assert said_plainly("好，订吧", context) == "好，确认"  # (the clause naming the booking is a plain yes)


# 10. a brand alone asks for a hotel; a day said as N号 while fewer offers are listed is that day
def test_a_brand_alone_is_a_hotel_request_and_another_day_for_it_is_a_day(branch):
    (turn,) = talk(branch, "后天在杭州订万豪")
    assert turn.state["domain"] == "hotel" and turn.state["slots"].get("brand") == "万豪酒店", turn.reply
    assert "订满" in turn.reply and "12月4日还有" in turn.reply, turn.reply
    (turn,) = talk(branch, "那就4号吧", state=turn.state)
    assert turn.state["slots"]["date"] == "2026-12-04", turn.reply
    assert "即将为您预订：万豪酒店(杭州滨江店)" in turn.reply, turn.reply


# 11. 改签 to another day on the same train
def test_changing_to_another_day_on_the_same_train_keeps_the_train(branch):
    turns = talk(branch, "今天上海到北京的火车", "第一个", "确认")
    code = turns[-1].booked["details"].split()[0]
    (turn,) = talk(branch, "帮我改签到明天，还是这趟车", state=turns[-1].state)
    assert turn.state["slots"].get("code") == code and turn.state["slots"]["date"] == "2026-12-02", turn.reply
    assert f"改为：{code} 12月2日" in turn.reply or all(
        line.split()[1] == code for line in turn.reply.splitlines() if line[:2] in ("1.", "2.", "3.")
    ), turn.reply


# 12. a short refusal at a read-back is a no, not an aside
@pytest.mark.parametrize("text", ["我不要这个", "这个时间不行", "不太想要", "太早了不要"])
def test_a_short_refusal_at_a_read_back_books_nothing_and_is_no_aside(branch, text):
    turns = talk(branch, "后天上海到北京的机票", "第一个", text)
    assert turns[-1].booked is None and "帮不上忙" not in turns[-1].reply, turns[-1].reply
    assert "没有预订" in turns[-1].reply, turns[-1].reply


# 13. a change said with the yes at a read-back books nothing before it is read back; a question after a booking
def test_a_change_said_with_the_yes_books_nothing_yet(branch):
    turns = talk(branch, "后天上海到北京的火车", "第一个")
    assert "硬座" in turns[-1].reply.splitlines()[-1], turns[-1].reply
    code = turns[-1].reply.split("即将为您预订：")[1].split()[0]
    (turn,) = talk(branch, "对，硬卧下铺，确认", state=turns[-1].state)
    assert turn.booked is None and not turn.state["bookings"], turn.reply
    assert turn.state["slots"].get("berth") == "下铺", turn.reply
    # the same train in the class said is read back (when it has one such row), not a new list
    assert f"即将为您预订：{code}" in turn.reply and "硬卧下铺" in turn.reply, turn.reply


def test_a_question_right_after_a_booking_is_about_what_was_booked(branch):
    turns = talk(branch, "后天上海到北京的机票", "第一个", "确认", "几点到？")
    assert "到达" in turns[-1].reply and "请先告诉我" not in turns[-1].reply, turns[-1].reply
