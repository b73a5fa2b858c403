"""What a travel turn refers to and the numbers it carries, on hand-written turns against the seeded gazetteer
(``task_dialogs``): a listed hotel chosen by its district or by a brand's short form (锦江 the district is not 锦江之星
the brand), a family's head count, a budget said as "800元以内" / "500块以下" / "under 500" or as a bare answer to
the budget question, an English price question with a bound, cancelling while an alternative is offered, and a
change naming the order number of an earlier booking. Written from surviving mutants of ``ragdial.task``
(docs/testing.md, sessions 6-7); public behaviour only (``understand`` and ``slots.parse``)."""

from __future__ import annotations

import pytest

from ragdial.task.acts import Context, understand
from ragdial.task.slots import parse
from task_dialogs import FLIGHT_CHOICE, TODAY, travel_gazetteer


@pytest.fixture(scope="module")
def gaz(tmp_path_factory):
    return travel_gazetteer(tmp_path_factory.mktemp("references"), seed=0, days=30)


def acts(gaz, text, **context):
    return [(a.act, a.slots) for a in understand(text, Context(**context), gaz, TODAY)]


HOTEL_CHOICE = {
    "domain": "hotel",
    "open_question": "choose_offer",
    "state": {"domain": "hotel", "city": "成都", "date": "2026-12-02", "nights": 1},
    "offers": [
        {"name": "桔子水晶酒店(成都武侯店)", "brand": "桔子水晶酒店", "district": "武侯", "price": 420, "stars": 4},
        {"name": "锦江之星(成都锦江店)", "brand": "锦江之星", "district": "锦江", "price": 190, "stars": 2},
    ],
}


def test_a_listed_hotel_chosen_by_its_district_or_its_brand(gaz):
    assert acts(gaz, "武侯那家", **HOTEL_CHOICE) == [("select", {"district": "武侯"})]
    assert acts(gaz, "订武侯区那个", **HOTEL_CHOICE) == [("select", {"district": "武侯"})]
    # 锦江 alone is the district; 锦江之星 is the brand; 桔子 is short for 桔子水晶酒店
    assert acts(gaz, "锦江那家", **HOTEL_CHOICE) == [("select", {"district": "锦江"})]
    assert acts(gaz, "锦江之星那家", **HOTEL_CHOICE) == [("select", {"brand": "锦江之星"})]
    assert acts(gaz, "桔子那家", **HOTEL_CHOICE) == [("select", {"brand": "桔子水晶酒店"})]


def test_a_family_is_its_head_count(gaz):
    (act,) = acts(gaz, "我们一家三口，明天从北京去上海的火车票")
    assert act == (
        "inform",
        {"passengers": 3, "domain": "train", "dep_city": "北京", "arr_city": "上海", "date": "2026-12-02"},
    )
    assert acts(gaz, "一家四口明天北京飞上海")[0][1]["passengers"] == 4


@pytest.mark.parametrize(
    ("text", "price"),
    [("明天北京飞上海，800元以内", 800), ("上海的酒店500块以下", 500), ("八百块以内的", 800), ("不超过800元", 800)],
)
def test_a_budget_said_as_a_bound_after_the_number(gaz, text, price):
    assert parse(text, gaz, TODAY).max_price == price
    assert [slots.get("max_price") for act, slots in acts(gaz, text) if act == "inform"] == [price]


def test_a_bare_number_answers_the_budget_question_and_english_bounds_are_read(gaz):
    asked = {"domain": "flight", "open_question": "max_price", "state": FLIGHT_CHOICE["state"]}
    for text in ("800块吧", "800", "八百"):
        assert acts(gaz, text, **asked) == [("inform", {"max_price": 800})], text
    assert acts(gaz, "anything below 900?", **asked) == [("inform", {"max_price": 900})]
    # with flights listed: a bound in an English price question is a new condition, not a question about the price
    assert acts(gaz, "how much are the ones under 800?", **FLIGHT_CHOICE) == [("inform", {"max_price": 800})]
    assert acts(gaz, "how much is it", **FLIGHT_CHOICE) == [("request", {"price": "?"})]


BOOKED_FLIGHT = {"order_no": 10001, "domain": "flight", "status": "booked"}


def test_while_an_alternative_is_offered_only_a_word_for_the_booking_made_cancels_it(gaz):
    offered = {
        "domain": "flight",
        "open_question": "offer_alternative",
        "state": FLIGHT_CHOICE["state"],
        "bookings": [BOOKED_FLIGHT],
        "suggestion": {"date": "2026-12-03"},
    }
    # "取消这个航班" declines the flight offered instead; the booking made earlier stays
    assert "cancel_booking" not in [act for act, _ in acts(gaz, "算了，取消这个航班吧", **offered)]
    assert acts(gaz, "把刚才订的取消了", **offered) == [("cancel_booking", {})]
    assert acts(gaz, "取消订单10001", **offered) == [("cancel_booking", {"order_no": 10001})]


def test_a_change_naming_an_order_number_changes_that_booking(gaz):
    # the hotel was booked first, the flight last: the order number, not the last booking, says what changes
    hotel_then_flight = {
        "domain": "flight",
        "open_question": "anything_else",
        "bookings": [
            {"order_no": 10001, "domain": "hotel", "status": "booked"},
            {"order_no": 10002, "domain": "flight", "status": "booked"},
        ],
    }
    assert acts(gaz, "把订单10001改成住3晚", **hotel_then_flight) == [
        ("change_booking", {"order_no": 10001, "nights": 3})
    ]
    assert acts(gaz, "订单10002改签到后天，改成商务舱", **hotel_then_flight) == [
        ("change_booking", {"order_no": 10002, "date": "2026-12-03", "seat_class": "商务舱"})
    ]


def test_first_class_said_in_english_is_the_flights_or_the_trains_first_class(gaz):
    flight = acts(gaz, "I need a first class flight from Beijing to Shanghai tomorrow")
    train = acts(gaz, "a first class train seat from Beijing to Shanghai tomorrow")
    assert (flight[0][1]["seat_class"], train[0][1]["seat_class"]) == ("头等舱", "一等座")


def test_a_change_said_as_a_shift_of_days_moves_the_booked_day(gaz):
    booked = {
        "domain": "flight",
        "open_question": "anything_else",
        "bookings": [{"order_no": 1, "domain": "flight", "status": "booked", "date": "2026-12-02"}],
        "state": {"domain": "flight", "date": "2026-12-02"},
    }
    assert acts(gaz, "改签一下，改成推迟两天", **booked) == [("change_booking", {"date": "2026-12-04"})]
    assert acts(gaz, "机票改签，改成提前一天", **booked) == [
        ("change_booking", {"domain": "flight", "date": "2026-12-01"})
    ]
