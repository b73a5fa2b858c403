"""The task branch end to end over a small generated database: booking, corrections, empty results,
unsatisfiable goals, out-of-scope guidance, JSON state, and the simulator on a few goals."""

from __future__ import annotations

import itertools
import re

import pytest

from ragdial.errors import RagdialError
from ragdial.task.db import TravelDB, sqlite_target
from ragdial.task.dbgen import generate
from ragdial.task.goals import sample_goals, satisfies
from ragdial.task.manager import TaskBranch
from ragdial.task.simulator import InProcessChannel, read_item, run_dialog, summarise
from task_dialogs import TODAY, talk


@pytest.fixture
def branch(travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True))


def test_generator_is_seeded(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    assert generate(a, seed=3, start=TODAY, days=2) == generate(b, seed=3, start=TODAY, days=2)
    rows_a = TravelDB(a).search("train", {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02"}, limit=50)
    rows_b = TravelDB(b).search("train", {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02"}, limit=50)
    assert rows_a == rows_b and rows_a
    assert all(r["price"] <= s["price"] for r, s in itertools.pairwise(rows_a))


def test_database_urls(travel_db_path):
    assert sqlite_target(f"sqlite:///{travel_db_path}") == str(travel_db_path)
    assert TravelDB(f"sqlite:///{travel_db_path}").dates()[0] == "2026-12-01"
    with pytest.raises(RagdialError, match="only sqlite"):
        TravelDB("postgresql://localhost/travel")
    with pytest.raises(RagdialError, match="make-db"):
        TravelDB("/nonexistent/travel.sqlite")


def test_empty_results(travel_db_path):
    db = TravelDB(travel_db_path)
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
        assert "没有苏州到北京的航班" in turn.reply
        assert "火车" in turn.reply  # the alternative is offered
        assert turn.state["open"] == "offer_alternative" and turn.state["suggestion"] == {"domain": "train"}
    assert "已经查过了" in turns[1].reply
    switched = talk(branch, "订明天苏州到北京的机票", "好的")
    assert switched[1].state["domain"] == "train" and "请问您要订哪一个" in switched[1].reply


def test_too_expensive_offers_relaxed_options(branch):
    turn = talk(branch, "我要订明天北京到广州的机票，100元以内")[0]
    assert "没有找到满足全部条件的航班，不能满足的是：预算" in turn.reply and "预算放宽到" in turn.reply
    assert turn.state["slots"]["max_price"] == 100  # kept until the user accepts the alternative
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


def test_simulator_on_a_few_goals(travel_db_path):
    db = TravelDB(travel_db_path, scratch=True)
    goals = sample_goals(db, 8, seed=6, today=TODAY)
    # the goals are seeded: the same kinds every run, and a sub-goal is meant to fail exactly when no row fits
    assert [g.kind for g in goals] == [
        "trip+hotel", "flight>train+hotel", "hotel", "hotel", "train", "flight>train+hotel", "train", "trip+hotel"
    ]  # fmt: skip
    assert [sub.expect_fail for g in goals for sub in g.subgoals].count(True) == 2
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
        "mean_turns": 5.375,
        "guidance_rate": 1.0,
        "off_topic_dialogs": 4,
        "integrity_errors": 0,
        "dialogs_with_integrity_errors": 0,
        "relaxed_dialogs": 0,
    }
    assert [len(r.log) for r in results] == [7, 8, 4, 3, 4, 8, 4, 5]
    for result in results:
        assert 1 <= len(result.log) <= 30
        if result.success:
            assert len(result.bookings) == sum(not s.expect_fail for s in result.goal.subgoals)


def test_intent_classifier_routes_only_before_a_task(travel_db_path):
    calls = []

    def classifier(text):
        calls.append(text)
        return "flight" if "走" in text else "chat"

    branch = TaskBranch(TravelDB(travel_db_path, scratch=True), intent=classifier)
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


def test_http_channel_speaks_the_chat_completions_api(travel_db_path):
    """The simulator over HTTP against a stand-in server with the service's request/response shape."""
    import uuid

    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from ragdial.task.http_channel import HttpChannel

    branch = TaskBranch(TravelDB(travel_db_path, scratch=True))
    sessions: dict[str, dict] = {}
    app = FastAPI()

    @app.post("/v1/chat/completions")
    def chat(body: dict) -> dict:
        sid = body.get("session_id") or uuid.uuid4().hex
        turn = branch.respond(sessions.get(sid), body["messages"][-1]["content"])
        sessions[sid] = turn.state
        return {"choices": [{"message": {"role": "assistant", "content": turn.reply}}], "ragdial": {"session_id": sid}}

    db = TravelDB(travel_db_path, scratch=True)
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
    assert turns[2].acts == ["deny"] and turns[2].state["pending"] is None and turns[2].booked is None
    assert "没有预订" in turns[2].reply and branch.db.conn.execute("SELECT COUNT(*) FROM bookings").fetchone()[0] == 0


def test_what_the_task_branch_claims(branch):
    for text in ("明天从北京到上海", "北京到上海", "帮我订个酒店", "明天去上海", "book a flight"):
        assert branch.understands(text), text
    for text in ("去北京漫游怎么收费", "我的流量还剩多少", "你好", "今天天气怎么样"):
        assert not branch.understands(text), text


def _bookings(branch):
    return branch.db.conn.execute("SELECT COUNT(*) FROM bookings").fetchone()[0]


def test_compound_confirmation_books_then_starts_the_next_request(branch):
    turns = talk(
        branch,
        "明天从北京到上海的火车票，二等座",
        "第一个",
        "确定，然后帮我订上海的酒店",
        "那张火车票订上了吧？订单号多少",
    )
    booked = turns[2].booked
    assert booked and booked["domain"] == "train" and "预订成功，订单号" in turns[2].reply
    assert turns[2].state["domain"] == "hotel" and turns[2].state["slots"]["city"] == "上海"
    assert f"订单号{booked['order_no']}" in turns[3].reply  # the booking question is answered, not a new search
    assert turns[3].state["domain"] == "hotel" and turns[3].state["offers"] == turns[2].state["offers"]


def test_a_question_is_no_confirmation_and_the_read_back_is_complete(branch):
    turns = talk(branch, "明天上海的酒店，住两晚", "第一个", "是两间吧？")
    assert "住2晚" in turns[1].reply and "1间" in turns[1].reply and "确认预订吗" in turns[1].reply
    assert turns[2].booked is None and "2间" in turns[2].reply and _bookings(branch) == 0
    state = turns[2].state
    if "确认预订吗" not in turns[2].reply:  # the first hotel has no two rooms both nights: choose again
        state = branch.respond(state, "第一个").state
    booked = branch.respond(state, "确定").booked
    assert booked and booked["quantity"] == 2 and booked["nights"] == 2 and _bookings(branch) == 1
    hotel_id = booked["item_id"]
    left = dict(branch.db.conn.execute("SELECT date, rooms FROM hotel_rooms WHERE hotel_id = ?", (hotel_id,)))
    fresh = TravelDB(branch.db.url)  # the file itself is untouched (scratch copy)
    before = dict(fresh.conn.execute("SELECT date, rooms FROM hotel_rooms WHERE hotel_id = ?", (hotel_id,)))
    assert [before[d] - left[d] for d in ("2026-12-02", "2026-12-03", "2026-12-04")] == [2, 2, 0]


def test_out_of_scope_never_changes_the_state(branch):
    first = talk(branch, "明天从北京到上海的火车票")[0]
    for text in ("上海明天下雨吗", "今天几号来着", "大盘今天跌了2个点", "广州下周三会不会下雨啊"):
        turn = branch.respond(first.state, text)
        # (a calendar question is answered instead of refused: 今天是12月1日，星期二。)
        guided = "今天是12月1日" in turn.reply if "几号" in text else "我可以帮您" in turn.reply
        assert not turn.in_scope and guided and "请问您要订哪一个" in turn.reply, text
        assert turn.state["slots"] == first.state["slots"] and turn.state["offers"] == first.state["offers"]


def test_choosing_by_code_name_price_and_this(branch):
    first = talk(branch, "明天从北京到上海的火车票")[0]
    options = [read_item(line) for line in first.reply.splitlines() if read_item(line)]
    for text in (options[1]["code"], options[1]["code"].lower(), f"就{options[1]['code']}吧"):
        turn = branch.respond(first.state, text)
        assert f"为您预订：{options[1]['code']}" in turn.reply and "请问确认预订吗" in turn.reply, text
    hotel = talk(branch, "明天上海的酒店")[0]
    rows = [read_item(line) for line in hotel.reply.splitlines() if read_item(line)]
    brand = rows[-1]["name"].split("(")[0].replace("酒店", "").replace("快捷", "")
    assert rows[-1]["name"] in branch.respond(hotel.state, f"就{brand}吧").reply
    one = talk(branch, "明天上海的酒店", f"就{brand}吧", "不要了")[-1]
    assert one.booked is None and _bookings(branch) == 0


def test_switching_flight_to_train_drops_the_segment_budget(branch):
    turns = talk(branch, "明天从北京到上海的机票，经济舱，300元以内", "算了还是坐高铁吧")
    assert turns[0].state["slots"]["max_price"] == 300 and "预算" in turns[0].reply
    slots = turns[1].state["slots"]
    assert turns[1].state["domain"] == "train" and "max_price" not in slots and "seat_class" not in slots
    assert slots["train_kinds"] == ["G"] and slots["date"] == "2026-12-02"


def test_hotel_after_an_overnight_train_starts_on_the_arrival_day(branch):
    turns = talk(branch, "明天晚上从哈尔滨到北京的软卧", "第一个", "确定", "再订一家酒店")
    assert "次日" in turns[1].reply
    assert turns[3].state["slots"] == {"city": "北京", "date": "2026-12-03"}
    assert "12月3日到达北京" in turns[3].reply


def test_a_constraint_that_cannot_be_met_is_named_and_kept(branch):
    turn = talk(branch, "明天上海的酒店，五星级，100元以内")[0]
    assert "不能满足的是" in turn.reply and ("星级" in turn.reply or "预算" in turn.reply)
    assert turn.state["slots"]["stars"] == 5 and turn.state["slots"]["max_price"] == 100
    assert turn.state["open"] == "offer_alternative"


def test_claims_after_a_booking_and_the_booking_list(branch):
    turns = talk(branch, "明天从北京到上海的火车票", "第一个", "确定")
    state = turns[-1].state
    assert branch.claims(state, "今天天气怎么样")  # "anything else?" is open: the aside gets the task's guidance
    closed = branch.respond(state, "谢谢").state
    assert closed["bookings"] and not closed["open"]
    assert branch.claims(closed, "我的订单呢") and not branch.claims(closed, "我的流量还剩多少")
    answer = branch.respond(closed, "我的订单呢")
    assert f"订单号{turns[-1].booked['order_no']}" in answer.reply


def test_a_lone_code_keeps_the_chinese_reply(branch):
    first = talk(branch, "明天从北京到上海的火车票")[0]
    code = read_item(first.reply.splitlines()[1])["code"]
    for text in (code, code.lower(), "3"):
        reply = branch.respond(first.state, text).reply
        assert "请问" in reply and code in reply, text  # read back, or asked which of that train's seats
