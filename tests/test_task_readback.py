"""Read-back integrity: during a booking read-back a question (确定吗 / 对吧 / 嗯？/ is that right?) is never the yes
that books; it gets "nothing booked yet" and the read-back again. An explicit yes books. 第N个 during a read-back
switches the offer read back, and booking it needs a new yes. Dialogs are our own, driven through ``TaskBranch``
(both act readers) over a small generated database."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ragdial.task import act_model as M
from ragdial.task.acts import Act, Context, no_yes_in_questions
from ragdial.task.db import TravelDB
from ragdial.task.manager import TaskBranch
from task_dialogs import TODAY, talk

QUESTIONS = [
    "嗯？",
    "确定吗",
    "确定吗？",
    "确定？",
    "可以吗",
    "可以？",
    "对吗",
    "是吗",
    "好吗",
    "行吗",
    "对吧",
    "对吧？",
    "没问题吧？",
    "是这个吗",
    "就这个吗",
    "好不好",
    "可不可以",
    "确定不",
    "嗯，确定吗",
    "ok?",
    "yes?",
    "is that right?",
]
YESES = [
    "确定",
    "确认",
    "好的",
    "行",
    "可以",
    "对",
    "订吧",
    "没问题",
    "是的",
    "好吧",
    "确定吧",
    "就这个",
    "yes",
    "ok",
    "do it",
    "go ahead",
]


@pytest.fixture(params=["learned", "rules"])
def branch(request, travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True), acts=request.param)


def _read_back(branch):
    """A train offer read back after choosing the first of the listed ones."""
    listed, chosen = talk(branch, "明天从北京到上海的火车票", "第一个")
    assert chosen.state["open"] == "confirm_booking" and "确认预订吗" in chosen.reply
    return branch._offer_rows(listed.state), chosen.state


@pytest.mark.parametrize("question", QUESTIONS)
def test_a_question_during_the_read_back_never_books(branch, question):
    _rows, state = _read_back(branch)
    turn = branch.respond(state, question)
    assert turn.booked is None and turn.state["bookings"] == [] and "confirm" not in turn.acts
    assert turn.state["open"] == "confirm_booking" and turn.state["pending"] == state["pending"]
    zh = turn.state["language"] == "zh"
    assert ("还没有为您预订" if zh else "Nothing is booked yet") in turn.reply
    assert ("确认预订吗" if zh else "Shall I confirm the booking?") in turn.reply  # the offer read back again
    # the booking is still there to be made: an explicit yes afterwards books the offer read back
    done = branch.respond(turn.state, "确认")
    assert done.booked and done.booked["item_id"] == state["pending"]["id"]


@pytest.mark.parametrize("yes", YESES)
def test_an_explicit_yes_books(branch, yes):
    _rows, state = _read_back(branch)
    turn = branch.respond(state, yes)
    assert turn.acts == ["confirm"] and turn.booked and turn.booked["item_id"] == state["pending"]["id"]
    assert len(turn.state["bookings"]) == 1 and turn.state["open"] == "anything_else"


def test_a_question_then_a_yes_in_one_turn_books(branch):
    _rows, state = _read_back(branch)
    turn = branch.respond(state, "几点到？好，订吧")
    assert turn.acts == ["request", "confirm"] and turn.booked["item_id"] == state["pending"]["id"]


def test_an_ordinal_during_the_read_back_switches_the_offer(branch):
    rows, state = _read_back(branch)
    assert len(rows) >= 2 and state["pending"]["id"] == rows[0]["id"]
    switched = branch.respond(state, "第二个")
    assert switched.acts == ["select"] and switched.booked is None and switched.state["bookings"] == []
    assert switched.state["open"] == "confirm_booking" and switched.state["pending"]["id"] == rows[1]["id"]
    assert rows[1]["train_no"] in switched.reply and "确认预订吗" in switched.reply  # the new offer read back
    asked = branch.respond(switched.state, "确定吗")  # still no yes
    assert asked.booked is None and asked.state["pending"]["id"] == rows[1]["id"]
    done = branch.respond(asked.state, "好的")
    assert done.booked["item_id"] == rows[1]["id"] and len(done.state["bookings"]) == 1


def test_switch_forms_and_a_switch_with_a_yes(branch):
    rows, state = _read_back(branch)
    for text in ("换第二个吧", "第二个可以吗", "第2个"):
        turn = branch.respond(state, text)
        assert turn.booked is None and turn.state["pending"]["id"] == rows[1]["id"], text
    both = branch.respond(state, "第二个，订吧")  # the switch and an explicit yes: the second one is booked
    assert both.acts == ["select", "confirm"] and both.booked["item_id"] == rows[1]["id"]


def test_an_ordinal_not_listed_books_nothing(branch):
    rows, state = _read_back(branch)
    turn = branch.respond(state, f"第{len(rows) + 2}个")
    assert turn.booked is None and turn.state["pending"] is None and turn.state["open"] == "choose_offer"
    after = branch.respond(turn.state, "确定")  # no offer is read back any more: a yes books nothing
    assert after.booked is None and after.state["bookings"] == []


def test_a_question_during_a_cancel_read_back_cancels_nothing(branch):
    booked = talk(branch, "明天从北京到上海的火车票", "第一个", "确认", "把刚才那张火车票退了")
    state = booked[-1].state
    turn = branch.respond(state, "确定吗？")
    assert "还没有取消" in turn.reply and "确认取消吗" in turn.reply
    assert turn.state["bookings"][0].get("status") != "cancelled"
    done = branch.respond(turn.state, "确定")
    assert done.state["bookings"][0]["status"] == "cancelled"


def test_the_learned_reader_cannot_turn_a_question_into_a_yes(travel_db_path):
    """Whatever the model says (here a stand-in sure of a yes), a question is no confirmation."""
    gaz = TravelDB(travel_db_path).gazetteer()
    sure = SimpleNamespace(
        config=SimpleNamespace(margin=0.0),
        probabilities=lambda items: [{**dict.fromkeys(M.LABELS, 0.0), "confirm": 0.99} for _ in items],
    )
    reader = M.ActReader(sure, gaz, TODAY)  # type: ignore[arg-type]
    ctx = Context("train", "confirm_booking", [{"code": "G1", "price": 500}], {"date": "2026-12-02"})
    for text in ("对吧", "好不好", "嗯，确定吗", "是这个吗"):
        assert [a.act for a in reader(text, ctx)] == ["request"], text
    assert [a.act for a in reader("确定", ctx)] == ["confirm"]


def test_the_guard_keeps_a_yes_said_as_a_statement():
    assert no_yes_in_questions([Act("confirm")], "确定") == [Act("confirm")]
    assert no_yes_in_questions([Act("confirm")], "确定吗") == [Act("request")]
    assert no_yes_in_questions([Act("out_of_scope"), Act("confirm")], "北京今天多少度？算了 确定吧")[-1] == Act(
        "confirm"
    )
    assert no_yes_in_questions([Act("select", {"ordinal": 2}), Act("confirm")], "第二个，可以吗") == [
        Act("select", {"ordinal": 2})
    ]
