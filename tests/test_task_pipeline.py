"""The task branch inside the dialog system and the HTTP service: travel requests go to it, the booking state
lives in the session (and survives a restart), knowledge questions still go to retrieval, and the simulator
completes goals through the same chat-completions API a person's web page uses."""

from __future__ import annotations

import datetime as dt

import pytest
from fastapi.testclient import TestClient

import service_doubles as doubles
from ragdial.pipeline import SystemConfig
from ragdial.serve.app import create_app
from ragdial.serve.service import Service, ServiceSettings
from ragdial.task.db import TravelDB
from ragdial.task.dbgen import generate
from ragdial.task.goals import sample_goals
from ragdial.task.http_channel import HttpChannel
from ragdial.task.simulator import run_dialog, summarise
from ragdial.text.tokenize import words

TODAY = dt.date(2026, 12, 1)


@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("db") / "travel.sqlite"
    generate(path, seed=9, start=TODAY, days=5)
    return path


def _client(tmp_path, db_path) -> TestClient:
    config = SystemConfig.from_data(
        {**doubles.CONFIG, "task": {"name": "travel", "db": str(db_path), "today": "2026-12-01"}}
    )
    service = Service(ServiceSettings(config, str(tmp_path / "sessions.sqlite")))
    return TestClient(create_app(service), raise_server_exceptions=False)


def _say(client, text, session_id=None):
    body = {"messages": [{"role": "user", "content": text}], "language": "zh"}
    if session_id:
        body["session_id"] = session_id
    response = client.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    data = response.json()
    return data["choices"][0]["message"]["content"], data["ragdial"]


def test_booking_through_the_service_and_back_to_knowledge(tmp_path, db_path):
    client = _client(tmp_path, db_path)
    reply, meta = _say(client, "明天从北京到上海的火车票")
    sid = meta["session_id"]
    assert "请问您要订哪一个" in reply
    assert meta["decision"]["label"] == "task:train" and meta["decision"]["detector"] == "task"
    assert meta["knowledge"] == []
    client = _client(tmp_path, db_path)  # a restart: the task state comes back from the session store
    reply, _ = _say(client, "第一个", sid)
    assert "确认预订吗" in reply
    reply, _ = _say(client, "确认", sid)
    assert "预订成功" in reply
    reply, meta = _say(client, "怎么查询话费余额", sid)  # no booking under way: the knowledge branch answers
    assert meta["decision"]["needs_knowledge"] is True and meta["knowledge"]
    history = client.get(f"/v1/sessions/{sid}").json()
    assert history["turns"] == 8


def test_the_task_branch_claims_a_turn_while_its_state_says_a_booking_is_under_way(db_path):
    from ragdial.pipeline.components import build_system
    from ragdial.task import STATE_KEY, TASKS, under_way

    config = SystemConfig.from_data(
        {**doubles.CONFIG, "task": {"name": "travel", "db": str(db_path), "today": "2026-12-01"}}
    )
    system = build_system(config, "zh")
    assert system.task is not None and system.task.to_config()["today"] == "2026-12-01"
    assert [b.name for b in system.branches] == ["task", "knowledge"]
    session = system.new_session("u1")
    reply = system.respond(session, "明天从北京到上海的火车票")
    record = reply.record
    assert record.branch == "task" and session.state == {} and session.history == []  # the session is untouched
    # a task reply counts its own usage (the turn it read, its one piece): the service never rebuilds the context
    assert reply.usage == {
        "prompt_tokens": len(words("明天从北京到上海的火车票", "zh")),
        "completion_tokens": 1,
        "counted": "words",
    }
    assert under_way(record.state[STATE_KEY])  # an offer is open: the task's own keys say so
    session.add(record)
    reply = system.respond(session, "第一个")  # no travel words, but the booking under way claims it
    assert reply.record.branch == "task" and "确认预订吗" in reply.text
    session.add(reply.record)
    # a telecom question in the middle of the read-back goes to the knowledge base; the task state is kept ...
    aside = system.respond(session, "怎么查询话费余额")
    assert aside.record.branch == "knowledge" and aside.decision.needs_knowledge
    assert aside.record.state[STATE_KEY] == session.state[STATE_KEY]
    session.add(aside.record)
    # ... and the booking resumes on the next turn: nothing was booked by the aside, the yes books it now
    assert session.state[STATE_KEY]["open"] == "confirm_booking" and not session.state[STATE_KEY]["bookings"]
    booked = system.respond(session, "确认")
    assert booked.record.branch == "task" and "预订成功" in booked.text
    assert len(booked.record.state[STATE_KEY]["bookings"]) == 1
    fresh = system.new_session("u1")
    assert system.respond(fresh, "怎么查询话费余额").record.branch == "knowledge"
    assert TASKS.names() == ["travel"]


def test_config_rejects_bad_task_fields(tmp_path, db_path):
    from ragdial.pipeline.components import build_system
    from ragdial.pipeline.config import ConfigError, load_config

    old = tmp_path / "old.yaml"
    old.write_text('task_db: /tmp/travel.sqlite\ntask_today: "2026-12-01"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:  # an old key: one error naming the file and the new block
        load_config(old)
    message = str(caught.value)
    assert message.startswith(str(old)) and "task_db, task_today" in message
    assert "'task_db' is now task: {name: travel, db: ...}" in message
    with pytest.raises(ConfigError, match="field 'task'"):
        SystemConfig.from_data({"task": 3})
    config = SystemConfig.from_data({**doubles.CONFIG, "task": {"name": "travel", "db": str(db_path), "today": "x"}})
    with pytest.raises(ConfigError, match="task 'travel', field 'today'"):
        build_system(config, "zh")
    with pytest.raises(ConfigError, match="unknown task 'flights'"):
        build_system(SystemConfig.from_data({**doubles.CONFIG, "task": "flights"}), "zh")
    with pytest.raises(ConfigError, match=r"task 'travel'.*'when'"):
        build_system(SystemConfig.from_data({**doubles.CONFIG, "task": {"name": "travel", "when": 1}}), "zh")
    assert SystemConfig.from_data(config.to_data()) == config


def test_simulator_through_the_http_api(tmp_path, db_path):
    client = _client(tmp_path, db_path)
    goals = sample_goals(TravelDB(db_path), 4, seed=21, today=TODAY)
    channel = HttpChannel("http://testserver", client=client)
    evaluator = TravelDB(db_path)  # the service books into the file; success is read from it
    results = [run_dialog(g, channel, evaluator, TODAY, seed=g.id) for g in goals]
    assert summarise(results)["completion_ratio"] == 1.0


def test_rating_pages_over_the_whole_system(tmp_path, db_path):
    from fastapi import FastAPI

    from ragdial.pipeline.components import build_system
    from ragdial.rating import rating_router, system_backend
    from ragdial.rating.store import RatingStore

    config = SystemConfig.from_data(
        {**doubles.CONFIG, "task": {"name": "travel", "db": str(db_path), "today": "2026-12-01"}}
    )
    app = FastAPI()
    app.include_router(
        rating_router(RatingStore(tmp_path / "r.sqlite"), *system_backend(build_system(config, "zh"), db_path))
    )
    client = TestClient(app)
    test = client.post("/rating/api/tests", json={"rater": "ann"}).json()
    first = client.post(
        f"/rating/api/tests/{test['test_id']}/messages", json={"text": "明天从北京到上海的火车票"}
    ).json()
    assert "请问您要订哪一个" in first["reply"] and first["decision"]["detector"] == "task"
    second = client.post(f"/rating/api/tests/{test['test_id']}/messages", json={"text": "第一个"}).json()
    assert "确认预订吗" in second["reply"]  # the task state came back from the rating store
    third = client.post(f"/rating/api/tests/{test['test_id']}/messages", json={"text": "上海明天下雨吗"}).json()
    assert third["decision"]["needs_knowledge"] is False  # a booking is under way: the task branch keeps the aside
    assert "确认预订吗" in third["reply"]  # and returns to the read-back
    fourth = client.post(f"/rating/api/tests/{test['test_id']}/messages", json={"text": "怎么查询话费余额"}).json()
    assert fourth["decision"]["needs_knowledge"] is True  # a telecom question goes to the knowledge base
    fifth = client.post(f"/rating/api/tests/{test['test_id']}/messages", json={"text": "确认"}).json()
    assert "预订成功" in fifth["reply"]  # the read-back was kept through the knowledge turn
