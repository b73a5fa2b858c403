"""Small task-branch behaviours no dialog test pins, each on a hand-written input: a greeting on its own, a goal with
berths, rooms and a minimum star rating in words, the simulator's HTTP channel's authorisation header, and which
date changes the phrase bank keeps. Written from the survivors of the session-6 task mutation sample
(docs/testing.md)."""

from __future__ import annotations

import json

import pytest

from ragdial.task.acts import Context, understand
from ragdial.task.db import TravelDB
from ragdial.task.goals import Goal, SubGoal
from ragdial.task.http_channel import HttpChannel
from ragdial.task.manager import TaskBranch
from ragdial.task.phrases import Phrases
from task_dialogs import FLIGHT_CHOICE, TODAY, talk


@pytest.fixture
def branch(travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True))


def test_a_greeting_on_its_own_is_greeted_back_in_its_language(branch):
    (zh,) = talk(branch, "你好")
    assert zh.reply == "您好！我可以帮您查询和预订机票、火车票和酒店，请问有什么需要？"
    assert zh.state["open"] is None and zh.acts == ["greeting"]
    (en,) = talk(branch, "hello")
    assert en.reply == "Hello! I can help you find and book flights, train tickets and hotels. What do you need?"


def test_a_goal_with_berths_rooms_and_a_minimum_rating_in_words():
    goal = Goal(
        2,
        "two-part",
        [
            SubGoal(
                "train",
                {"dep_city": "北京", "arr_city": "上海", "seat_class": "硬卧", "berths": ["上铺", "下铺"]},
                "明天",
            ),
            SubGoal("hotel", {"city": "上海", "district": "徐汇", "nights": 2, "rooms": 2, "min_stars": 4}, "后天"),
        ],
    )
    assert goal.describe() == (
        "明天从北京到上海的火车票，硬卧，上铺或下铺；然后后天在上海徐汇住酒店2晚，2间，4星及以上"
    )


def test_the_http_channel_sends_a_bearer_token_only_when_it_has_one():
    assert "authorization" not in HttpChannel("http://127.0.0.1:9").client.headers
    assert HttpChannel("http://127.0.0.1:9", api_key="k1").client.headers["authorization"] == "Bearer k1"


def test_the_phrase_bank_keeps_plain_date_changes_only(tmp_path):
    def modify(text):
        return {"text": text, "acts": [{"act": "modify", "slots": {"date": "2026-12-03"}}], "split": "dev"}

    rows = [
        modify("换成后天吧"),
        modify("不对，是后天"),  # a correction, not a change
        modify("后天入住"),  # a hotel's check-in day
        modify("那就晚一天"),  # no date said: nothing to cut out
    ]
    path = tmp_path / "bank.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    assert Phrases.load(path).by_kind["modify_date"] == ["换成{date}吧"]


def test_changing_a_booking_in_english_reads_back_what_is_cancelled_for_what(branch):
    turns = talk(
        branch,
        "I need a train from Shanghai to Nanjing tomorrow",
        "the first one",
        "yes",
        "please change my train to the day after tomorrow",
        "the second one",
        "yes",
    )
    assert turns[2].booked["order_no"] == 1 and turns[3].acts == ["change_booking"]
    assert turns[4].reply == (
        "I'll change booking 1 (now K743 2026-12-02 20:35 Shanghai Station → 00:27(+1d) Nanjing South Station, hard "
        "seat, 25 yuan, 1 ticket(s), 25 yuan in total) to: T504 2026-12-03 11:45 Shanghai Hongqiao Station → "
        "15:04 Nanjing South Station, hard seat, 28 yuan, 1 ticket(s), 28 yuan in total. Shall I make this change?"
    )
    assert turns[5].reply.splitlines()[0] == "Changed: booking 1 is cancelled and its seats or rooms released."
    assert [(b["order_no"], b.get("status")) for b in turns[5].state["bookings"]] == [(1, "cancelled"), (2, None)]


def test_an_out_of_scope_reading_adds_its_cue_to_the_context_features():
    from ragdial.task.act_model import context_tokens
    from ragdial.task.acts import Context

    assert context_tokens("今天天气怎么样", Context(), ["out_of_scope"]) == [
        "oq=None",
        "group=open",
        "domain=None",
        "offers=False",
        "bookings=False",
        "state=False",
        "len=8",
        "group=open&len=8",
        "question=False",
        "group=open&question=False",
        "english=False",
        "rules=out_of_scope",
        "rule_oos_cue=True",  # 天气 is an out-of-scope cue word
        "group=open&rule_oos_cue=True",
        "rule=out_of_scope",
        "group=open&rule=out_of_scope",
    ]


@pytest.mark.parametrize(("text", "clock"), [("要10:45那班", "10:45"), ("10：45的", "10:45"), ("12:00那个吧", "12:00")])
def test_choosing_an_offer_by_its_departure_time_in_digits(travel_db_path, text, clock):
    gaz = TravelDB(travel_db_path).gazetteer()
    acts = understand(text, Context(**FLIGHT_CHOICE), gaz, TODAY)
    assert [(a.act, a.slots) for a in acts] == [("select", {"dep_time": clock})]
