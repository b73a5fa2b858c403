"""What the travel branch says when a search finds nothing, and the small replies around it, pinned word for word on
the small seeded travel database (``task_dialogs``: seed 7, 2026-12-01 to 12-05): the nearest day that has a
flight, the budget that would do, the other means of travel, conditions that fail only together (a hotel's guests
are no condition), declining the alternative, thanks in the middle of a request, the branch's configuration, the
goal sampler's departure windows and a place led on by 去 said by sound. Written from the mutants that survived the
session-5 mutation sample of ``ragdial.task`` (docs/testing.md)."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from ragdial.task.db import TravelDB
from ragdial.task.goals import sample_goal
from ragdial.task.manager import TaskBranch
from ragdial.task.slots import PERIODS, parse
from task_dialogs import TODAY, talk, travel_gazetteer


@pytest.fixture
def branch(travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True))


def _head(reply: str) -> str:
    return reply.split("\n")[0]


def test_a_day_without_flights_suggests_the_nearest_day_that_has_some(branch):
    asked, accepted = talk(branch, "帮我订12月6日北京到上海的机票", "好的")
    # 12-06 is past the timetable; 12-07 neither, so the day before is offered (tried in the order +1, -1, +2)
    assert _head(asked.reply) == "抱歉，12月6日没有可订的航班。12月5日有可订的，要按这个来吗？"
    assert asked.state["open"] == "offer_alternative" and asked.state["suggestion"] == {"date": "2026-12-05"}
    listed = asked.reply.split("可选的有：\n")[1].splitlines()
    assert len(listed) == 3 and all(" 12月5日 " in line for line in listed)
    # accepting it searches that day
    assert accepted.state["slots"]["date"] == "2026-12-05" and accepted.state["open"] == "choose_offer"
    assert _head(accepted.reply) == "为您找到12月5日北京→上海的航班，价格最低的3个："


def test_a_budget_too_low_suggests_the_cheapest_price_not_another_day(branch):
    # 12-03's cheapest flight is 620 yuan; 12-02 has one at 560, but a day is offered only when relaxing finds none
    (turn,) = talk(branch, "订12月3日北京到上海的机票，600元以内")
    assert _head(turn.reply) == (
        "抱歉，没有找到满足全部条件的航班，不能满足的是：预算（600元以内）。预算放宽到620元的话有可订的，要按这个来吗？"
    )
    assert turn.state["suggestion"] == {"max_price": 620}
    assert turn.state["slots"]["max_price"] == 600  # kept until the alternative is accepted


def test_the_same_fallback_in_english_is_two_sentences(branch):
    first, again = talk(
        branch,
        "I need a flight from Beijing to Guangzhou tomorrow under 100 yuan",
        "I need a flight from Beijing to Guangzhou tomorrow under 100 yuan",
    )
    assert _head(first.reply) == (
        "Sorry, no flights match all your conditions; the one that cannot be met: budget (up to 100 yuan). "
        "With a budget of 1010 yuan there are options; shall I use that?"
    )
    assert first.state["suggestion"] == {"max_price": 1010}
    assert _head(again.reply) == (
        "Sorry, no flights match all your conditions; the one that cannot be met: budget (up to 100 yuan). "
        "I have checked these conditions already. With a budget of 1010 yuan there are options; shall I use that?"
    )


def test_a_route_without_flights_offers_the_train_at_its_lowest_fare(branch):
    (turn,) = talk(branch, "订明天苏州到北京的机票")
    assert turn.reply == "抱歉，没有苏州到北京的航班。改坐火车的话有，最低95元，需要帮您查吗？"
    assert turn.state["suggestion"] == {"domain": "train"} and turn.state["offers"] == []


def test_conditions_that_fail_only_together_are_named_and_the_guests_are_not_a_condition(branch):
    (turn,) = talk(branch, "帮我订明天上海的酒店，住两个人，五星，200元以内")
    assert _head(turn.reply) == (
        "抱歉，没有同时满足星级（5星）、预算（200元以内）这几个条件的酒店（每个条件单独都能满足）。"
        "不限星级的话有可订的，要按这个来吗？"
    )
    assert turn.state["suggestion"] == {"stars": None}
    assert turn.state["slots"]["guests"] == 2


def test_declining_the_alternative_asks_what_to_change_and_keeps_the_request(branch):
    offered, declined = talk(branch, "订明天北京到上海的机票，100元以内", "不要，我改一下")
    assert offered.state["open"] == "offer_alternative"
    assert declined.reply == "好的。请问您想改哪个条件（日期、时间、预算等）？"
    assert declined.state["open"] == "change" and declined.state["suggestion"] is None
    assert declined.state["slots"] == offered.state["slots"]


def test_declining_the_alternative_in_english(branch):
    turns = talk(branch, "I need a flight from Beijing to Guangzhou tomorrow under 100 yuan", "no")
    assert turns[1].reply == "All right. What would you like to change (date, time, budget, ...)?"
    assert turns[1].state["open"] == "change" and turns[1].state["suggestion"] is None


def test_thanks_in_the_middle_of_a_request_is_answered_and_the_question_stays_open(branch):
    zh = talk(branch, "订明天苏州到北京的机票", "谢谢")
    assert zh[1].reply.split("\n") == ["不客气。", zh[0].reply]
    assert zh[1].state["open"] == "offer_alternative" and not zh[1].done
    en = talk(branch, "I need a train from Shanghai to Nanjing tomorrow", "thank you")
    assert en[0].state["open"] == "choose_offer"
    assert en[1].reply.split("\n")[0] == "You're welcome." and en[1].state["open"] == "choose_offer"


def test_the_branch_names_its_database_day_and_act_reader(travel_db_path):
    branch = TaskBranch(TravelDB(travel_db_path), acts="rules")
    assert branch.to_config() == {
        "name": "travel",
        "db": str(TravelDB(travel_db_path).url),
        "today": TODAY.isoformat(),
        "acts": "rules",
    }
    assert TaskBranch(TravelDB(travel_db_path), today=dt.date(2026, 12, 3), acts="rules").to_config()["today"] == (
        "2026-12-03"
    )


def test_sampled_trip_goals_carry_the_bounds_of_their_departure_window(travel_db_path):
    db = TravelDB(travel_db_path)
    rng = random.Random(3)
    windows = []
    for index in range(60):
        goal = sample_goal(db, index, TODAY, rng)
        for part in goal.subgoals:
            c = part.constraints
            if part.domain in ("flight", "train") and "period" in c:
                windows.append(c["period"])
                assert (c["time_from"], c["time_to"]) == PERIODS[c["period"]]
            elif part.domain in ("flight", "train"):
                assert "time_from" not in c and "time_to" not in c
    assert len(windows) >= 5  # the seed draws several


@pytest.fixture(scope="module")
def gaz(tmp_path_factory):
    return travel_gazetteer(tmp_path_factory.mktemp("db"), seed=1, days=3)


@pytest.mark.parametrize(
    ("heard", "role"),
    [
        ("明天曲上海", "arr"),  # 曲 (qu) heard for 去 before the city: where one goes
        ("上海趣的火车", "dep"),  # 趣 (qu) after the city: the city is left from
    ],
)
def test_qu_said_by_sound_gives_the_city_its_role(gaz, heard, role):
    assert parse(heard, gaz, TODAY).cities == [("上海", role)]
    assert parse(heard, gaz, TODAY, by_sound=False).cities == [("上海", None)]
