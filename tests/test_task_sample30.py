"""The survivors of the fresh seed-30 task mutation sample (session 9, docs/testing.md "Session 10"), each a behaviour
no test said: the act model's "bookings made" feature; an act only the model found, filled from the turn's context;
"Train" capitalised in an English question about a booking; an airline no listed flight has, said while choosing;
a class not listed said with the offer's ordinal; the change question asked again when a change is not understood;
"两间" alone starting a hotel request; a hotel cancelled with a departure city (a cancellation, then a new trip); a
day this month lacks read as next month's; the simulated user restating its change when the system cannot help.
Hand-written turns over the small seeded travel database."""

from __future__ import annotations

import datetime as dt
import random

import pytest

import ragdial.task.acts as A
from ragdial.task.act_model import ORDER, ActReader, context_tokens
from ragdial.task.db import TravelDB
from ragdial.task.goals import Goal, SubGoal
from ragdial.task.manager import TaskBranch
from ragdial.task.simulator import UserSimulator
from ragdial.task.slots import parse_date
from task_dialogs import FLIGHT_CHOICE, TODAY, talk, travel_gazetteer

TRAINS = "帮我订明天北京到上海的火车票"  # lists K524 硬座, T475 硬座, K524 硬卧上铺 (seed 7)
FLIGHTS = "帮我订明天北京到上海的机票"  # lists CZ6572, MU7468, CA3725, all 经济舱


@pytest.fixture
def branch(travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True))


@pytest.fixture(scope="module")
def gaz(tmp_path_factory):
    return travel_gazetteer(tmp_path_factory.mktemp("db"), seed=1, days=3)


def test_the_act_model_sees_whether_bookings_were_made():
    booked = A.Context("train", "anything_else", [], {}, [{"order_no": 1, "domain": "train"}])
    assert "bookings=True" in context_tokens("退掉吧", booked, None)
    assert "bookings=False" in context_tokens("退掉吧", A.Context("train", "anything_else"), None)


class SureOfSelect:
    """Stands in for the learned act model: sure the turn chooses an offer, whatever the rules read."""

    class config:  # (the model's config attribute)
        margin = 0.1

    def probabilities(self, items):
        return [{name: 0.99 if name == "select" else 0.0 for name in ORDER} for _ in items]


def test_an_act_only_the_model_found_is_filled_from_the_offers_listed(gaz):
    ctx = A.Context.from_dict(FLIGHT_CHOICE)  # 海航 HU1663 and 国航 CA7410 listed
    text = "还是国航靠谱"
    assert [a.act for a in A.understand(text, ctx, gaz, TODAY)] == ["inform"]  # the rules: a new constraint
    (act,) = ActReader(SureOfSelect(), gaz, TODAY)(text, ctx)  # type: ignore[arg-type]
    assert (act.act, act.slots) == ("select", {"airline": "国航"})


def test_train_capitalised_in_an_english_question_names_the_train_bookings(branch):
    *_, asked = talk(branch, FLIGHTS, "第一个", "确认", "Is my Train booked?")
    assert asked.acts == ["ask_about_booking"]
    assert "no train ticket" in asked.reply and "CZ6572" not in asked.reply, asked.reply


def test_an_airline_no_listed_flight_has_is_still_a_choice_by_airline(gaz):
    ctx = A.Context.from_dict(FLIGHT_CHOICE)  # (东航 is not listed)
    assert [(a.act, a.slots) for a in A.understand("要东航的", ctx, gaz, TODAY)] == [("select", {"airline": "东航"})]


def test_an_ordinal_with_a_class_not_listed_picks_that_train_in_that_class(branch):
    listed, chosen = talk(branch, TRAINS, "第一个，软卧")
    assert "软卧" not in listed.reply
    assert chosen.state["open"] == "confirm_booking"
    assert "即将为您预订：K524" in chosen.reply and "软卧上铺 283元" in chosen.reply, chosen.reply


def test_a_turn_not_understood_during_a_change_asks_again_what_to_change(branch):
    *_, change, lost = talk(branch, TRAINS, "第一个", "确认", "我要改签", "今天天气怎么样")
    assert change.state["open"] == "change"
    assert lost.state["open"] == "change" and lost.reply.endswith("请问您想改哪个条件？"), lost.reply


@pytest.mark.parametrize("text", ["两间", "明天两间"])
def test_rooms_alone_start_a_hotel_request(branch, text):
    (turn,) = talk(branch, text)
    assert turn.state["domain"] == "hotel" and turn.state["slots"]["rooms"] == 2
    assert "住在哪个城市" in turn.reply, turn.reply


@pytest.mark.parametrize(
    ("today", "said", "date"),
    [
        (dt.date(2026, 11, 24), "31号", "2026-12-31"),  # November has no 31st: December's
        (dt.date(2026, 11, 24), "30号", "2026-11-30"),
        (dt.date(2026, 12, 1), "3号", "2026-12-03"),
    ],
)
def test_a_day_this_month_lacks_is_next_months(today, said, date):
    assert parse_date(f"{said}出发", today) == date


class First(random.Random):
    def random(self) -> float:
        return 0.99

    def choice(self, seq):
        return seq[0]


def test_the_simulated_user_restates_its_change_when_the_system_cannot_help():
    leg = SubGoal("flight", {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02"}, date_expr="明天")
    user = UserSimulator(Goal(1, "flight", [leg], change={"kind": "upgrade"}), TODAY, First(0))
    user.index, user.bookings = 1, [(0, 1)]  # the flight is booked
    asked = user.react("还需要别的帮助吗？")
    assert (asked, user.last_kind) == ("帮我升成商务舱吧，还是这班", "change")
    # not understood, with a question the change could answer: the change is said again, the question left
    again = user.react("抱歉，这个我帮不上忙。请问您哪天出发？")
    assert (again, user.last_kind, user.restated) == ("帮我升成商务舱吧，还是这班", "change", 1)


def test_a_hotel_cancelled_with_a_departure_city_is_a_cancellation_then_a_new_trip(branch):
    hotel = "帮我订明天上海的酒店"  # lists 如家快捷酒店(上海徐汇店) first (seed 7)
    *_, booked, turn = talk(branch, hotel, "第一个", "确认", "把酒店退了，我明天从南京出发")
    assert booked.booked and "订单号1" in booked.reply
    # another city said: not this stay changed (把汉庭退了，换成亚朵 would be), but the booking cancelled first
    assert turn.acts == ["cancel_booking", "inform"] and turn.state["open"] == "confirm_cancel", turn.reply
    assert "您要取消的是：订单号1" in turn.reply and "确认取消吗" in turn.reply, turn.reply
