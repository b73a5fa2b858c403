"""Two manager paths checked through whole dialogs on the small seeded travel database (``task_dialogs``): a choice
said together with a slot the search already has is read back once, not "changed"; a second request made during a
read-back waits with its own slots (city, nights) and is searched once the booking is confirmed. Written from
surviving mutants of ``ragdial.task.manager._update`` (docs/testing.md, sessions 6-7); states, not wording."""

from __future__ import annotations

import re

import pytest

from ragdial.task.db import TravelDB
from ragdial.task.manager import TaskBranch
from task_dialogs import talk


@pytest.fixture
def branch(travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True))


def test_a_choice_with_the_date_said_again_is_read_back_once(branch):
    listed, chosen = talk(branch, "帮我订明天北京到上海的机票", "第二个，明天的")
    (code,) = re.findall(r"^2\. (\S+) ", listed.reply, re.MULTILINE)  # the second flight listed
    assert chosen.state["open"] == "confirm_booking"
    assert chosen.state["pending"]["id"] == listed.state["offers"][1]
    assert chosen.reply.count(code) == 1  # read back once: no "已按您说的修改" and a second read-back


@pytest.mark.parametrize(
    "turns",
    [("第一个", "另外帮我订上海的酒店，住两晚"), ("第一个，另外帮我订上海的酒店，住两晚",)],
    ids=["after-the-choice", "with-the-choice"],
)
def test_a_request_made_during_a_read_back_waits_with_its_slots(branch, turns):
    *_, waiting, booked = talk(branch, "帮我订明天北京到上海的机票", *turns, "确定")
    assert waiting.state["open"] == "confirm_booking" and waiting.state["pending"]["domain"] == "flight"
    assert waiting.state["queue"] == [{"domain": "hotel", "city": "上海", "nights": 2}]
    assert booked.state["domain"] == "hotel" and booked.state["open"] == "choose_offer"
    assert (booked.state["slots"]["city"], booked.state["slots"]["nights"]) == ("上海", 2)
    listed = re.findall(r"^\d\. (.+)$", booked.reply, re.MULTILINE)
    assert len(listed) == len(booked.state["offers"]) > 0 and all("上海" in line for line in listed)
