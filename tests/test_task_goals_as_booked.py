"""Simulated goals sampled against the database as the dialogs before them left it (no goal asks for a room or seat
an earlier dialog booked), and the simulated user giving up a constraint for the alternative offered after one
refusal, as people do."""

from __future__ import annotations

import datetime as dt
import random

from ragdial.task.db import TravelDB
from ragdial.task.goals import Goal, SubGoal, goals_as_booked, sample_goals
from ragdial.task.simulator import UserSimulator, _relaxed_keys

TODAY = dt.date(2026, 12, 1)


def _rows(db, sub):
    return db.search(sub.domain, {**sub.constraints, "berth": sub.constraints.get("berths")}, limit=500)


def test_on_an_untouched_database_the_goals_are_those_sampled_up_front(travel_db_path):
    db = TravelDB(travel_db_path, scratch=True)
    up_front = [g.to_dict() for g in sample_goals(db, 12, seed=4, today=TODAY, changes=0.5)]
    as_taken = [g.to_dict() for g in goals_as_booked(db, 12, seed=4, today=TODAY, changes=0.5)]
    assert as_taken == up_front


def test_each_goal_is_achievable_against_the_database_as_earlier_dialogs_left_it(travel_db_path):
    db = TravelDB(travel_db_path, scratch=True)
    for index, goal in enumerate(goals_as_booked(db, 25, seed=9, today=TODAY)):
        for sub in goal.subgoals:
            assert bool(_rows(db, sub)) != sub.expect_fail, (goal.id, sub)
        if index == 0:  # earlier dialogs took every other seat and room: later goals must not ask for them
            for table in ("flights", "trains"):
                db.conn.execute(f"UPDATE {table} SET seats = 0 WHERE id % 2 = 0")
            db.conn.execute("UPDATE hotel_rooms SET rooms = 0 WHERE hotel_id % 2 = 0")


def test_the_constraints_an_alternative_drops_are_read_from_its_offer():
    reply = (
        "抱歉，没有同时满足出发时段（上午）、预算（800元以内）这几个条件的航班。"
        "不限出发时段、预算的话有可订的，要按这个来吗？"
    )
    assert _relaxed_keys(reply) == ["period", "time_from", "time_to", "max_price"]
    assert _relaxed_keys("不限区域的话有可订的，要按这个来吗？") == ["district"]
    assert _relaxed_keys("抱歉，没有找到。") == []


def test_the_user_refuses_an_alternative_once_then_takes_it():
    sub = SubGoal("hotel", {"city": "北京", "date": "2026-12-03", "district": "海淀", "stars": 5}, date_expr="后天")
    sim = UserSimulator(Goal(1, "hotel", [sub]), TODAY, random.Random(3))
    sim.start()
    offer = (
        "抱歉，没有同时满足区域（海淀）、星级（5星）这几个条件的酒店（每个条件单独都能满足）。不限区域的话有可订的，"
        "要按这个来吗？\n可选的有：\n1. 希尔顿酒店(北京朝阳店) 5星 朝阳 每晚800元"
    )
    first = sim.react(offer)
    assert first is not None and sim.relaxed == [] and "district" in sub.constraints, first
    second = sim.react(offer)
    assert second is not None and ("按这个" in second or "就这样" in second), second
    assert sim.relaxed == ["district"] and "district" not in sub.constraints and sub.constraints["stars"] == 5
