"""The simulator's booking-change goals: once everything is booked the simulated user changes its last booking
(cancel it, move it a day, a better class, one night fewer, one more ticket), said plainly; success is judged from
the database. The goals themselves do not depend on the share that changes. Small generated database (seed 7,
today 2026-12-01). The simulator is written by the same hand as the dialog manager: this checks that the parts
fit, not how real users talk."""

from __future__ import annotations

from ragdial.task.db import TravelDB
from ragdial.task.goals import CHANGE_KINDS, sample_goals
from ragdial.task.manager import TaskBranch
from ragdial.task.simulator import InProcessChannel, run_dialog, summarise
from task_dialogs import TODAY


def test_the_goals_are_the_same_whatever_share_changes(travel_db_path):
    db = TravelDB(travel_db_path, scratch=True)
    plain = sample_goals(db, 12, seed=3, today=TODAY)
    changing = sample_goals(db, 12, seed=3, today=TODAY, changes=1.0)
    assert all(g.change is None for g in plain)
    assert all(g.change is not None and g.change["kind"] in CHANGE_KINDS for g in changing)
    for a, b in zip(plain, changing, strict=True):
        assert (a.kind, [s.constraints for s in a.subgoals]) == (b.kind, [s.constraints for s in b.subgoals])
    kinds = {g.change["kind"] for g in changing if g.change}
    assert len(kinds) >= 3, kinds  # several kinds of change are drawn


def test_change_goals_end_with_the_database_changed(travel_db_path):
    db = TravelDB(travel_db_path, scratch=True)
    goals = sample_goals(db, 10, seed=4, today=TODAY, changes=1.0)
    branch = TaskBranch(db, today=TODAY, acts="rules")
    results = [run_dialog(g, InProcessChannel(branch), db, TODAY, seed=g.id) for g in goals]
    assert summarise(results)["integrity_errors"] == 0
    done = [r for r in results if r.success]
    assert len(done) >= 8, [(r.goal.change, r.log[-1]) for r in results if not r.success]
    for result in done:
        kind = result.goal.change["kind"]
        last = db.booking(result.bookings[-1]["number"])
        assert last is not None
        if kind == "cancel":
            assert last["status"] == "cancelled", result.log[-1]
            continue
        assert last["status"] == "booked", result.log[-1]
        replaced = db.conn.execute("SELECT status FROM bookings WHERE changed_into = ?", (last["id"],)).fetchone()
        assert replaced is not None and replaced[0] == "changed", result.log[-1]  # the old one, given back
        sub = result.goal.subgoals[-1].constraints
        if kind == "fewer_nights":
            assert last["nights"] == sub["nights"]
        if kind == "add_ticket":
            assert last["quantity"] == 2
        if kind == "change_date":
            assert last["date"] == sub["date"]
        assert len(result.log) >= 3  # the request of the change and its yes were turns of their own
