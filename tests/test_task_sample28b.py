"""The seven slow-passing survivors of the seed-28 task sample (docs/testing.md, sessions 8 and 9), each a user turn
that no test said: a remark on an offer ("出发时间有点早") that asks nothing, "which district" in English, two
questions about one offer in one clause, an English city name of two words inside a Chinese turn, "最后一个" and a
berth picking a listed offer, a new train code said while a change of one of two bookings waits, and the English
"after 6 pm" / "by 10 am" of the slot parser. Hand-written turns over the small seeded travel database."""

from __future__ import annotations

import pytest

from ragdial.task.acts import understand
from ragdial.task.db import Gazetteer, TravelDB
from ragdial.task.manager import TaskBranch
from ragdial.task.slots import parse
from task_dialogs import TODAY, talk, travel_gazetteer

TRAINS = "帮我订明天北京到上海的火车票"  # lists K524 硬座, T475 硬座, K524 硬卧上铺 (seed 7)


@pytest.fixture
def branch(travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True))


def test_a_remark_that_the_departure_is_early_is_no_question_about_the_departure(branch):
    listed, remark = talk(branch, TRAINS, "出发时间有点早")
    assert listed.state["open"] == "choose_offer"
    assert "request" not in remark.acts and "19:15出发" not in remark.reply, remark.reply
    # asked as a question, it is one
    _listed, asked = talk(branch, TRAINS, "出发时间是不是有点早？")
    assert asked.acts == ["request"] and "K524 19:15出发" in asked.reply, asked.reply


def test_which_district_in_english_is_answered_with_the_district(branch):
    listed, asked = talk(branch, "I need a hotel in Shanghai tomorrow for one night", "which district is it in?")
    assert listed.state["open"] == "choose_offer"
    assert asked.acts == ["request"] and "district: Xuhui" in asked.reply, asked.reply  # (English names, task9m)


def test_two_questions_about_one_offer_in_one_clause_are_both_answered(branch):
    _listed, asked = talk(branch, TRAINS, "第一个几点出发几点到")
    assert asked.acts == ["request"]
    assert "K524 19:15出发" in asked.reply and "K524 次日09:54到达上海虹桥站" in asked.reply, asked.reply


def test_an_english_city_name_of_two_words_in_a_chinese_turn_is_not_read_as_its_last_word():
    gaz = Gazetteer(
        cities={"北京": "北京", "beijing": "北京", "纽约": "纽约", "new york": "纽约", "约克": "约克", "york": "约克"},
        english={"北京": "Beijing", "纽约": "New York", "约克": "York"},
    )
    (act,) = understand("明天从北京飞new york", None, gaz, TODAY)
    assert (act.act, act.slots["dep_city"], act.slots["arr_city"]) == ("inform", "北京", "纽约")
    (act,) = understand("明天从北京飞York", None, gaz, TODAY)
    assert act.slots["arr_city"] == "约克"


def test_the_last_one_is_the_last_offer_listed(branch):
    listed, chosen = talk(branch, TRAINS, "最后一个")
    assert listed.reply.splitlines()[3].startswith("3. K524") and "硬卧上铺 172元" in listed.reply.splitlines()[3]
    assert chosen.acts == ["select"] and chosen.state["open"] == "confirm_booking"
    assert "即将为您预订：K524" in chosen.reply and "硬卧上铺 172元" in chosen.reply, chosen.reply


def test_a_berth_said_picks_the_one_offer_with_that_berth(branch):
    _listed, chosen = talk(branch, TRAINS, "要上铺的那个")
    assert chosen.state["open"] == "confirm_booking" and "硬卧上铺 172元，1张" in chosen.reply, chosen.reply


def test_a_train_code_said_during_a_change_of_one_of_two_bookings_changes_that_booking(branch):
    turns = ("第一个", "确认", "再订一张后天上海到北京的火车票", "第一个", "确认", "我要改签订单1", "改成T475")
    *_, booked_back, change, moved = talk(branch, TRAINS, *turns)
    assert booked_back.booked and "订单号2" in booked_back.reply
    assert change.state["open"] == "change" and "改签订单1" in change.reply
    assert moved.acts == ["change_booking"] and moved.state["open"] == "confirm_booking", moved.reply
    assert "订单号1：K524" in moved.reply and "改为：T475 12月2日 18:05北京南站" in moved.reply


@pytest.fixture(scope="module")
def gaz(tmp_path_factory):
    return travel_gazetteer(tmp_path_factory.mktemp("db"), seed=1, days=3)


@pytest.mark.parametrize(
    ("text", "window"),
    [
        ("a flight from Beijing to Shanghai tomorrow after 6 pm", ("18:00", None)),
        ("a flight from Beijing to Shanghai tomorrow after 9", ("09:00", None)),
        ("a train from Beijing to Shanghai tomorrow before 11am", (None, "11:00")),
        ("a train from Beijing to Shanghai tomorrow, leaving by 8 pm", (None, "20:00")),
    ],
)
def test_an_english_departure_window_is_parsed(gaz, text, window):
    p = parse(text, gaz, TODAY)
    assert (p.time_from, p.time_to, p.period) == (*window, None)
