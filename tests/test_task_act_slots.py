"""Slots the task act parser reads from hand-written turns (from task mutation survivors, seed 20): English hotel
numbers, a date moved by a relative day, a question about rooms left."""

from __future__ import annotations

import pytest

from ragdial.task.acts import Context, understand
from task_dialogs import TODAY, travel_gazetteer

HOTEL = {
    "domain": "hotel",
    "open_question": "ask_rooms",
    "state": {"domain": "hotel", "city": "成都", "date": "2026-12-05"},
}
FLIGHT = {
    "domain": "flight",
    "open_question": "choose_offer",
    "state": {"domain": "flight", "dep_city": "北京", "arr_city": "上海", "date": "2026-12-05"},
}


@pytest.fixture(scope="module")
def gaz(tmp_path_factory):
    return travel_gazetteer(tmp_path_factory.mktemp("act-slots"), seed=0, days=30)


def acts(gaz, text, context):
    return [(a.act, a.slots) for a in understand(text, Context(**context), gaz, TODAY)]


def test_english_nights_rooms_and_guests(gaz):
    assert acts(gaz, "I need a hotel in Shanghai for two nights, 3 rooms, four guests", {}) == [
        ("inform", {"domain": "hotel", "city": "上海", "nights": 2, "rooms": 3, "guests": 4})
    ]
    assert acts(gaz, "book 2 rooms please", HOTEL) == [("inform", {"rooms": 2})]


def test_a_date_moved_one_day_later_or_earlier(gaz):
    assert acts(gaz, "推迟一天", FLIGHT) == [("modify", {"date": "2026-12-06"})]
    assert acts(gaz, "提前一天", FLIGHT) == [("modify", {"date": "2026-12-04"})]


def test_asking_for_rooms_left(gaz):
    assert acts(gaz, "还剩几间房", HOTEL) == [("request", {"rooms_left": "?"})]
