"""SQLite store of human ratings: online tests (goal, dialog, satisfaction/fluency/guidance) and offline
ratings of system outputs (Huawei informativeness/coherence/factual accuracy 0-2, DSTC appropriateness/accuracy
1-5); export with means and Krippendorff's alpha."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import threading
import time
from pathlib import Path

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict, JSONValue, as_array
from ragdial.metrics.agreement import krippendorff_alpha

ONLINE_SCALES = {"satisfaction": (-2, 2), "fluency": (-1, 1), "guidance": (0, 1), "completed": (0, 1)}
OFFLINE_SCALES = {
    "informativeness": (0, 2),
    "coherence": (0, 2),
    "factual": (0, 2),
    "appropriateness": (1, 5),
    "accuracy": (1, 5),
}
SCHEMA = """
CREATE TABLE IF NOT EXISTS online_tests (
    id INTEGER PRIMARY KEY, rater TEXT NOT NULL, goal TEXT NOT NULL, goal_text TEXT NOT NULL,
    state TEXT, log TEXT NOT NULL DEFAULT '[]', booked TEXT NOT NULL DEFAULT '[]',
    satisfaction INTEGER, fluency INTEGER, guidance INTEGER, completed INTEGER, created REAL, rated REAL);
CREATE TABLE IF NOT EXISTS offline_items (
    id INTEGER PRIMARY KEY, source TEXT NOT NULL, system TEXT NOT NULL, context TEXT NOT NULL,
    response TEXT NOT NULL, knowledge TEXT NOT NULL DEFAULT '', created REAL);
CREATE TABLE IF NOT EXISTS offline_ratings (
    item_id INTEGER NOT NULL REFERENCES offline_items(id), rater TEXT NOT NULL,
    informativeness INTEGER, coherence INTEGER, factual INTEGER, appropriateness INTEGER, accuracy INTEGER,
    created REAL, PRIMARY KEY (item_id, rater));
"""


def check_scores(scores: JSONDict, scales: dict[str, tuple[int, int]]) -> dict[str, int]:
    """Every scale present and an integer in range; names the field that is wrong."""
    out = {}
    for name, (lo, hi) in scales.items():
        value = scores.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
            raise RagdialError(f"field {name!r}: expected an integer from {lo} to {hi}, got {value!r}")
        out[name] = value
    return out


class RatingStore:
    """All ratings in one SQLite file (thread-safe for the web app)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, check_same_thread=False)
        self.conn.row_factory = sqlite3.Row
        self.lock = threading.Lock()
        with self.lock, self.conn:
            self.conn.executescript(SCHEMA)

    # -------------------------------------------------------------- online tests
    def new_test(self, rater: str, goal: JSONDict, goal_text: str) -> int:
        with self.lock, self.conn:
            cur = self.conn.execute(
                "INSERT INTO online_tests (rater, goal, goal_text, created) VALUES (?, ?, ?, ?)",
                (rater, json.dumps(goal, ensure_ascii=False), goal_text, time.time()),
            )
        return int(cur.lastrowid or 0)

    def test(self, test_id: int) -> JSONDict:
        row = self.conn.execute("SELECT * FROM online_tests WHERE id = ?", (test_id,)).fetchone()
        if row is None:
            raise KeyError(test_id)
        out = dict(row)
        for key in ("goal", "state", "log", "booked"):
            out[key] = json.loads(out[key]) if out[key] else None
        return out

    def save_turn(self, test_id: int, state: JSONDict, user: str, system: str, booked: JSONValue) -> None:
        """Keep one exchange of an online test; ``booked``: the booking the turn made (falsy: none)."""
        test = self.test(test_id)
        log = [*as_array(test["log"]), {"user": user, "system": system}]
        bookings = [*as_array(test["booked"]), booked] if booked else test["booked"]
        with self.lock, self.conn:
            self.conn.execute(
                "UPDATE online_tests SET state = ?, log = ?, booked = ? WHERE id = ?",
                (
                    json.dumps(state, ensure_ascii=False),
                    json.dumps(log, ensure_ascii=False),
                    json.dumps(bookings, ensure_ascii=False),
                    test_id,
                ),
            )

    def rate_test(self, test_id: int, scores: JSONDict) -> None:
        values = check_scores(scores, ONLINE_SCALES)
        self.test(test_id)
        with self.lock, self.conn:
            self.conn.execute(
                "UPDATE online_tests SET satisfaction = ?, fluency = ?, guidance = ?, completed = ?, rated = ?"
                " WHERE id = ?",
                (
                    values["satisfaction"],
                    values["fluency"],
                    values["guidance"],
                    values["completed"],
                    time.time(),
                    test_id,
                ),
            )

    # -------------------------------------------------------------- offline ratings
    def add_items(self, items: list[JSONDict]) -> list[int]:
        ids = []
        with self.lock, self.conn:
            for index, item in enumerate(items):
                for key in ("context", "response"):
                    value = item.get(key)
                    if not isinstance(value, str) or not value.strip():
                        raise RagdialError(f"item {index}, field {key!r}: a non-empty string is required")
                cur = self.conn.execute(
                    "INSERT INTO offline_items (source, system, context, response, knowledge, created)"
                    " VALUES (?,?,?,?,?,?)",
                    (
                        str(item.get("source", "")),
                        str(item.get("system", "")),
                        item["context"],
                        item["response"],
                        str(item.get("knowledge", "")),
                        time.time(),
                    ),
                )
                ids.append(int(cur.lastrowid or 0))
        return ids

    def next_item(self, rater: str) -> JSONDict | None:
        row = self.conn.execute(
            "SELECT * FROM offline_items WHERE id NOT IN (SELECT item_id FROM offline_ratings WHERE rater = ?)"
            " ORDER BY id LIMIT 1",
            (rater,),
        ).fetchone()
        return dict(row) if row else None

    def rate_item(self, item_id: int, rater: str, scores: JSONDict) -> None:
        values = check_scores(scores, OFFLINE_SCALES)
        if not rater.strip():
            raise RagdialError("field 'rater': a rater name is required")
        if self.conn.execute("SELECT 1 FROM offline_items WHERE id = ?", (item_id,)).fetchone() is None:
            raise KeyError(item_id)
        with self.lock, self.conn:
            self.conn.execute(
                "INSERT OR REPLACE INTO offline_ratings VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (item_id, rater, *(values[k] for k in OFFLINE_SCALES), time.time()),
            )

    # -------------------------------------------------------------- export
    def online_rows(self) -> list[JSONDict]:
        rows = self.conn.execute(
            "SELECT id, rater, goal_text, satisfaction, fluency, guidance, completed, log FROM online_tests"
            " WHERE rated IS NOT NULL ORDER BY id"
        )
        return [{**dict(r), "turns": len(json.loads(r["log"]))} for r in rows]

    def offline_rows(self) -> list[JSONDict]:
        rows = self.conn.execute(
            "SELECT r.item_id, i.source, i.system, r.rater, "
            + ", ".join(f"r.{k}" for k in OFFLINE_SCALES)
            + " FROM offline_ratings r JOIN offline_items i ON i.id = r.item_id ORDER BY r.item_id, r.rater"
        )
        return [dict(r) for r in rows]

    def summary(self) -> JSONDict:
        """Means per scale (online and offline) and Krippendorff's alpha (interval) per offline scale."""
        online, offline = self.online_rows(), self.offline_rows()

        def mean(rows: list[JSONDict], key: str) -> float | None:
            values = [float(v) for r in rows if isinstance(v := r[key], int | float)]
            return sum(values) / len(values) if values else None

        agreement = {}
        for key in OFFLINE_SCALES:
            units: dict[object, list[float]] = {}
            for r in offline:
                value = r[key]
                if isinstance(value, int | float):
                    units.setdefault(r["item_id"], []).append(float(value))
            agreement[key] = krippendorff_alpha(units, "interval")
        return {
            "online": {"tests": len(online), "means": {k: mean(online, k) for k in (*ONLINE_SCALES, "turns")}},
            "offline": {
                "ratings": len(offline),
                "items": len({r["item_id"] for r in offline}),
                "raters": len({r["rater"] for r in offline}),
                "means": {k: mean(offline, k) for k in OFFLINE_SCALES},
                "krippendorff_alpha_interval": agreement,
            },
        }

    def export_json(self) -> JSONDict:
        online = [{k: v for k, v in r.items() if k != "log"} for r in self.online_rows()]
        return {"summary": self.summary(), "online": online, "offline": self.offline_rows()}

    def export_csv(self, kind: str) -> str:
        if kind not in ("online", "offline"):
            raise RagdialError(f"kind {kind!r}: expected online or offline")
        rows = (
            [{k: v for k, v in r.items() if k != "log"} for r in self.online_rows()]
            if kind == "online"
            else self.offline_rows()
        )
        buffer = io.StringIO()
        if rows:
            writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        return buffer.getvalue()
