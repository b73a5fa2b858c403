"""The task branch end to end over a small generated database: booking, corrections, empty results,
unsatisfiable goals, out-of-scope guidance, JSON state, and the simulator on a few goals."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re

import pytest

from ragdial.errors import RagdialError
from ragdial.task.db import TravelDB, sqlite_target
from ragdial.task.dbgen import generate
from ragdial.task.goals import sample_goals, satisfies
from ragdial.task.manager import TaskBranch
from ragdial.task.simulator import InProcessChannel, read_item, run_dialog, summarise

TODAY = dt.date(2026, 12, 1)


@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("db") / "travel.sqlite"
    generate(path, seed=7, start=TODAY, days=5)
    return path


@pytest.fixture
def branch(db_path):
    return TaskBranch(TravelDB(db_path, scratch=True))


def talk(branch, *texts):
    state, turns = None, []
    for text in texts:
        turn = branch.respond(state, text)
        json.dumps(turn.state)  # the state must survive a JSON session store
        state = turn.state
        turns.append(turn)
    return turns


def test_generator_is_seeded(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    assert generate(a, seed=3, start=TODAY, days=2) == generate(b, seed=3, start=TODAY, days=2)
    rows_a = TravelDB(a).search("train", {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02"}, limit=50)
    rows_b = TravelDB(b).search("train", {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02"}, limit=50)
    assert rows_a == rows_b and rows_a
    assert all(r["price"] <= s["price"] for r, s in itertools.pairwise(rows_a))


def test_database_urls(db_path):
    assert sqlite_target(f"sqlite:///{db_path}") == str(db_path)
    assert TravelDB(f"sqlite:///{db_path}").dates()[0] == "2026-12-01"
    with pytest.raises(RagdialError, match="only sqlite"):
        TravelDB("postgresql://localhost/travel")
    with pytest.raises(RagdialError, match="make-db"):
        TravelDB("/nonexistent/travel.sqlite")


def test_empty_results(db_path):
    db = TravelDB(db_path)
    assert db.search("flight", {"dep_city": "苏州", "arr_city": "北京"}) == []  # 苏州 has no airport
    assert db.search("train", {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02", "max_price": 1}) == []
    assert db.search("hotel", {"city": "北京", "date": "2030-01-01"}) == []


def test_booking_a_train_with_berths(branch):
    turns = talk(branch, "明天晚上从哈尔滨到北京的软卧，上铺或者下铺", "第一个", "确认")
    options = [read_item(line) for line in turns[0].reply.splitlines() if read_item(line)]
    assert options and all(o["seat_class"] == "软卧" and o["berth"] in ("上铺", "下铺") for o in options)
    assert all(o["dep_time"] >= "18:00" for o in options)
    assert "确认预订吗" in turns[1].reply
    booked = turns[2].booked
    assert booked and booked["domain"] == "train"
    record = branch.db.booking(booked["number"])
    item = branch.db.get("train", record["item_id"])
    assert (item["dep_city"], item["arr_city"], item["date"], item["seat_class"]) == (
        "哈尔滨",
        "北京",
        "2026-12-02",
        "软卧",
    )


def test_asks_for_what_is_missing(branch):
    turns = talk(branch, "我要订机票", "从成都出发", "去西安", "后天")
    assert "从哪个城市出发" in turns[0].reply
    assert "要去哪个城市" in turns[1].reply
    assert "哪天" in turns[2].reply
    assert "请问您要订哪一个" in turns[3].reply and "成都" not in turns[3].reply.splitlines()[1]
    assert turns[3].state["slots"] == {"dep_city": "成都", "arr_city": "西安", "date": "2026-12-03"}


def test_contradictory_changes(branch):
    turns = talk(
        branch, "帮我订明天从北京到上海的机票", "不对，是从天津出发", "不是天津，是北京", "actually, Guangzhou"
    )
    assert turns[1].state["slots"]["dep_city"] == "天津" and turns[1].state["slots"]["arr_city"] == "上海"
    assert turns[2].state["slots"]["dep_city"] == "北京"
    assert "天津" not in turns[2].reply
    # a bare city right after correcting the departure corrects the departure again
    assert turns[3].state["slots"] == {"dep_city": "广州", "arr_city": "上海", "date": "2026-12-02"}
    date_change = talk(branch, "帮我订明天从北京到上海的机票", "改成后天")
    assert date_change[1].state["slots"]["date"] == "2026-12-03"


def test_unsatisfiable_goal_is_said_not_looped(branch):
    turns = talk(branch, "订明天苏州到北京的机票", "订明天苏州到北京的机票")
    for turn in turns:
        assert "没有找到苏州到北京的航班" in turn.reply
        assert "火车" in turn.reply  # the alternative is offered
        assert turn.acts == ["nooffer"]
    assert "已经查过了" in turns[1].reply
    switched = talk(branch, "订明天苏州到北京的机票", "好的")
    assert switched[1].state["domain"] == "train" and "请问您要订哪一个" in switched[1].reply


def test_too_expensive_offers_relaxed_options(branch):
    turn = talk(branch, "我要订明天北京到广州的机票，100元以内")[0]
    assert "没有找到满足条件的航班" in turn.reply and "放宽预算" in turn.reply
    prices = [int(p) for p in re.findall(r"(\d+)元\n?", turn.reply.split("可选的有")[-1])]
    assert prices and min(prices) > 100


def test_out_of_scope_is_guided_back(branch):
    turns = talk(branch, "你会唱歌吗", "帮我订明天北京到上海的火车票", "明天天气怎么样")
    assert not turns[0].in_scope and "我可以帮您" in turns[0].reply
    assert not turns[2].in_scope and "我可以帮您" in turns[2].reply and "请问您要订哪一个" in turns[2].reply
    assert turns[2].state["slots"]["date"] == "2026-12-02"


def test_hotel_after_trip_carries_city_and_date(branch):
    turns = talk(
        branch, "帮我订后天从上海到杭州的高铁，二等座", "第1个", "好的", "再订个四星以上的酒店", "第一个", "是的"
    )
    assert turns[2].booked["domain"] == "train"
    assert turns[3].state["slots"]["city"] == "杭州" and turns[3].state["slots"]["date"] == "2026-12-03"
    hotel = turns[5].booked
    assert hotel["domain"] == "hotel" and hotel["date"] == "2026-12-03"
    assert branch.db.get("hotel", hotel["item_id"])["stars"] >= 4


def test_english_dialog(branch):
    turns = talk(branch, "I need a train from Shanghai to Nanjing tomorrow", "the first one", "yes")
    assert "Which one" in turns[0].reply and "Shall I confirm" in turns[1].reply
    assert turns[2].booked and "Booked" in turns[2].reply


def test_simulator_on_a_few_goals(db_path):
    db = TravelDB(db_path, scratch=True)
    goals = sample_goals(db, 8, seed=5, today=TODAY)
    # the goals are seeded: the same kinds every run, and a sub-goal is meant to fail exactly when no row fits
    assert [g.kind for g in goals] == [
        "trip+hotel", "train", "flight", "flight", "flight", "flight", "hotel", "flight>train+hotel"
    ]  # fmt: skip
    assert [sub.expect_fail for g in goals for sub in g.subgoals].count(True) == 1
    for goal in goals:
        for sub in goal.subgoals:
            rows = db.search(sub.domain, {**sub.constraints, "berth": sub.constraints.get("berths")}, limit=50)
            assert bool(rows) != sub.expect_fail
            assert all(satisfies(r, sub.constraints) for r in rows)
    branch = TaskBranch(db, today=TODAY)
    results = [run_dialog(g, InProcessChannel(branch), db, TODAY, seed=g.id) for g in goals]
    metrics = summarise(results)
    assert metrics == {
        "dialogs": 8,
        "completion_ratio": 1.0,
        "mean_turns": 5.0,
        "guidance_rate": 1.0,
        "off_topic_dialogs": 3,
    }
    assert [len(r.log) for r in results] == [8, 5, 4, 3, 4, 3, 5, 8]
    for result in results:
        assert 1 <= len(result.log) <= 30
        if result.success:
            assert len(result.bookings) == sum(not s.expect_fail for s in result.goal.subgoals)


def test_intent_classifier_routes_only_before_a_task(db_path):
    calls = []

    def classifier(text):
        calls.append(text)
        return "flight" if "走" in text else "chat"

    branch = TaskBranch(TravelDB(db_path, scratch=True), intent=classifier)
    turns = talk(branch, "明天想从北京走，去上海", "从北京走")
    assert turns[0].state["domain"] == "flight" and "请问您要订哪一个" in turns[0].reply
    assert calls == ["明天想从北京走，去上海"]  # mid-task the classifier is not asked
    train = talk(branch, "帮我订明天北京到上海的火车票", "从北京走")
    assert train[1].state["domain"] == "train"


def test_misheard_confirmation_keeps_the_booking_open(branch):
    turns = talk(branch, "明天从北京到上海的火车票", "第一个", "呃呃呃", "确认")
    assert "确认预订吗" in turns[2].reply and turns[2].state["pending"] is not None
    assert turns[3].booked is not None


def test_same_city_twice_does_not_loop(branch):
    turns = talk(branch, "明天从西安到上海的机票", "去西安", "上海出发")
    assert "不能相同" in turns[1].reply and "从哪个城市出发" in turns[1].reply
    assert turns[2].state["slots"]["dep_city"] == "上海" and turns[2].state["slots"]["arr_city"] == "西安"


def test_http_channel_speaks_the_chat_completions_api(db_path):
    """The simulator over HTTP against a stand-in server with the service's request/response shape."""
    import uuid

    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from ragdial.task.http_channel import HttpChannel

    branch = TaskBranch(TravelDB(db_path, scratch=True))
    sessions: dict[str, dict] = {}
    app = FastAPI()

    @app.post("/v1/chat/completions")
    def chat(body: dict) -> dict:
        sid = body.get("session_id") or uuid.uuid4().hex
        turn = branch.respond(sessions.get(sid), body["messages"][-1]["content"])
        sessions[sid] = turn.state
        return {"choices": [{"message": {"role": "assistant", "content": turn.reply}}], "ragdial": {"session_id": sid}}

    db = TravelDB(db_path, scratch=True)
    goals = sample_goals(db, 3, seed=11, today=TODAY)
    channel = HttpChannel("http://testserver", client=TestClient(app))
    results = [run_dialog(g, channel, branch.db, TODAY, seed=g.id) for g in goals]
    assert len(sessions) == 3  # one server session per dialog
    assert summarise(results)["completion_ratio"] == 1.0


def test_overnight_arrival_is_marked_and_read_back():
    line = "1. K704 12月2日 22:40哈尔滨站→次日13:08北京西站 软卧下铺 304元"
    item = read_item(line)
    assert item["arr_place"] == "北京西站" and item["berth"] == "下铺" and item["seat_class"] == "软卧"
    assert item["price"] == 304 and item["dep_time"] == "22:40"


def test_high_speed_trains_and_cancelling(branch):
    turns = talk(branch, "明天从上海到北京的高铁", "第一个", "取消")
    options = [read_item(line) for line in turns[0].reply.splitlines() if read_item(line)]
    assert options and all(o["code"].startswith("G") for o in options)
    assert turns[2].acts == ["reqalts"] and turns[2].state["pending"] is None and turns[2].booked is None


def test_what_the_task_branch_claims(branch):
    for text in ("明天从北京到上海", "北京到上海", "帮我订个酒店", "明天去上海", "book a flight"):
        assert branch.understands(text), text
    for text in ("去北京漫游怎么收费", "我的流量还剩多少", "你好", "今天天气怎么样"):
        assert not branch.understands(text), text
