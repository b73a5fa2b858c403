"""Round-5 and mutation-found failure classes of the bookings side, in our own words (not the testers'): changes of
a booking said plainly (a better class on the same flight, fewer nights, one more ticket, the departure before the
one booked, another hotel, several bookings cancelled in one sentence), compound turns (a trip and a stay in one
turn, three requests said while choosing, a hotel condition said while the hotel waits, the way back keeping the
way out's conditions) and three turns the mutation helper noticed. Every change is read back, done only on a yes,
and the database's seats and rooms move exactly. Small generated database (seed 7, today 2026-12-01, a Tuesday;
dates 12-01 to 12-05), both act readers."""

from __future__ import annotations

import pytest

from ragdial.task.db import TravelDB
from ragdial.task.manager import TaskBranch
from task_dialogs import talk


@pytest.fixture(params=["learned", "rules"])
def branch(request, travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True), acts=request.param)


FLIGHT_BOOKED = ("后天上海飞北京的机票", "第二个", "确认")  # MU8570 12-03 22:25 经济舱, booked
TRAIN_BOOKED = ("明天北京到上海的高铁", "第一个", "确认")  # G5281 12-02 二等座, booked
HOTEL_THREE_NIGHTS = ("后天在北京订个酒店，住三晚", "第一个", "确认")  # 汉庭 北京, 12-03 … 12-05


def _live(state):
    return [b for b in state["bookings"] if b.get("status") != "cancelled"]


def _seats(branch, domain, item_id):
    table = "flights" if domain == "flight" else "trains"
    return branch.db.conn.execute(f"SELECT seats FROM {table} WHERE id = ?", (item_id,)).fetchone()[0]


def _rooms(branch, hotel_id, *days):
    sql = f"SELECT rooms FROM hotel_rooms WHERE hotel_id = ? AND date IN ({','.join('?' * len(days))}) ORDER BY date"
    return [row[0] for row in branch.db.conn.execute(sql, (hotel_id, *days))]


# 1. changes of a booking said plainly, right after it was made
@pytest.mark.parametrize("text", ["能不能给我升到商务舱，还是这班飞机", "我想升个舱", "这班帮我换成公务舱可以吗"])
def test_an_upgrade_is_the_same_flight_in_business_class(branch, text):
    turns = talk(branch, *FLIGHT_BOOKED)
    old = turns[-1].booked
    economy = _seats(branch, "flight", old["item_id"])
    (asked,) = talk(branch, text, state=turns[-1].state)
    assert asked.state["open"] == "confirm_booking" and "商务舱" in asked.reply, asked.reply
    assert "MU8570" in asked.reply.split("改为")[-1], asked.reply  # the same flight
    assert branch.db.booking(old["number"])["status"] == "booked"  # nothing changed before the yes
    new_id = asked.state["pending"]["id"]
    business = _seats(branch, "flight", new_id)
    (done,) = talk(branch, "可以", state=asked.state)
    assert done.booked is not None and "商务舱" in done.booked["details"], done.reply
    assert branch.db.booking(old["number"])["status"] == "changed"
    assert _seats(branch, "flight", old["item_id"]) == economy + 1
    assert _seats(branch, "flight", new_id) == business - 1


@pytest.mark.parametrize("text", ["少住一晚吧", "提前一天退房", "改成只住两晚"])
def test_fewer_nights_keeps_the_hotel_and_gives_the_last_night_back(branch, text):
    turns = talk(branch, *HOTEL_THREE_NIGHTS)
    old = turns[-1].booked
    days = ("2026-12-03", "2026-12-04", "2026-12-05")
    before = _rooms(branch, old["item_id"], *days)
    (asked,) = talk(branch, text, state=turns[-1].state)
    assert asked.state["open"] == "confirm_booking" and "住2晚" in asked.reply, asked.reply
    assert asked.state["pending"]["id"] == old["item_id"] and asked.state["pending"]["date"] == "2026-12-03"
    assert _rooms(branch, old["item_id"], *days) == before
    (done,) = talk(branch, "行", state=asked.state)
    assert done.booked is not None and done.booked["nights"] == 2, done.reply
    assert _rooms(branch, old["item_id"], *days) == [before[0], before[1], before[2] + 1]


def test_more_nights_said_as_a_change_is_no_shorter_stay(branch):
    turns = talk(branch, *HOTEL_THREE_NIGHTS)
    (asked,) = talk(branch, "多住一晚", state=turns[-1].state)
    assert "住4晚" in asked.reply and "住2晚" not in asked.reply, asked.reply


@pytest.mark.parametrize("text", ["同一趟车再帮我多买一张", "再加一张票，一样的车次", "那班车再帮我买一张"])
def test_one_more_ticket_on_the_same_train(branch, text):
    turns = talk(branch, *TRAIN_BOOKED)
    old = turns[-1].booked
    seats = _seats(branch, "train", old["item_id"])
    (asked,) = talk(branch, text, state=turns[-1].state)
    assert asked.state["open"] == "confirm_booking" and "2张" in asked.reply, asked.reply
    assert asked.state["pending"]["id"] == old["item_id"]
    (done,) = talk(branch, "好的", state=asked.state)
    assert done.booked["quantity"] == 2 and done.booked["item_id"] == old["item_id"], done.reply
    assert _seats(branch, "train", old["item_id"]) == seats - 1  # one seat more, the first one kept
    assert [b["order_no"] for b in _live(done.state)] == [done.booked["order_no"]]


def test_an_earlier_flight_keeps_the_hotel(branch):
    turns = talk(branch, *FLIGHT_BOOKED, "后天在北京订个酒店", "第一个", "确认")
    flight, hotel = _live(turns[-1].state)
    (asked,) = talk(branch, "机票换早一点的那班，酒店别动", state=turns[-1].state)
    assert asked.state["open"] == "confirm_booking" and asked.state["pending"]["domain"] == "flight", asked.reply
    new = branch.db.get("flight", asked.state["pending"]["id"])
    assert new["dep_time"] < "22:25" and new["date"] == "2026-12-03", asked.reply
    every = branch.db.search("flight", {"dep_city": "上海", "arr_city": "北京", "date": "2026-12-03"}, limit=100)
    assert new["dep_time"] == max(r["dep_time"] for r in every if r["dep_time"] < "22:25")  # the one just before
    (done,) = talk(branch, "确认", state=asked.state)
    live = _live(done.state)
    assert hotel["order_no"] in [b["order_no"] for b in live] and flight["order_no"] not in [
        b["order_no"] for b in live
    ], done.reply
    assert branch.db.booking(hotel["number"])["status"] == "booked"


@pytest.mark.parametrize("text", ["机票跟酒店一起退掉吧", "两个都取消吧", "订的这些全部取消"])
def test_cancelling_both_bookings_in_one_sentence_cancels_both(branch, text):
    turns = talk(branch, *FLIGHT_BOOKED, "后天在北京订个酒店", "第一个", "确认")
    flight, hotel = _live(turns[-1].state)
    seats = _seats(branch, "flight", flight["item_id"])
    rooms = _rooms(branch, hotel["item_id"], "2026-12-03")
    (asked,) = talk(branch, text, state=turns[-1].state)
    assert asked.state["open"] == "confirm_cancel", asked.reply
    assert f"订单号{flight['order_no']}" in asked.reply and f"订单号{hotel['order_no']}" in asked.reply, asked.reply
    assert len(_live(asked.state)) == 2  # nothing cancelled before the yes
    (done,) = talk(branch, "确认", state=asked.state)
    assert _live(done.state) == [], done.reply
    assert branch.db.booking(flight["number"])["status"] == "cancelled"
    assert branch.db.booking(hotel["number"])["status"] == "cancelled"
    assert _seats(branch, "flight", flight["item_id"]) == seats + 1
    assert _rooms(branch, hotel["item_id"], "2026-12-03") == [rooms[0] + 1]


def test_a_no_to_cancelling_both_keeps_both(branch):
    turns = talk(branch, *FLIGHT_BOOKED, "后天在北京订个酒店", "第一个", "确认", "机票和酒店都退了")
    (kept,) = talk(branch, "算了，不退了", state=turns[-1].state)
    assert len(_live(kept.state)) == 2, kept.reply


@pytest.mark.parametrize("text", ["换一家吧", "这家不太行，换个酒店"])
def test_another_hotel_alone_lists_others_and_swaps_in_one_change(branch, text):
    turns = talk(branch, *HOTEL_THREE_NIGHTS)
    old = turns[-1].booked
    (listed,) = talk(branch, text, state=turns[-1].state)
    assert listed.state["open"] in ("choose_offer", "confirm_booking"), listed.reply
    offered = [line for line in listed.reply.splitlines() if line[:1].isdigit()]
    assert offered and not any("汉庭" in line for line in offered), listed.reply
    assert branch.db.booking(old["number"])["status"] == "booked"
    turns = (
        talk(branch, "第一个", "确认", state=listed.state)
        if listed.state["open"] == "choose_offer"
        else [*talk(branch, "确认", state=listed.state)]
    )
    done = turns[-1]
    assert done.booked is not None and done.booked["item_id"] != old["item_id"], done.reply
    assert done.booked["nights"] == 3 and done.booked["date"] == "2026-12-03"
    assert branch.db.booking(old["number"])["status"] == "changed"
    assert [b["order_no"] for b in _live(done.state)] == [done.booked["order_no"]]


# 2. compound turns: each request queued on its own, none lost
def test_three_requests_said_while_choosing_are_served_in_turn(branch):
    turns = talk(branch, "后天北京到上海的机票", "就第一个，另外上海的酒店也帮我订，还有大后天回北京的火车票", "确认")
    assert turns[-1].booked["domain"] == "flight", turns[-1].reply
    assert turns[-1].state["domain"] == "hotel" and turns[-1].state["slots"]["city"] == "上海", turns[-1].reply
    turns = talk(branch, "第一个", "确认", state=turns[-1].state)
    assert turns[-1].booked["domain"] == "hotel", turns[-1].reply
    slots = turns[-1].state["slots"]
    assert turns[-1].state["domain"] == "train", turns[-1].reply
    assert (slots["dep_city"], slots["arr_city"], slots["date"]) == ("上海", "北京", "2026-12-04")


@pytest.mark.parametrize(
    "text",
    ["明天坐火车从重庆去西安，到了在雁塔区住一晚", "明天重庆到西安的火车，然后在西安雁塔区订一晚酒店"],
)
def test_a_trip_and_a_stay_in_the_first_turn_books_the_trip_then_offers_the_stay(branch, text):
    (first,) = talk(branch, text)
    assert first.state["domain"] == "train" and first.state["open"] == "choose_offer", first.reply
    turns = talk(branch, "第一个", "确认", state=first.state)
    booked = turns[-1].booked
    assert booked is not None and booked["domain"] == "train", turns[-1].reply
    state = turns[-1].state
    assert state["domain"] == "hotel" and state["slots"]["city"] == "西安", turns[-1].reply
    assert state["slots"].get("district") == "雁塔" and state["slots"]["date"] == booked["arrival_date"]


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [("酒店要四星以上的", "min_stars", 4), ("四星及以上", "min_stars", 4), ("酒店不要二星的", "not_stars", [2])],
)
def test_a_hotel_condition_said_while_the_hotel_waits_goes_to_the_hotel(branch, text, key, value):
    turns = talk(branch, "后天北京坐高铁去上海，再订个上海的酒店住两晚", text)
    assert turns[-1].state["domain"] == "train" and key not in turns[-1].state["slots"], turns[-1].reply
    turns = talk(branch, "第一个", "确认", state=turns[-1].state)
    assert turns[-1].booked["domain"] == "train", turns[-1].reply
    slots = turns[-1].state["slots"]
    assert turns[-1].state["domain"] == "hotel" and slots.get(key) == value and slots["nights"] == 2


@pytest.mark.parametrize("way", ["确认。那大后天回来的呢", "确认，返程要大后天的", "好，订吧。大后天再回北京"])
def test_the_way_back_keeps_the_way_outs_class_and_kind(branch, way):
    turns = talk(branch, "明天下午坐高铁二等座从北京去上海", "第一个", way)
    slots = turns[-1].state["slots"]
    assert (slots["dep_city"], slots["arr_city"], slots["date"]) == ("上海", "北京", "2026-12-04"), turns[-1].reply
    assert slots.get("train_kinds") == ["G"] and slots.get("seat_class") == "二等座", turns[-1].reply
    assert "K" not in "".join(line.split(" ")[0] for line in turns[-1].reply.splitlines() if line[:1].isdigit())


# 3. turns the mutation helper noticed
def test_the_second_with_the_origin_said_again_reads_the_second_back(branch):
    turns = talk(branch, "明天北京到上海的机票", "要第二个，还是从北京走")
    offers = turns[0].state["offers"]
    assert turns[-1].state["open"] == "confirm_booking", turns[-1].reply
    assert turns[-1].state["pending"]["id"] == offers[1]


def test_cancel_a_flight_switch_to_train_and_change_the_day_in_one_turn(branch):
    turns = talk(branch, "明天北京到上海的机票", "第一个", "确认", "这张机票帮我退掉，我改坐火车，另外日期换成后天")
    assert turns[-1].state["open"] == "confirm_cancel" and "没有找到" not in turns[-1].reply, turns[-1].reply
    (done,) = talk(branch, "好的", state=turns[-1].state)
    assert _live(done.state) == [], done.reply
    slots = done.state["slots"]
    assert done.state["domain"] == "train", done.reply
    assert (slots["dep_city"], slots["arr_city"], slots["date"]) == ("北京", "上海", "2026-12-03")
    assert set(slots) <= {"dep_city", "arr_city", "date", "period", "time_from", "time_to"}, slots


def test_cancel_my_train_in_english_picks_the_train(branch):
    turns = talk(
        branch,
        "a flight from Beijing to Shanghai tomorrow",
        "the first one",
        "yes",
        "and a train from Shanghai to Beijing the day after tomorrow",
        "the first one",
        "yes",
        "please cancel my train ticket",
    )
    assert turns[-1].state["open"] == "confirm_cancel", turns[-1].reply
    train = next(b for b in _live(turns[-1].state) if b["domain"] == "train")
    assert turns[-1].state["cancel"]["order_no"] == train["order_no"], turns[-1].reply


def test_a_later_departure_on_the_days_last_one_says_so_and_asks(branch):
    turns = talk(branch, *FLIGHT_BOOKED)  # MU8570 22:25 is the day's last flight
    (asked,) = talk(branch, "机票改晚一班", state=turns[-1].state)
    assert "最晚" in asked.reply and asked.state["open"] == "change", asked.reply
    assert asked.state["pending"] is None and len(_live(asked.state)) == 1


# 5. fewer turns: a place and the day missing are asked in one question
@pytest.mark.parametrize(
    ("first", "answer", "domain"),
    [("去上海的火车，两个人", "北京，后天", "train"), ("帮我订个酒店", "北京，后天入住", "hotel")],
)
def test_a_place_and_the_day_missing_are_asked_together(branch, first, answer, domain):
    (asked,) = talk(branch, first)
    assert "哪个城市" in asked.reply and "哪天" in asked.reply, asked.reply
    (listed,) = talk(branch, answer, state=asked.state)
    assert listed.state["domain"] == domain, listed.reply
    assert listed.state["open"] in ("choose_offer", "confirm_booking"), listed.reply
    assert listed.state["slots"]["date"] == "2026-12-03"


@pytest.mark.parametrize(
    ("text", "code", "cabin"),
    [("把订单1改签成商务舱", "MU8570", "商务舱"), ("订单1改签到早一班", None, "经济舱")],
)
def test_a_change_naming_the_order_reads_the_new_value_from_the_turn(branch, text, code, cabin):
    turns = talk(branch, *FLIGHT_BOOKED)
    (asked,) = talk(branch, text, state=turns[-1].state)
    assert asked.state["open"] == "confirm_booking", asked.reply
    new = branch.db.get("flight", asked.state["pending"]["id"])
    assert new["seat_class"] == cabin, asked.reply
    if code:  # a class alone: the same flight
        assert new["flight_no"] == code
    else:  # the one just before 22:25
        assert new["dep_time"] < "22:25" and new["date"] == "2026-12-03", asked.reply


def test_a_change_said_anew_while_which_booking_is_asked_answers_it(branch):
    turns = talk(branch, *TRAIN_BOOKED, "在北京订个酒店，后天入住，住三晚", "第一个", "确认", "提前一天")
    assert turns[-1].state["open"] == "choose_change", turns[-1].reply  # a train and a hotel could be meant
    (asked,) = talk(branch, "少住一晚吧", state=turns[-1].state)
    assert asked.state["open"] == "confirm_booking" and "住2晚" in asked.reply, asked.reply
    assert asked.state["pending"]["date"] == "2026-12-03"  # (the day said before is not applied)
