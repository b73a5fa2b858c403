"""Regression dialogs for the booking-integrity errors an independent tester found in round 3 of the online test
(notes/tester15-round3.md). The utterances are our own wording, not the tester's; every dialog runs through
``TaskBranch`` with both act readers over a small generated database (seed 7, today 2026-12-01)."""

from __future__ import annotations

import re

import pytest

from ragdial.task.db import TravelDB
from ragdial.task.manager import TaskBranch
from task_dialogs import talk


@pytest.fixture(params=["learned", "rules"])
def branch(request, travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True), acts=request.param)


TRAIN = ("后天上海到杭州的高铁", "第一个")  # a train read back: G1151 二等座, 1 ticket
HOTEL = ("明天在上海订一晚酒店", "第一个")  # a hotel read back: 1 night, 1 room


def read_back(turn) -> bool:
    return turn.reply.rstrip().endswith(("请问确认预订吗？", "请问确认改签吗？"))


# 1. 对了 ("by the way") opening an afterthought is no yes: the change is applied and read back, nothing is booked
@pytest.mark.parametrize(
    ("start", "text", "slot", "value"),
    [
        (HOTEL, "对了对了，我们要连住三晚", "nights", 3),
        (HOTEL, "啊对了，换成两间房吧", "rooms", 2),
        (TRAIN, "哦对了，一共要三张票", "passengers", 3),
        (TRAIN, "对了我朋友也去，订两张", "passengers", 2),
    ],
)
def test_by_the_way_with_a_change_during_a_read_back_books_nothing(branch, start, text, slot, value):
    turns = talk(branch, *start)
    assert read_back(turns[-1]) and turns[-1].state["open"] == "confirm_booking"
    (turn,) = talk(branch, text, state=turns[-1].state)
    assert turn.booked is None and not turn.state["bookings"], turn.reply
    assert "预订成功" not in turn.reply and turn.state["slots"][slot] == value, turn.reply
    if not read_back(turn):  # the offer read back has too few rooms or seats for the change: the others are listed
        assert turn.state["open"] == "choose_offer", turn.reply
        (turn,) = talk(branch, "第一个", state=turn.state)
    assert read_back(turn), turn.reply
    (done,) = talk(branch, "好，确认", state=turn.state)
    assert done.booked is not None
    assert {"nights": f"住{value}晚", "rooms": f"{value}间", "passengers": f"{value}张"}[slot] in done.booked["details"]


def test_a_plain_yes_still_books(branch):
    turns = talk(branch, *TRAIN, "对")
    assert turns[-1].booked is not None


# 2./3. a yes that names the action asked about (确认改签 / 机票确认取消) is that yes
def rebook_read_back(branch):
    turns = talk(branch, *TRAIN, "确认", "我想改签", "大后天")
    if not read_back(turns[-1]):
        turns += talk(branch, "第一个", state=turns[-1].state)
    assert "确认改签吗" in turns[-1].reply
    return turns[2].booked, turns[-1]


@pytest.mark.parametrize("text", ["确定改签", "好的，就这么改签吧", "那就改签吧", "确认改签这张票"])
def test_a_yes_naming_the_change_makes_the_change(branch, text):
    old, asked = rebook_read_back(branch)
    (done,) = talk(branch, text, state=asked.state)
    assert done.booked is not None and done.booked["order_no"] != old["order_no"], done.reply
    record = branch.db.booking(old["number"])
    assert (record["status"], record["changed_into"]) == ("changed", done.booked["number"])
    assert "已为您改签" in done.reply and "要改什么" not in done.reply and done.state["open"] != "change"


@pytest.mark.parametrize("text", ["火车票确定取消", "确认取消", "对，退掉吧", "行，取消这张票"])
def test_a_yes_naming_the_cancellation_cancels(branch, text):
    turns = talk(branch, *TRAIN, "确认", "帮我把火车票退了")
    old = turns[2].booked
    assert turns[-1].state["open"] == "confirm_cancel", turns[-1].reply
    (done,) = talk(branch, text, state=turns[-1].state)
    assert branch.db.booking(old["number"])["status"] == "cancelled", done.reply
    assert "已取消" in done.reply and "没有取消" not in done.reply


def test_naming_the_cancellation_at_a_booking_read_back_is_no(branch):
    turns = talk(branch, *TRAIN, "确认取消")
    assert turns[-1].booked is None and not turns[-1].state["bookings"]


# 7. 到X in a hotel request is where one stays; a route slot is never named to the user as a raw key
@pytest.mark.parametrize(
    "text",
    ["后天到杭州，住两晚，要五星的，每晚100以内", "下周二要到杭州出差，订个酒店住一晚"],
)
def test_a_hotel_request_naming_where_one_goes_stays_there(branch, text):
    (turn,) = talk(branch, text)
    assert turn.state["domain"] == "hotel"
    assert turn.state["slots"]["city"] == "杭州" and "arr_city" not in turn.state["slots"]
    assert "哪个城市" not in turn.reply
    assert not re.search(r"[a-z]+_[a-z]+", turn.reply)  # no internal slot name in what the user reads


def test_a_fare_asked_about_is_kept_apart_from_its_code(branch):
    """A train code ran into its fare (K514 + 75元 read as K51475元)."""
    *_, turn = talk(branch, "后天上海到杭州的火车", "第二个多少钱？")
    assert turn.reply.startswith("K373：26元")


@pytest.mark.parametrize(
    ("text", "period"),
    [("后天上海到杭州的火车，上午不行，我下午才有空", "下午"), ("明天北京到上海的飞机，早上的不要，晚上走", "晚上")],
)
def test_a_window_refused_inside_a_request_is_not_the_window_searched(branch, text, period):
    """上午不行，我下午才有空 searched the morning (the first window named), round-3 tester dialog 11."""
    (turn,) = talk(branch, text)
    assert turn.state["slots"]["period"] == period
    assert f"{period}的" in turn.reply.splitlines()[0]
