"""Human rating pages as a FastAPI router (mounted under ``/rating``).

(a) Online test: a tester gets a goal sampled from the travel database, talks to the system, then rates
satisfaction (−2..2), fluency (−1..1), out-of-scope guidance (0/1) and whether the task was completed.
(b) Offline rating of system outputs (imported with POST /rating/api/items): Huawei informativeness, coherence,
factual accuracy (0–2) and DSTC appropriateness and accuracy (1–5).
Export: /rating/export.json (rows, means, Krippendorff's alpha) and /rating/export.csv?kind=online|offline.

``rating_router(store, responder, goal_sampler)``: ``responder(state, text) -> (reply, state, info)`` is the
system under test (default: the task branch over a scratch copy of the travel database), so the service can pass
its own ``DialogSystem`` step instead.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse, PlainTextResponse
from pydantic import BaseModel, Field

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict, RouteBody, as_array, as_object
from ragdial.rating.store import RatingStore

if TYPE_CHECKING:
    from ragdial.pipeline.system import DialogSystem

STATIC = Path(__file__).parent / "static"
# the system's reply, its new state and what happened (``booked``: the booking made, if any)
Responder = Callable[[JSONDict | None, str], tuple[str, JSONDict, JSONDict]]
GoalSampler = Callable[[int], tuple[JSONDict, str]]


class NewTest(BaseModel):
    rater: str = Field(min_length=1, max_length=64)


class Message(BaseModel):
    text: str = Field(min_length=1, max_length=2000)


class Items(BaseModel):
    items: list[dict[str, Any]] = Field(min_length=1)  # Any: pydantic (no model of the recursive JSONValue)


class ItemRating(BaseModel):
    rater: str = Field(min_length=1, max_length=64)
    scores: dict[str, Any]  # Any: pydantic (no model of the recursive JSONValue)


def task_branch_backend(db_url: str | Path | None = None) -> tuple[Responder, GoalSampler]:
    """The default system under test and goal source: the task branch over a scratch copy of the database."""
    from ragdial.task.db import TravelDB, ensure_travel_db
    from ragdial.task.goals import sample_goal
    from ragdial.task.manager import TaskBranch

    db = TravelDB(ensure_travel_db(db_url), scratch=True)
    branch = TaskBranch(db)
    today = branch.today

    def respond(state: JSONDict | None, text: str) -> tuple[str, JSONDict, JSONDict]:
        turn = branch.respond(state, text)
        return (
            turn.reply,
            turn.state,
            {"done": turn.done, "booked": turn.booked, "in_scope": turn.in_scope, "acts": turn.acts},
        )

    def goal(test_number: int) -> tuple[JSONDict, str]:
        g = sample_goal(db, test_number, today, random.Random())
        return {**g.to_dict(), "today": today.isoformat()}, f"（今天是{today.month}月{today.day}日）" + g.describe()

    return respond, goal


def system_backend(system: DialogSystem, db_url: str | Path | None = None) -> tuple[Responder, GoalSampler]:
    """The whole dialog system under test (task branch, knowledge branch, chit-chat), goals from the travel
    database: for the service to mount the rating pages over the system it serves. The rating store keeps the
    test's history and the system's session state."""
    from ragdial.pipeline.turn import Session
    from ragdial.schema import Speaker, Turn

    _, goal = task_branch_backend(db_url)

    def respond(state: JSONDict | None, text: str) -> tuple[str, JSONDict, JSONDict]:
        state = state or {}
        history = [
            Turn(Speaker(str(speaker)), str(said)) for speaker, said in map(as_array, as_array(state.get("history")))
        ]
        session = Session("rating", None, system.language, history, dict(as_object(state.get("session"))))
        reply = system.respond(session, text)
        session.add(reply.record)
        new_state: JSONDict = {
            "history": [[t.speaker.value, t.text] for t in session.history],
            "session": session.state,
        }
        return reply.text, new_state, {"decision": reply.decision.to_dict()}

    return respond, goal


def rating_router(store: RatingStore, responder: Responder, goal_sampler: GoalSampler) -> APIRouter:
    """The pages and their JSON API."""
    router = APIRouter(prefix="/rating", tags=["rating"])

    def page(name: str) -> FileResponse:
        return FileResponse(STATIC / name, media_type="text/html" if name.endswith(".html") else None)

    @router.get("", include_in_schema=False)
    @router.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return page("index.html")

    @router.get("/online", include_in_schema=False)
    def online_page() -> FileResponse:
        return page("online.html")

    @router.get("/offline", include_in_schema=False)
    def offline_page() -> FileResponse:
        return page("offline.html")

    @router.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> FileResponse:
        if name not in ("rating.js", "rating.css"):
            raise HTTPException(404, "not found")
        return FileResponse(STATIC / name)

    @router.post("/api/tests", status_code=201)
    def new_test(body: NewTest) -> RouteBody:
        number = store.conn.execute("SELECT COUNT(*) FROM online_tests").fetchone()[0]
        goal, text = goal_sampler(number)
        test_id = store.new_test(body.rater, goal, text)
        return {"test_id": test_id, "goal": goal, "goal_text": text}

    @router.post("/api/tests/{test_id}/messages")
    def message(test_id: int, body: Message) -> RouteBody:
        try:
            test = store.test(test_id)
        except KeyError as err:
            raise HTTPException(404, f"no test {test_id}") from err
        if test["rated"] is not None:
            raise HTTPException(409, f"test {test_id} is already rated")
        reply, state, info = responder(dict(as_object(test["state"])) or None, body.text)
        store.save_turn(test_id, state, body.text, reply, (info or {}).get("booked"))
        return {"reply": reply, **(info or {})}

    @router.post("/api/tests/{test_id}/rating")
    def rate_test(test_id: int, scores: dict[str, Any]) -> RouteBody:  # Any: pydantic (as above)
        try:
            store.rate_test(test_id, scores)
        except KeyError as err:
            raise HTTPException(404, f"no test {test_id}") from err
        except RagdialError as err:
            raise HTTPException(422, str(err)) from err
        return {"ok": True}

    @router.post("/api/items", status_code=201)
    def add_items(body: Items) -> RouteBody:
        try:
            return {"ids": store.add_items(body.items)}
        except RagdialError as err:
            raise HTTPException(422, str(err)) from err

    @router.get("/api/items/next")
    def next_item(rater: str) -> RouteBody:
        return {"item": store.next_item(rater)}

    @router.post("/api/items/{item_id}/rating")
    def rate_item(item_id: int, body: ItemRating) -> RouteBody:
        try:
            store.rate_item(item_id, body.rater, body.scores)
        except KeyError as err:
            raise HTTPException(404, f"no item {item_id}") from err
        except RagdialError as err:
            raise HTTPException(422, str(err)) from err
        return {"ok": True}

    @router.get("/export.json")
    def export_json() -> RouteBody:
        return store.export_json()

    @router.get("/export.csv")
    def export_csv(kind: str = "online") -> PlainTextResponse:
        try:
            text = store.export_csv(kind)
        except RagdialError as err:
            raise HTTPException(422, str(err)) from err
        return PlainTextResponse(
            text, media_type="text/csv", headers={"Content-Disposition": f'attachment; filename="ratings-{kind}.csv"'}
        )

    return router


def rating_app(store_path: str | Path, db_url: str | Path | None = None):
    """A stand-alone app with only the rating pages (for tests and small studies)."""
    from fastapi import FastAPI

    app = FastAPI(title="ragdial rating")
    responder, sampler = task_branch_backend(db_url)
    app.include_router(rating_router(RatingStore(store_path), responder, sampler))
    return app
