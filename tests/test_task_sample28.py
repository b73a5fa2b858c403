"""Task details from the survivors of the fresh seed-28 task sample (docs/testing.md, session 8), on hand-written
inputs: the trip a request replacing a booking starts from, and the act model's masking of train codes and numbers
(the delexicalised n-grams, which no other fast test reaches), the simulated user's nights (one night less when it
shortens a stay, never two when it asks for a hotel without a number of nights), an overnight train's arrival."""

from __future__ import annotations

import datetime as dt
import random

from ragdial.task.act_model import ActModel
from ragdial.task.db import TravelDB
from ragdial.task.goals import Goal, SubGoal
from ragdial.task.manager import TaskBranch
from ragdial.task.orders import trip_of
from ragdial.task.simulator import UserSimulator
from task_dialogs import talk


def test_a_train_replacing_a_hotel_stay_goes_to_the_hotels_city_on_its_date():
    stay = {"domain": "hotel", "city": "上海", "date": "2026-12-01", "nights": 2, "quantity": 1}
    assert trip_of(stay, "train") == {"arr_city": "上海", "date": "2026-12-01"}
    assert trip_of({**stay, "city": None}, "train") == {}  # no city: nothing to carry over
    assert trip_of(stay, "hotel") == {"city": "上海", "date": "2026-12-01", "nights": 2, "rooms": 1}
    ride = {"domain": "train", "dep_city": "北京", "arr_city": "上海", "date": "2026-12-01"}
    assert trip_of(ride, "hotel") == {"city": "上海", "date": "2026-12-01"}  # a stay where the ride arrives


def test_the_act_model_masks_train_codes_and_numbers():
    model = ActModel()  # no gazetteer: only codes and numbers are masked
    assert model._mask("要G123次的3张，还有D45") == "要Ⓒ次的⑨张，还有Ⓒ"
    assert model._mask("book 2 seats on the 10:45") == "book ⑨ seats on the ⑨:⑨"


def _user(*subgoals: SubGoal, change: dict | None = None, seed: int = 0) -> UserSimulator:
    return UserSimulator(Goal(1, "hotel", list(subgoals), change=change), dt.date(2026, 12, 1), random.Random(seed))


def test_the_simulated_user_asking_for_one_night_less_wants_one_night_less():
    user = _user(SubGoal("hotel", {"city": "上海", "date": "2026-12-02", "nights": 3}), change={"kind": "fewer_nights"})
    user._change_request()
    assert user.change_sub is not None and user.change_sub.constraints["nights"] == 2


def test_a_simulated_hotel_request_without_nights_never_asks_for_more_than_one():
    said = [
        _user(SubGoal("hotel", {"city": "上海", "date": "2026-12-02"}), seed=seed)._request(
            SubGoal("hotel", {"city": "上海", "date": "2026-12-02"}), full=True
        )
        for seed in range(20)
    ]
    assert not any(two in text for text in said for two in ("两晚", "2晚", "2个晚上"))
    assert any("晚" in text for text in said)  # a third or so say the one night anyway


def test_the_arrival_time_of_an_overnight_train_says_the_next_day(travel_db_path):
    branch = TaskBranch(TravelDB(travel_db_path, scratch=True))
    listed, chosen, asked = talk(branch, "帮我订明天北京到上海的火车票", "第一个", "几点到？")
    code = chosen.reply.split("即将为您预订：")[1].split()[0]
    assert "→次日" in listed.reply.splitlines()[1]  # the first train arrives the next morning
    answer = asked.reply.splitlines()[0]
    assert answer.startswith(f"{code} 次日") and answer.endswith("到达上海虹桥站。"), asked.reply


def test_a_train_moved_to_an_earlier_one_at_a_clock_time_is_that_departure(travel_db_path):
    branch = TaskBranch(TravelDB(travel_db_path, scratch=True))
    *_, booked, moved = talk(branch, "帮我订明天北京到上海的火车票", "第一个", "确认", "火车改早一班，18点05那趟")
    assert booked.booked and "K524" in booked.reply and moved.acts == ["change_booking"]
    assert "改为：T475 12月2日 18:05北京南站" in moved.reply and moved.state["open"] == "confirm_booking", moved.reply


def test_the_simulated_user_notes_a_booking_missing_from_the_answer_about_its_bookings():
    user = _user(SubGoal("hotel", {"city": "上海", "date": "2026-12-02"}))
    user.bookings = [(0, 3), (1, 4)]
    user.last_kind = "ask_booking"
    user.react("您的订单：订单号3：锦江之星 12月2日入住1晚。")  # order 4 left out
    assert user.errors == ["a confirmed booking missing from the answer about bookings"]
    again = _user(SubGoal("hotel", {"city": "上海", "date": "2026-12-02"}))
    again.bookings, again.last_kind = [(0, 3)], "ask_booking"
    again.react("您的订单：订单号3：锦江之星 12月2日入住1晚。")
    assert again.errors == []
