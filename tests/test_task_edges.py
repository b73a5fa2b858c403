"""Task-branch details the whole-dialog tests do not pin, each on a hand-written turn over the small seeded travel
database: quarter and half hours when choosing a departure, the airline filter, a goal in words, the open question
of a hotel without a date, where a hotel booking arrives, the read-back of a list of berths, confirming before
choosing, and asking where an offer departs from."""

from __future__ import annotations

import re

import pytest

from ragdial.task.acts import Context, understand
from ragdial.task.db import TravelDB
from ragdial.task.goals import Goal, SubGoal
from ragdial.task.manager import TaskBranch
from task_dialogs import FLIGHT_CHOICE, TODAY, talk


@pytest.fixture
def branch(travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True))


@pytest.mark.parametrize(
    ("text", "clock"),
    [("十点三刻那班", "10:45"), ("要十点一刻的", "10:15"), ("十点半的", "10:30"), ("就十点那班", "10:00")],
)
def test_choosing_by_a_quarter_or_half_hour(travel_db_path, text, clock):
    gaz = TravelDB(travel_db_path).gazetteer()
    assert [(a.act, a.slots) for a in understand(text, Context(**FLIGHT_CHOICE), gaz, TODAY)] == [
        ("select", {"dep_time": clock})
    ]


def test_flight_search_keeps_the_airline_asked_for(travel_db_path):
    db = TravelDB(travel_db_path)
    route = {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02"}
    every = db.search("flight", route, limit=50)
    airlines = {row["airline"] for row in every}
    assert len(airlines) >= 2  # the fixture has a choice
    one = sorted(airlines)[0]
    kept = db.search("flight", {**route, "airline": one}, limit=50)
    assert kept == [row for row in every if row["airline"] == one]


def test_a_goal_in_words():
    goal = Goal(
        1,
        "two-part",
        [
            SubGoal("hotel", {"city": "成都"}, "明天"),
            SubGoal(
                "flight",
                {"dep_city": "北京", "arr_city": "上海", "period": "上午", "seat_class": "经济舱", "max_price": 900},
                "后天",
                expect_fail=True,
            ),
        ],
    )
    assert goal.describe() == (
        "明天在成都住酒店1晚；然后后天上午从北京到上海的机票，经济舱，900元以内（如果订不到就改别的方式）"
    )


def test_a_hotel_without_a_date_asks_for_the_date_and_the_booking_arrives_in_the_city(branch):
    turns = talk(branch, "我想订成都的酒店", "明天", "第一个", "确认")
    assert turns[0].state["open"] == "date" and turns[0].reply == "请问您哪天入住？"
    (booking,) = turns[-1].state["bookings"]
    assert (booking["domain"], booking["city"], booking["arr_city"], booking["date"]) == (
        "hotel",
        "成都",
        "成都",
        "2026-12-02",
    )


def test_a_list_of_berths_is_read_back_in_chinese(branch):
    (turn,) = talk(branch, "明天从北京到上海的火车，上铺或者下铺的硬卧")
    assert turn.reply.startswith("为您找到12月2日北京→上海硬卧、上铺或下铺的车次")


def test_confirming_before_choosing_asks_which_one(branch):
    turns = talk(branch, "明天从北京到上海的机票", "确认")
    assert turns[1].reply.startswith("请先告诉我要订哪一个。")
    assert turns[1].state["open"] == "choose_offer" and turns[1].state["bookings"] == []


def test_asking_where_an_offer_departs_from(branch):
    turns = talk(branch, "明天从北京到上海的机票", "第一个从哪个机场出发？")
    first = turns[0].reply.splitlines()[1]  # "1. CODE date time AIRPORT→..."
    code, airport = first.split()[1], first.split()[3][5:].split("→")[0]
    assert turns[1].reply.splitlines()[0] == f"{code}出发：{airport}。"


def test_asking_how_many_tickets_are_left_names_a_number_per_offer(branch):
    turns = talk(branch, "明天从北京到上海的火车", "还剩几张票")
    assert re.fullmatch(r"(\w+还有\d+个余票；){2}\w+还有\d+个余票。", turns[1].reply.splitlines()[0])


def test_asking_how_many_rooms_are_left_names_a_number_per_hotel(branch):
    turns = talk(branch, "我想订成都的酒店", "明天", "还剩几间房")
    assert "None" not in turns[2].reply and re.search(r"还有\d+个空房", turns[2].reply)
