"""The task branch's utterance banks are well-formed: the locked dev/test bank (task_utterances.jsonl), the
independent training bank (task_utterances_train.jsonl) and the fresh locked half written in session 10
(task_utterances_test2.jsonl), all in benchmarks/data.

Checks the schema and label conventions of benchmarks/data/README_task_utterances.md, the counts per act, the
locked bank's dev/test balance, that every entity is a row of the default seed-0 database (rebuilt in a temporary
folder), that each ``select`` line's ``target`` is the one offer its reference slots describe, and that the
training bank shares no utterance with the locked test split, nor test2 with the lines the act model trains on.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ragdial.task.dbgen import generate

DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "data"
BANK = DATA / "task_utterances.jsonl"
TRAIN_BANK = DATA / "task_utterances_train.jsonl"
TEST2_BANK = DATA / "task_utterances_test2.jsonl"
README = DATA / "README_task_utterances.md"

ACTS = (
    "inform",
    "request",
    "confirm",
    "deny",
    "select",
    "modify",
    "ask_about_booking",
    "out_of_scope",
    "greeting",
    "thanks",
)
CONSTRAINT_SLOTS = {
    "domain",
    "dep_city",
    "arr_city",
    "dep_place",
    "arr_place",
    "date",
    "period",
    "time_from",
    "time_to",
    "seat_class",
    "berth",
    "train_kinds",
    "airline",
    "max_price",
    "passengers",
    "city",
    "district",
    "stars",
    "min_stars",
    "brand",
    "nights",
    "check_out",
    "rooms",
    "guests",
}
REFERENCE_SLOTS = {"ordinal", "code", "brand", "district", "price", "dep_time", "airline", "seat_class", "berth"}
REFERENCE_SLOTS |= {"feature", "ref"}
REQUESTABLE = {
    "price",
    "dep_time",
    "arr_time",
    "duration",
    "seats_left",
    "rooms_left",
    "dep_place",
    "arr_place",
    "stars",
    "district",
    "airline",
    "seat_class",
    "berth",
}
ALLOWED = {
    "inform": CONSTRAINT_SLOTS,
    "modify": CONSTRAINT_SLOTS,
    "select": REFERENCE_SLOTS,
    "request": REQUESTABLE | REFERENCE_SLOTS,
    "ask_about_booking": {"domain"},
}
OPEN_QUESTIONS = {
    None,
    "dep_city",
    "arr_city",
    "date",
    "city",
    "seat_class",
    "berth",
    "period",
    "max_price",
    "nights",
    "rooms",
    "guests",
    "passengers",
    "choose_offer",
    "confirm_booking",
    "offer_alternative",
    "anything_else",
}
DOMAINS = {"flight", "train", "hotel"}
PERIODS = {"凌晨", "早上", "上午", "中午", "下午", "傍晚", "晚上"}
FEATURES = {"cheapest", "most_expensive", "earliest", "latest", "fastest", "best"}
SEAT_CLASSES = {"经济舱", "商务舱", "头等舱", "二等座", "一等座", "商务座", "硬座", "硬卧", "软卧"}
BERTHS = {"上铺", "中铺", "下铺"}
COUNT_SLOTS = {"passengers", "nights", "rooms", "guests"}
TODAY = dt.date(2026, 12, 1)
LAST_DAY = dt.date(2026, 12, 30)
CLOCK = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


def load_bank(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise AssertionError(f"{path}:{number}: not JSON ({err})") from err
    return rows


BANK_ROWS = load_bank(BANK)
TRAIN_ROWS = load_bank(TRAIN_BANK)
TEST2_ROWS = load_bank(TEST2_BANK)
BANKS = {"locked": BANK_ROWS, "train": TRAIN_ROWS, "test2": TEST2_ROWS}
ID_PATTERN = {"locked": r"u\d{4}", "train": r"t\d{4}", "test2": r"t2-\d{4}"}
SPLITS = {"locked": {"dev", "test"}, "train": {"train"}, "test2": {"test2"}}
# lines per bank, lines per act (greeting and thanks need half), lines holding more than one act
MINIMUM = {"locked": (600, 30, 40), "train": (600, 30, 40), "test2": (320, 20, 30)}
each_bank = pytest.mark.parametrize("bank", sorted(BANKS))


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> sqlite3.Connection:
    """The database `ragdial task make-db` writes by default (seed 0, 2026-12-01, 30 days)."""
    path = tmp_path_factory.mktemp("taskdb") / "travel.sqlite"
    generate(path, seed=0)
    conn = sqlite3.connect(path)
    yield conn
    conn.close()


def act_names(row: dict[str, Any]) -> set[str]:
    return {act["act"] for act in row["acts"]}


def where(row: dict[str, Any]) -> str:
    return f"{row.get('id')} ({row.get('text')!r})"


@each_bank
def test_schema(bank: str) -> None:
    ids = [row["id"] for row in BANKS[bank]]
    assert len(ids) == len(set(ids)), "duplicate ids"
    said = Counter((row["text"], json.dumps(row["context"], sort_keys=True)) for row in BANKS[bank])
    assert max(said.values()) == 1, [text for (text, _), n in said.items() if n > 1]
    for row in BANKS[bank]:
        has_select = "select" in act_names(row)
        keys = {"id", "text", "acts", "context", "split", "phenomenon"} | ({"target"} if has_select else set())
        assert set(row) == keys, where(row)
        assert re.fullmatch(ID_PATTERN[bank], row["id"]), where(row)
        assert row["text"].strip() == row["text"] and row["text"], where(row)
        assert row["split"] in SPLITS[bank], where(row)
        assert re.fullmatch(r"[a-z_]+", row["phenomenon"]), where(row)
        assert row["acts"], where(row)
        for act in row["acts"]:
            assert set(act) == {"act", "slots"} and act["act"] in ACTS, where(row)
            assert isinstance(act["slots"], dict), where(row)
        context = row["context"]
        assert {"domain", "open_question", "offers", "state"} <= set(context), where(row)
        assert set(context) <= {"domain", "open_question", "offers", "state", "bookings", "suggestion"}, where(row)
        assert context["domain"] in DOMAINS | {None}, where(row)
        assert context["open_question"] in OPEN_QUESTIONS, where(row)
        assert isinstance(context["offers"], list) and isinstance(context["state"], dict), where(row)
        if context["open_question"] in ("choose_offer", "confirm_booking"):
            assert context["offers"], where(row)
        if context["open_question"] == "confirm_booking":
            assert len(context["offers"]) == 1, where(row)
        if context["open_question"] == "offer_alternative":
            assert context.get("suggestion"), where(row)
        if "ask_about_booking" in act_names(row):
            assert context.get("bookings"), where(row)
        if has_select:
            assert context["offers"], where(row)
            target = row["target"]
            assert target is None or 1 <= target <= len(context["offers"]), where(row)


@each_bank
def test_counts_per_act(bank: str) -> None:
    lines, per_act, compound = MINIMUM[bank]
    assert len(BANKS[bank]) >= lines
    counts = Counter(name for row in BANKS[bank] for name in act_names(row))
    for name in ACTS:
        needed = per_act // 2 if name in ("greeting", "thanks") else per_act
        assert counts[name] >= needed, (name, counts[name])
    assert sum(len(row["acts"]) > 1 for row in BANKS[bank]) >= compound, "compound utterances"


def test_train_bank_shares_no_utterance_with_the_locked_test_split() -> None:
    """Tuning on the training bank cannot memorise a locked test line (same text, or same text and context)."""
    test_texts = {row["text"] for row in BANK_ROWS if row["split"] == "test"}
    locked = {(row["text"], json.dumps(row["context"], sort_keys=True)) for row in BANK_ROWS}
    shared = [
        row["id"]
        for row in TRAIN_ROWS
        if row["text"] in test_texts or (row["text"], json.dumps(row["context"], sort_keys=True)) in locked
    ]
    assert not shared, shared


def test_test2_is_numbered_in_order_and_shares_no_utterance_with_training_lines() -> None:
    """test2 is one locked split, ids t2-0001… in file order; the act model trains on the training bank and the
    dev half, so no test2 text may be one of theirs (it would be memorised, not understood)."""
    assert [row["id"] for row in TEST2_ROWS] == [f"t2-{k:04d}" for k in range(1, len(TEST2_ROWS) + 1)]
    trained = {row["text"] for row in TRAIN_ROWS} | {row["text"] for row in BANK_ROWS if row["split"] == "dev"}
    assert not [row["id"] for row in TEST2_ROWS if row["text"] in trained]


def test_split_is_balanced_per_act_and_phenomenon() -> None:
    splits = Counter(row["split"] for row in BANK_ROWS)
    assert abs(splits["dev"] - splits["test"]) <= 1, splits
    for name in ACTS:
        per = Counter(row["split"] for row in BANK_ROWS if name in act_names(row))
        total = per["dev"] + per["test"]
        assert abs(per["dev"] - per["test"]) <= max(3, total // 10), (name, per)
    for tag in {row["phenomenon"] for row in BANK_ROWS}:
        per = Counter(row["split"] for row in BANK_ROWS if row["phenomenon"] == tag)
        assert abs(per["dev"] - per["test"]) <= 1, (tag, per)


def test_split_follows_the_documented_rule() -> None:
    ordered = sorted(BANK_ROWS, key=lambda row: (row["phenomenon"], row["id"]))
    assert [row["split"] for row in ordered] == ["dev" if k % 2 == 0 else "test" for k in range(len(ordered))]


@each_bank
def test_slot_names_are_documented_and_allowed_per_act(bank: str) -> None:
    documented = set(re.findall(r"`([a-z_]+)`", README.read_text(encoding="utf-8")))
    for row in BANKS[bank]:
        for act in row["acts"]:
            slots = act["slots"]
            assert set(slots) <= ALLOWED.get(act["act"], set()), (where(row), act)
            assert set(slots) <= documented, (where(row), set(slots) - documented)
            if act["act"] in ("inform", "modify", "select"):
                assert slots, (where(row), "an act of this kind names at least one slot")
            if act["act"] == "request":
                assert any(value == "?" for value in slots.values()), where(row)
                assert all(value == "?" for key, value in slots.items() if key not in REFERENCE_SLOTS), where(row)
        for key in row["context"]["state"]:
            assert key in CONSTRAINT_SLOTS, (where(row), key)


def check_value(row: dict[str, Any], key: str, value: Any) -> None:
    """The documented normalisation of one constraint or reference value."""
    problem = (where(row), key, value)
    if value == "?":
        return
    if key == "domain":
        assert value in DOMAINS, problem
    elif key in ("date", "check_out"):
        assert TODAY <= dt.date.fromisoformat(value) <= LAST_DAY, problem
    elif key in ("time_from", "time_to", "dep_time"):
        assert CLOCK.match(value), problem
    elif key == "period":
        assert value in PERIODS, problem
    elif key == "seat_class":
        assert set(value) <= SEAT_CLASSES if isinstance(value, list) else value in SEAT_CLASSES, problem
    elif key == "berth":
        assert set(value) <= BERTHS and len(value) > 1 if isinstance(value, list) else value in BERTHS, problem
    elif key == "train_kinds":
        assert isinstance(value, list) and value and set(value) <= set("GDZTK"), problem
    elif key in COUNT_SLOTS:
        assert isinstance(value, int) and 1 <= value <= 9, problem
    elif key in ("max_price", "price"):
        assert isinstance(value, int) and 10 <= value <= 10000, problem
    elif key in ("stars", "min_stars"):
        assert isinstance(value, int) and 2 <= value <= 5, problem
    elif key == "ordinal":
        assert isinstance(value, int) and (value == -1 or 1 <= value <= len(row["context"]["offers"])), problem
    elif key == "feature":
        assert value in FEATURES, problem
    elif key == "ref":
        assert value == "this", problem
    elif key == "code":
        assert re.fullmatch(r"[A-Z0-9]{2}\d{4}|[GDZTK]\d{2,4}", value), problem


@each_bank
def test_values_follow_the_normalisation(bank: str) -> None:
    for row in BANKS[bank]:
        for act in row["acts"]:
            for key, value in act["slots"].items():
                check_value(row, key, value)
            if act["act"] in ("inform", "modify") and "time_from" in act["slots"] and "time_to" in act["slots"]:
                assert act["slots"]["time_from"] < act["slots"]["time_to"], where(row)
        for key, value in row["context"]["state"].items():
            check_value(row, key, value)


@each_bank
def test_out_of_scope_and_social_acts_carry_no_slots(bank: str) -> None:
    for row in BANKS[bank]:
        for act in row["acts"]:
            if act["act"] in ("out_of_scope", "greeting", "thanks", "confirm", "deny"):
                assert act["slots"] == {}, where(row)
    oos_with_entities = [
        row
        for row in BANKS[bank]
        if act_names(row) == {"out_of_scope"} and re.search(r"\d|[明今后]天|周|北京|上海|成都|西安", row["text"])
    ]
    assert len(oos_with_entities) >= 20, "out-of-scope lines naming cities, dates or numbers"


@each_bank
def test_modify_changes_a_known_slot_and_inform_adds_new_ones(bank: str) -> None:
    for row in BANKS[bank]:
        context = row["context"]
        state = context["state"]
        new_task = context["open_question"] in (None, "anything_else") or "confirm" in act_names(row)
        for act in row["acts"]:
            for key, value in act["slots"].items():
                if act["act"] == "modify":
                    if key == "domain":
                        assert context["domain"] not in (None, value), where(row)
                    else:
                        assert key in state and state[key] != value, (where(row), key)
                elif act["act"] == "inform" and not new_task:
                    assert state.get(key) != value, (where(row), "restated value is not labelled", key)


def city_of_row(row: dict[str, Any], slots: dict[str, Any]) -> set[str]:
    """The hotel city an act is about: its own slot, the state, or the offers shown."""
    if "city" in slots:
        return {slots["city"]}
    if row["context"]["state"].get("city"):
        return {row["context"]["state"]["city"]}
    return {offer["city"] for offer in row["context"]["offers"] if "city" in offer}


@each_bank
def test_entities_exist_in_the_database(db: sqlite3.Connection, bank: str) -> None:
    cities = {name for (name,) in db.execute("SELECT name FROM cities")}
    places = dict(db.execute("SELECT name, city FROM places").fetchall())
    districts = set(db.execute("SELECT city, district FROM hotels").fetchall())
    brands = {(city, name.split("(")[0]) for city, name in db.execute("SELECT city, name FROM hotels")}
    airlines = {name for (name,) in db.execute("SELECT DISTINCT airline FROM flights")}
    codes = {code for (code,) in db.execute("SELECT flight_no FROM flights UNION SELECT train_no FROM trains")}
    for row in BANKS[bank]:
        for act in [*row["acts"], {"act": "state", "slots": row["context"]["state"]}]:
            slots = {key: value for key, value in act["slots"].items() if value != "?"}
            for key in ("dep_city", "arr_city", "city"):
                if key in slots:
                    assert slots[key] in cities, (where(row), key, slots[key])
            for key, city_key in (("dep_place", "dep_city"), ("arr_place", "arr_city")):
                if key in slots:
                    assert slots[key] in places, (where(row), slots[key])
                    if city_key in slots:
                        assert places[slots[key]] == slots[city_key], (where(row), key)
            if "district" in slots:
                known = {(city, slots["district"]) for city in city_of_row(row, slots)}
                assert known and known <= districts, (where(row), slots["district"])
            if "brand" in slots:
                known = {(city, slots["brand"]) for city in city_of_row(row, slots)}
                assert known and known <= brands, (where(row), slots["brand"])
            if "airline" in slots:
                assert slots["airline"] in airlines, where(row)
            if "code" in slots:
                assert slots["code"] in codes, (where(row), slots["code"])


@each_bank
def test_offers_and_bookings_are_database_rows(db: sqlite3.Connection, bank: str) -> None:
    for row in BANKS[bank]:
        for offer in row["context"]["offers"]:
            if "name" in offer:
                found = db.execute(
                    "SELECT 1 FROM hotels h JOIN hotel_rooms r ON r.hotel_id = h.id WHERE h.name = ? AND h.city = ?"
                    " AND h.district = ? AND h.stars = ? AND h.price = ? AND r.date = ? AND r.rooms > 0",
                    (offer["name"], offer["city"], offer["district"], offer["stars"], offer["price"], offer["date"]),
                ).fetchone()
            else:
                table, column = ("flights", "flight_no") if "airline" in offer else ("trains", "train_no")
                found = db.execute(
                    f"SELECT 1 FROM {table} WHERE {column} = ? AND dep_city = ? AND arr_city = ? AND dep_place = ?"
                    " AND arr_place = ? AND date = ? AND dep_time = ? AND arr_time = ? AND seat_class = ?"
                    " AND price = ? AND seats > 0" + (" AND berth = ?" if table == "trains" else ""),
                    [
                        offer["code"],
                        offer["dep_city"],
                        offer["arr_city"],
                        offer["dep_place"],
                        offer["arr_place"],
                        offer["date"],
                        offer["dep_time"],
                        offer["arr_time"],
                        offer["seat_class"],
                        offer["price"],
                    ]
                    + ([offer["berth"]] if table == "trains" else []),
                ).fetchone()
            assert found, (where(row), offer)
        for booking in row["context"].get("bookings", []):
            assert booking["domain"] in DOMAINS and booking["order_no"].isdigit(), where(row)


def minutes(clock: str) -> int:
    hours, mins = clock.split(":")
    return int(hours) * 60 + int(mins)


def duration(offer: dict[str, Any]) -> int:
    return minutes(offer["arr_time"]) + 1440 * offer.get("arr_days", 0) - minutes(offer["dep_time"])


def resolve(slots: dict[str, Any], offers: list[dict[str, Any]]) -> int | None:
    """The 1-based offer a select act describes, or None when none or several fit."""
    candidates = list(range(len(offers)))
    if "ordinal" in slots:
        candidates = [len(offers) - 1 if slots["ordinal"] == -1 else slots["ordinal"] - 1]
    if slots.get("ref") == "this":
        candidates = candidates if len(offers) == 1 else []
    for key in ("code", "price", "dep_time", "airline", "seat_class", "berth", "district"):
        if key in slots:
            candidates = [i for i in candidates if offers[i].get(key) == slots[key]]
    if "brand" in slots:
        candidates = [i for i in candidates if offers[i]["name"].split("(")[0] == slots["brand"]]
    if "feature" in slots:
        score = {
            "cheapest": lambda o: o["price"],
            "most_expensive": lambda o: -o["price"],
            "earliest": lambda o: minutes(o["dep_time"]),
            "latest": lambda o: -minutes(o["dep_time"]),
            "fastest": duration,
            "best": lambda o: -o["stars"],
        }[slots["feature"]]
        best = min(score(offers[i]) for i in candidates)
        candidates = [i for i in candidates if score(offers[i]) == best]
    return candidates[0] + 1 if len(candidates) == 1 else None


@each_bank
def test_select_targets_are_the_offers_described(bank: str) -> None:
    checked = 0
    for row in BANKS[bank]:
        for act in row["acts"]:
            if act["act"] == "select":
                assert resolve(act["slots"], row["context"]["offers"]) == row["target"], (where(row), act)
                checked += 1
    assert checked >= 30
    assert any(row.get("target", 0) is None for row in BANKS[bank]), "ambiguous selections are part of the bank"
