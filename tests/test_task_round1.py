"""Regression dialogs for the failure classes an independent tester found in round 1 of the online test
(notes/tester15-round1.md; transcripts benchmarks/data/online_task_round1_dev.jsonl, dev data). The utterances
are our own paraphrases, not the tester's; every dialog runs through ``TaskBranch`` with both act readers over a
small generated database."""

from __future__ import annotations

import pytest

from ragdial.task.db import TravelDB
from ragdial.task.manager import TaskBranch
from ragdial.task.simulator import read_item
from task_dialogs import talk


@pytest.fixture(params=["learned", "rules"])
def branch(request, travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True), acts=request.param)


def offers(reply: str) -> list[dict]:
    return [item for item in map(read_item, reply.splitlines()) if item]


def read_back(branch, *texts):
    """Talk until an offer is read back (choosing the first one listed), return the turns."""
    turns = talk(branch, *texts)
    if "请问确认预订吗" not in turns[-1].reply:
        turns += talk(branch, "第一个", state=turns[-1].state)
    assert "请问确认预订吗" in turns[-1].reply, turns[-1].reply
    return turns


# 1. a yes followed by a question or a "but" books nothing
@pytest.mark.parametrize(
    "text",
    [
        "嗯行吧，但是还有更便宜一点的吗？",
        "好的。那下午的有没有便宜些的",
        "可以，不过还有别的航班吗",
        "好，这班是哪家航空公司的？",
    ],
)
def test_a_yes_with_a_question_after_it_books_nothing(branch, text):
    turns = read_back(branch, "明天北京飞上海的机票")
    (turn,) = talk(branch, text, state=turns[-1].state)
    assert turn.booked is None and not turn.state["bookings"], turn.reply


def test_the_question_after_a_yes_is_answered_about_the_offer_read_back(branch):
    turns = read_back(branch, "明天北京飞上海的机票")
    pending = branch.db.get("flight", turns[-1].state["pending"]["id"])
    (turn,) = talk(branch, "行，不过这班是哪家航空公司的？", state=turns[-1].state)
    assert pending["airline"] in turn.reply and turn.booked is None
    assert "请问确认预订吗" in turn.reply  # the read-back follows


# 2. travel requests with 多少钱 or without a domain word are the task branch's
@pytest.mark.parametrize(
    ("text", "domain"),
    [
        ("明天成都飞北京的机票大概多少钱，要经济舱", "flight"),
        ("后天北京到上海的高铁票价多少", "train"),
        ("下周六想在杭州住三晚，两间房，每晚四百以内", "hotel"),
    ],
)
def test_travel_requests_are_claimed_and_searched(branch, text, domain):
    assert branch.claims(None, text)
    (turn,) = talk(branch, text)
    assert turn.state["domain"] == domain
    assert offers(turn.reply) or "没有" in turn.reply, turn.reply
    assert not branch.claims(None, "在北京用流量怎么收费")


# 3. a constraint can be taken back
def test_a_budget_and_a_time_window_can_be_taken_back(branch):
    turns = talk(branch, "明天北京到上海的火车，300以内，晚上出发", "预算不管了", "什么时间出发都可以")
    assert "max_price" not in turns[1].state["slots"] and turns[1].state["slots"].get("period") == "晚上"
    assert not {"period", "time_from", "time_to", "max_price"} & set(turns[2].state["slots"])
    route = {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02"}
    cheapest = [r["price"] for r in branch.db.search("train", route, limit=3)]
    assert [o["price"] for o in offers(turns[2].reply)] == cheapest  # the plain route again, cheapest first


def test_taking_the_budget_back_keeps_the_stars_said_with_it(branch):
    turns = talk(branch, "明天上海的酒店，要五星的，每晚200以内", "五星就行，多少钱都无所谓")
    slots = turns[-1].state["slots"]
    assert slots.get("stars") == 5 and "max_price" not in slots
    listed = offers(turns[-1].reply)
    assert listed and all(o["stars"] == 5 for o in listed)


def test_a_feature_choice_after_taking_a_window_back_is_made_among_the_new_offers(branch):
    turns = talk(branch, "明天北京到上海的火车，早上七点到八点", "时间无所谓了，要最便宜的那个")
    assert "请问确认预订吗" in turns[-1].reply and not offers(turns[-1].reply)[1:]
    cheapest = min(
        branch.db.search("train", {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02"}, limit=500),
        key=lambda r: r["price"],
    )
    assert (
        turns[-1].state["pending"]["id"]
        and branch.db.get("train", turns[-1].state["pending"]["id"])["price"] == (cheapest["price"])
    )


# 4. changing or cancelling a booking said in other words
def test_a_change_said_as_cannot_go_that_day(branch):
    turns = read_back(branch, "12月3号北京飞上海的机票")
    (booked,) = talk(branch, "确定", state=turns[-1].state)
    (turn,) = talk(branch, "糟了，3号我走不了，能换到4号吗", state=booked.state)
    assert "改签" in turn.reply and turn.state["slots"]["date"] == "2026-12-04"
    assert turn.state["rebook"]["order_no"] == booked.booked["order_no"]


def test_a_cancellation_inside_a_complaint(branch):
    turns = read_back(branch, "明天北京飞上海的机票")
    (booked,) = talk(branch, "确认", state=turns[-1].state)
    (turn,) = talk(branch, "哎，我刚才其实不想订的，把这单给我退了", state=booked.state)
    assert "确认取消吗" in turn.reply


# 5. constraints that were dropped or widened
def test_a_class_refused_is_not_the_class_searched(branch):
    (turn,) = talk(branch, "明天北京飞上海，不要经济舱，要公务舱")
    listed = offers(turn.reply)
    assert turn.state["slots"]["seat_class"] == "商务舱"
    assert listed and all(o["seat_class"] == "商务舱" for o in listed)


def test_the_city_one_travels_to_is_the_hotel_city_and_its_district_stays(branch):
    (turn,) = talk(branch, "后天去杭州，帮我找个西湖区的住处，住一晚")
    assert turn.state["domain"] == "hotel" and turn.state["slots"]["city"] == "杭州"
    listed = offers(turn.reply)
    assert listed and all(o["district"] == "西湖" for o in listed)


def test_a_named_sleeper_class_is_not_widened(branch):
    (turn,) = talk(branch, "明天晚上哈尔滨到北京的卧铺，要软卧")
    listed = offers(turn.reply)
    assert turn.state["slots"]["seat_class"] == "软卧" and listed and all(o["seat_class"] == "软卧" for o in listed)


# 6. a comment on the offer is no change; a time said with a choice is no new window
def test_a_yes_with_a_comment_on_the_time_books(branch):
    turns = read_back(branch, "明天北京飞上海的机票")
    (turn,) = talk(branch, "出发时间有点早，不过行，就订它", state=turns[-1].state)
    assert turn.booked is not None


def test_a_choice_by_time_of_day_and_clock_reads_back_only_that_offer(branch):
    (listing,) = talk(branch, "明天北京飞上海的机票")
    listed = offers(listing.reply)
    target = listed[-1]
    hour, minute = map(int, target["dep_time"].split(":"))
    said = f"{'上午' if hour < 12 else '下午' if hour < 18 else '晚上'}那个，{hour % 12 or 12}点{minute:02d}的"
    (turn,) = talk(branch, said, state=listing.state)
    assert "请问确认预订吗" in turn.reply and "没有找到" not in turn.reply
    assert branch.db.get("flight", turn.state["pending"]["id"])["dep_time"] == target["dep_time"]


# 7. the date today is answered
def test_the_date_today_is_answered_and_nothing_changes(branch):
    (listing,) = talk(branch, "明天北京飞上海的机票")
    (turn,) = talk(branch, "对了今天是几号啊？", state=listing.state)
    assert "12月1日" in turn.reply and turn.state["slots"] == listing.state["slots"]
