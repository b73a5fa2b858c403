"""Task details from the survivors of the fresh seed-27 task sample (docs/testing.md, session 7), on hand-written
inputs: the simulated user books the hotel for the night it arrives (the same day, the next day, the third day of a
long train ride), the act model's default configuration, and a hotel that fails only on conditions together names
those conditions and not the one night asked for."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from ragdial.task.act_model import ActModel, ActModelConfig
from ragdial.task.db import TravelDB
from ragdial.task.goals import Goal, SubGoal
from ragdial.task.manager import TaskBranch
from ragdial.task.simulator import UserSimulator
from task_dialogs import talk


@pytest.mark.parametrize(
    ("arrival", "check_in"),
    [("23:00拉萨站", "2026-12-02"), ("次日 08:00拉萨站", "2026-12-03"), ("第3天 08:00拉萨站", "2026-12-04")],
)
def test_the_simulated_user_checks_in_on_the_day_the_train_arrives(arrival, check_in):
    train = SubGoal("train", {"dep_city": "北京", "arr_city": "拉萨", "date": "2026-12-02"})
    hotel = SubGoal("hotel", {"city": "拉萨", "nights": 1})  # no day of its own: the night one arrives
    user = UserSimulator(Goal(1, "train_hotel", [train, hotel]), dt.date(2026, 12, 1), random.Random(0))
    user.react(
        f"预订成功，订单号3：Z21 12月2日 20:00北京西站→{arrival} 硬卧下铺 800元，1张，共800元。\n还需要别的帮助吗？"
    )
    assert user.index == 1 and hotel.constraints["date"] == check_in


def test_an_act_model_without_a_configuration_uses_the_default_one():
    assert ActModel().config == ActModelConfig()


def test_conditions_that_fail_only_together_are_named_without_the_one_night(travel_db_path):
    branch = TaskBranch(TravelDB(travel_db_path, scratch=True))
    (turn,) = talk(branch, "帮我订明天上海的酒店，住一晚，五星级，200元以内")
    head = turn.reply.split("\n")[0]
    assert "星级（5星）、预算（200元以内）这几个条件" in head and "晚" not in head.split("这几个条件")[0]


def test_a_flight_the_user_expects_to_fail_is_followed_by_the_same_trip_by_train(travel_db_path):
    from ragdial.task.goals import sample_goals

    pairs = [
        (goal.subgoals[i], goal.subgoals[i + 1])
        for goal in sample_goals(TravelDB(travel_db_path), 60, 5, dt.date(2026, 12, 1))
        for i in range(len(goal.subgoals) - 1)
        if goal.subgoals[i].expect_fail
    ]
    assert pairs
    for flight, train in pairs:  # the train is the same trip: no day said again, the flight's constraints
        assert (flight.domain, train.domain, train.date_expr, train.expect_fail) == ("flight", "train", "", False)
        assert train.constraints == flight.constraints and flight.date_expr


def test_a_listed_train_chosen_by_its_berth(travel_db_path):
    branch = TaskBranch(TravelDB(travel_db_path, scratch=True))
    listed, chosen = talk(branch, "帮我订明天北京到上海的火车票，要硬卧", "中铺那个")
    (line,) = [line for line in listed.reply.splitlines() if "硬卧中铺" in line]  # one listed train is a middle berth
    assert chosen.state["open"] == "confirm_booking"
    assert chosen.state["pending"]["id"] == listed.state["offers"][int(line.split(".")[0]) - 1]


def test_a_hotel_search_without_a_number_of_nights_is_for_one_night(travel_db_path):
    branch = TaskBranch(TravelDB(travel_db_path, scratch=True))
    (turn,) = talk(branch, "帮我订明天上海的酒店")
    assert turn.state["open"] == "choose_offer" and "入住1晚" in turn.reply.split("\n")[0]
