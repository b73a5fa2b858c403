"""The simulated user read line by line, on hand-written replies: option lines and booking summaries, the answer to
each question, a read-back with the wrong nights, rooms or tickets, the booking-integrity errors, the hotel night
after an overnight train, asking about a booking by its domain, and choosing a listed option that fits."""

from __future__ import annotations

import datetime as dt
import random
import re

import pytest

from ragdial.task.goals import Goal, SubGoal
from ragdial.task.simulator import UserSimulator, read_item
from ragdial.task.slots import cn_number, parse_date

TODAY = dt.date(2026, 12, 1)


class Fixed(random.Random):
    """An rng whose ``random()`` is fixed and whose ``choice`` takes the first: one phrasing, no optional turn."""

    def __init__(self, value: float) -> None:
        super().__init__(0)
        self.value = value

    def random(self) -> float:
        return self.value

    def choice(self, seq):
        return seq[0]


def train_then_hotel(**goal) -> Goal:
    return Goal(
        1,
        "train+hotel",
        [
            SubGoal("train", {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02"}, date_expr="明天"),
            SubGoal("hotel", {"city": "上海", "date": "2026-12-02", "nights": 2, "rooms": 2}),
        ],
        **goal,
    )


def simulator(goal: Goal, value: float = 0.99) -> UserSimulator:
    return UserSimulator(goal, TODAY, Fixed(value))


def test_an_option_line_a_hotel_line_and_a_booking_summary_are_read():
    assert read_item("1. G101 12月2日 08:00北京南→12:30上海虹桥 二等座 553元") == {
        "index": 1,
        "code": "G101",
        "day": "12月2日",
        "dep_place": "北京南",
        "arr_place": "上海虹桥",
        "dep_time": "08:00",
        "seat_class": "二等座",
        "berth": "",
        "price": 553,
    }
    sleeper = read_item("2. K21 12月2日 20:00北京→次日08:00上海 硬卧下铺 300元")
    assert sleeper is not None and (sleeper["seat_class"], sleeper["berth"], sleeper["arr_place"]) == (
        "硬卧",
        "下铺",
        "上海",
    )
    assert read_item("3. 如家(浦东店) 3星 浦东 每晚300元") == {
        "index": 3,
        "name": "如家(浦东店)",
        "stars": 3,
        "district": "浦东",
        "price": 300,
    }
    summary = read_item("G101 12月2日 08:00北京南→12:30上海虹桥 二等座 553元，1张")  # no number: index 0
    assert summary is not None and (summary["index"], summary["code"], summary["price"]) == (0, "G101", 553)
    assert read_item("请问您想订哪一个？") is None


def test_each_question_is_answered_from_the_goal():
    user = simulator(train_then_hotel())
    assert user._answer("请问您是坐飞机还是坐火车？") == "坐火车"
    assert user._answer("请问您从哪个城市出发？") == "从北京出发"
    assert user._answer("请问您要去哪个城市？") == "去上海"
    assert parse_date(user._answer("请问您哪天出发？") or "", TODAY) == "2026-12-02"  # the goal's date, in words
    assert user._answer("请问您住在哪个城市？") is None  # a hotel question about a train: restate instead
    assert user._answer("好的。") is None
    user.index = 1  # the hotel part
    assert user._answer("请问您住在哪个城市？") == "上海"
    assert user._answer("请问您从哪个城市出发？") is None  # a travel question about a hotel
    # asked what to change: the whole request again, hotel words and all
    again = user._answer("您想改哪个条件？")
    assert again is not None and again.startswith("我要上海的酒店") and again.endswith("要两间")
    nights = re.search(r"住(.)晚", again)
    assert nights is not None and cn_number(nights.group(1)) == 2


def test_a_read_back_with_the_wrong_nights_rooms_or_tickets_is_corrected():
    user = simulator(train_then_hotel())
    train, hotel = user.goal.subgoals
    assert (
        user._readback_mismatch("为您预订：G101 12月2日 08:00北京南→12:30上海虹桥 二等座 553元，2张。", train)
        == "就一张"
    )
    assert (
        user._readback_mismatch("为您预订：G101 12月2日 08:00北京南→12:30上海虹桥 二等座 553元，1张。", train) is None
    )
    nights = user._readback_mismatch("为您预订：如家(浦东店)，12月2日入住，住3晚，2间。", hotel)
    assert nights is not None and nights[0] + nights[-1] == "住晚" and cn_number(nights[1:-1]) == 2
    assert user._readback_mismatch("为您预订：如家(浦东店)，12月2日入住，住2晚，1间。", hotel) == "是两间吧？"
    assert user._readback_mismatch("为您预订：如家(浦东店)，12月2日入住，住2晚，2间。", hotel) is None


BOOKED_SLEEPER = "预订成功，订单号12345：K21 12月2日 20:00北京→次日08:00上海 硬卧下铺 300元。"


def test_a_booking_the_user_did_not_confirm_is_an_integrity_error():
    user = simulator(train_then_hotel())
    user.last_kind = "request"
    user.react(BOOKED_SLEEPER)
    assert user.errors == ["booking made without confirmation"]


def test_a_confirmation_neither_booked_nor_asked_again_is_an_integrity_error():
    user = simulator(train_then_hotel())
    user.last_kind = "confirm"
    user.react("好的。")
    assert user.errors == ["confirmation dropped: neither booked nor asked again"]
    again = simulator(train_then_hotel())
    again.last_kind = "confirm"
    again.react("为您预订：G101 12月2日 08:00北京南→12:30上海虹桥 二等座 553元。请问确认预订吗？")
    assert (again.errors, again.confirms_without_booking) == ([], 1)


def test_after_an_overnight_train_the_hotel_is_for_the_night_of_arrival():
    user = simulator(train_then_hotel())
    user.last_kind = "confirm"
    following = user.react(BOOKED_SLEEPER)
    assert user.errors == [] and user.bookings == [(0, 12345)] and user.index == 1
    assert user.goal.subgoals[1].constraints["date"] == "2026-12-03"  # arrives the next day (次日)
    assert following is not None and following.startswith("再帮我订") and "上海" in following


def test_a_train_arriving_the_same_day_keeps_the_hotel_date():
    user = simulator(train_then_hotel())
    user.last_kind = "confirm"
    user.react("预订成功，订单号7：G101 12月2日 08:00北京南→12:30上海虹桥 二等座 553元。")
    assert user.goal.subgoals[1].constraints["date"] == "2026-12-02"


def test_asking_about_a_booking_names_the_booked_domain():
    user = simulator(train_then_hotel(ask_booking=True), value=0.0)  # every optional turn is taken
    user.last_kind = "confirm"
    question = user.react(BOOKED_SLEEPER)
    assert user.last_kind == "ask_booking"
    assert question == "那张火车票是订好了吧"  # the first of the dev bank's train questions


def test_the_user_picks_the_listed_option_that_fits_its_goal():
    goal = Goal(2, "train", [SubGoal("train", {"dep_city": "北京", "arr_city": "上海", "max_price": 400})])
    user = simulator(goal)
    reply = "\n".join(
        [
            "可选的有：",
            "1. G101 12月2日 08:00北京南→12:30上海虹桥 二等座 553元",
            "2. K21 12月2日 20:00北京→次日08:00上海 硬卧下铺 300元",
            "请问您想订哪一个？",
        ]
    )
    said = user.react(reply)
    assert user.last_kind == "select" and [o["code"] for o in user.options] == ["G101", "K21"]
    assert said is not None and ("2" in said or "二" in said)  # the second, the one within 400 yuan


@pytest.mark.parametrize(("nights", "said"), [(1, "一间就够"), (2, "是两间吧？")])
def test_the_rooms_asked_for_follow_the_goal(nights, said):
    goal = Goal(3, "hotel", [SubGoal("hotel", {"city": "上海", "date": "2026-12-02", "rooms": nights})])
    user = simulator(goal)
    wrong = 2 if nights == 1 else 1
    assert user._readback_mismatch(f"为您预订：如家(浦东店)，住1晚，{wrong}间。", goal.subgoals[0]) == said
