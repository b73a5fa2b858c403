"""Boundaries that planted bugs slipped past (scripts/mutations_issue18.py): a budget equal to a price, the turns
a "history" feature reads, and which score the weighted fusion weighs by which weight."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest

from ragdial.retrieval import fusion
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.schema import Knowledge, KnowledgeBase, Speaker, Turn
from ragdial.task.db import TravelDB
from ragdial.task.dbgen import generate
from ragdial.understanding.views import view_text

TODAY = dt.date(2026, 12, 1)


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> TravelDB:
    path = tmp_path_factory.mktemp("db") / "travel.sqlite"
    generate(path, seed=7, start=TODAY, days=2)
    return TravelDB(path)


@pytest.mark.parametrize("domain", ["train", "flight"])
def test_a_budget_equal_to_the_price_keeps_the_trip(db, domain):
    query = {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02"}
    rows = db.search(domain, query, limit=50)
    assert rows
    cheapest = rows[0]["price"]
    at_budget = db.search(domain, {**query, "max_price": cheapest}, limit=50)
    assert at_budget and all(r["price"] == cheapest for r in at_budget)
    assert db.search(domain, {**query, "max_price": cheapest - 1}, limit=50) == []


def test_a_budget_equal_to_the_room_price_keeps_the_hotel(db):
    rows = db.search("hotel", {"city": "杭州", "date": "2026-12-01"}, limit=50)
    cheapest = rows[0]["price"]
    at_budget = db.search("hotel", {"city": "杭州", "date": "2026-12-01", "max_price": cheapest}, limit=50)
    assert at_budget and {r["price"] for r in at_budget} == {cheapest}
    assert db.search("hotel", {"city": "杭州", "date": "2026-12-01", "max_price": cheapest - 1}, limit=50) == []


def test_history_view_is_the_turns_before_the_current_user_turn():
    context = [
        Turn(Speaker.USER, "u1"),
        Turn(Speaker.SYSTEM, "s1"),
        Turn(Speaker.USER, "u2"),
        Turn(Speaker.SYSTEM, "s2"),
        Turn(Speaker.USER, "now"),
    ]
    assert view_text(context, "history", window=2) == "u2\ns2"
    assert view_text(context, "history", window=10) == "u1\ns1\nu2\ns2"
    assert view_text(context, "last_user") == "now"
    assert view_text(context, "last_system") == "s2"
    assert view_text(context[:1], "history") == ""
    with pytest.raises(ValueError, match="unknown view 'future'"):
        view_text(context, "future")


FIXTURE = Path(__file__).parent / "fixtures" / "retrieval" / "kb.jsonl"


@pytest.mark.parametrize("weight", [1.0, 0.0, 0.8])
def test_weighted_fusion_weighs_bm25_by_the_lexical_weight(weight):
    kb = KnowledgeBase(Knowledge.from_dict(json.loads(line)) for line in FIXTURE.read_text().splitlines())
    retriever = HybridRetriever(kb, RetrieverConfig(fusion="weighted", encoder="hash", lexical_weight=weight))
    scores = retriever.score([Turn(Speaker.USER, "Is there parking at Sunrise Lodge?")])
    expected = weight * fusion.minmax(scores.bm25) + (1 - weight) * fusion.minmax(scores.dense)
    assert np.allclose(scores.fused, expected, atol=1e-6)
    assert not np.allclose(fusion.minmax(scores.bm25), fusion.minmax(scores.dense))  # the two differ here
