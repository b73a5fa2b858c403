"""Constraints a user states are honoured, end to end through ``TaskBranch`` over a small generated database:
departure windows (下午2点到5点之间 / 晚上8点以后 / 中午前), changing a booking already made (改签), and the
constraints issue 15 found silently ignored (district, nights, rooms, 公务舱, 换下铺, 这周末, 早班机).
Every dialog runs with both act readers; the utterances are our own."""

from __future__ import annotations

import pytest

from ragdial.task.db import TravelDB
from ragdial.task.manager import TaskBranch
from ragdial.task.simulator import read_item
from task_dialogs import talk


@pytest.fixture(params=["learned", "rules"])
def branch(request, travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True), acts=request.param)


def offers(reply: str) -> list[dict]:
    return [item for item in map(read_item, reply.splitlines()) if item]


def seats(db: TravelDB, domain: str, item_id: int) -> int:
    return int(db.get(domain, item_id)["seats"])


# ---------------------------------------------------------------------------------------------- time windows
@pytest.mark.parametrize(
    ("text", "window"),
    [
        ("明天北京到上海的火车，下午2点到5点之间", ("14:00", "17:00")),
        ("明天北京到上海的火车 上午十点到十二点出发", ("10:00", "12:00")),
        ("明天北京到上海的火车，晚上8点以后", ("20:00", "24:00")),
        ("明天北京到上海的火车，中午前", ("00:00", "12:00")),
        ("明天北京到上海的火车，中午以后走", ("12:00", "24:00")),
        ("明天北京到上海的火车 下午四点左右", ("15:00", "17:00")),
    ],
)
def test_a_departure_window_bounds_every_offer(branch, text, window):
    (turn,) = talk(branch, text)
    listed = offers(turn.reply)
    assert listed, turn.reply
    assert all(window[0] <= o["dep_time"] < window[1] for o in listed), turn.reply
    slots = turn.state["slots"]
    assert (slots.get("time_from", "00:00"), slots.get("time_to", "24:00")) == window


def test_a_new_window_replaces_the_one_it_contradicts(branch):
    _first, second, third = talk(
        branch, "明天北京到上海的火车，下午2点到5点之间", "改成晚上8点以后", "算了，还是中午前的吧"
    )
    assert second.state["slots"]["time_from"] == "20:00" and "time_to" not in second.state["slots"]
    assert all(o["dep_time"] >= "20:00" for o in offers(second.reply)) and offers(second.reply)
    assert third.state["slots"].get("time_to") == "12:00" and "time_from" not in third.state["slots"]
    assert all(o["dep_time"] < "12:00" for o in offers(third.reply)) and offers(third.reply)


# ---------------------------------------------------------------------------------------------- 改签
def test_rebooking_a_train_to_another_day_moves_the_seat_in_one_step(branch):
    db = branch.db
    turns = talk(branch, "明天北京到上海的火车 二等座", "第一个", "确定")
    old = turns[-1].booked
    assert old is not None
    old_item = db.booking(old["number"])["item_id"]
    left_before = seats(db, "train", old_item)
    turns = talk(branch, "把刚才那张火车票改签到后天下午", state=turns[-1].state)
    assert "改签" in turns[0].reply
    if "确认改签吗" not in turns[0].reply:  # several fit: the user chooses one, then it is read back
        listed = offers(turns[0].reply)
        assert listed and all(o["day"] == "12月3日" and "12:00" <= o["dep_time"] < "18:00" for o in listed)
        turns += talk(branch, "第一个", state=turns[-1].state)
    read_back = turns[-1]
    assert "确认改签吗" in read_back.reply and f"订单号{old['order_no']}" in read_back.reply
    assert db.booking(old["number"])["status"] == "booked"  # nothing changes before the yes
    assert read_back.state["pending"] and read_back.state["slots"]["seat_class"] == "二等座"  # the class stays
    (done,) = talk(branch, "确定", state=read_back.state)
    new = done.booked
    assert new is not None and new["order_no"] != old["order_no"]
    record = db.booking(old["number"])
    assert (record["status"], record["changed_into"]) == ("changed", new["number"])
    assert seats(db, "train", old_item) == left_before + 1  # the old seat is given back
    record = db.get("train", db.booking(new["number"])["item_id"])
    assert record["date"] == "2026-12-03" and record["seat_class"] == "二等座" and record["dep_time"] >= "12:00"
    (asked,) = talk(branch, "我的订单呢", state=done.state)
    assert f"订单号{new['order_no']}" in asked.reply and "已改签" in asked.reply


def test_rebooking_without_a_new_value_asks_for_it_and_a_no_keeps_the_booking(branch):
    db = branch.db
    turns = talk(branch, "后天上海到杭州的高铁", "第一个", "确认")
    old = turns[-1].booked
    turns = talk(branch, "我想改签", "大后天", state=turns[-1].state)
    assert "要改什么" in turns[0].reply and "日期" in turns[0].reply, turns[0].reply
    assert turns[1].state["slots"]["date"] == "2026-12-04"
    if "确认改签吗" not in turns[1].reply:
        assert offers(turns[1].reply), turns[1].reply
        turns += talk(branch, "第一个", state=turns[-1].state)
    assert "确认改签吗" in turns[-1].reply
    (kept,) = talk(branch, "不了，不改了", state=turns[-1].state)
    assert kept.booked is None and db.booking(old["number"])["status"] == "booked"


def test_no_booking_to_change(branch):
    (turn,) = talk(branch, "帮我把机票改签到周五")
    assert turn.booked is None and not turn.state["bookings"]


# ---------------------------------------------------------------------------------------------- issue 15, class 5
def test_hotel_district_nights_and_rooms_are_kept_to_the_booking(branch):
    turns = talk(branch, "帮我找杭州西湖区的酒店，明天入住，住三晚，要两间", "第一个")
    listed = offers(turns[0].reply)
    assert listed and all("西湖" in o.get("district", "") for o in listed), turns[0].reply
    assert "住3晚" in turns[1].reply and "12月5日退房" in turns[1].reply and "2间" in turns[1].reply
    (booked,) = talk(branch, "确认", state=turns[-1].state)
    assert booked.booked and booked.booked["nights"] == 3 and booked.booked["quantity"] == 2


def test_business_class_said_as_gongwucang(branch):
    (turn,) = talk(branch, "明天北京飞上海的公务舱")
    listed = offers(turn.reply)
    assert listed and all(o["seat_class"] == "商务舱" for o in listed), turn.reply


def test_changing_to_a_lower_berth(branch):
    turns = talk(branch, "明天晚上哈尔滨到北京的卧铺", "换下铺")
    listed = offers(turns[1].reply)
    assert listed and all(o["berth"] == "下铺" for o in listed), turns[1].reply


def test_this_weekend_and_early_flights(branch):
    db = branch.db
    early = db.search("flight", {"date": "2026-12-05", "time_from": "06:00", "time_to": "09:00"}, limit=1)
    assert early, "the seeded database has an early flight on Saturday"
    route = early[0]["dep_city"], early[0]["arr_city"]
    (turn,) = talk(branch, f"这周末{route[0]}飞{route[1]}的早班机")
    listed = offers(turn.reply)
    assert listed and all(o["day"] == "12月5日" and "06:00" <= o["dep_time"] < "09:00" for o in listed)
    # where there is none, the reply says which constraint cannot be met instead of dropping it
    late_only = next(
        (
            (a, b)
            for a, b in (("北京", "上海"), ("上海", "广州"), ("广州", "北京"), ("北京", "成都"), ("上海", "成都"))
            if db.search("flight", {"dep_city": a, "arr_city": b, "date": "2026-12-05"})
            and not db.search(
                "flight", {"dep_city": a, "arr_city": b, "date": "2026-12-05", "time_from": "06:00", "time_to": "09:00"}
            )
        ),
        None,
    )
    if late_only:
        (turn,) = talk(branch, f"这周末{late_only[0]}飞{late_only[1]}的早班机")
        assert "出发时段" in turn.reply and turn.booked is None


def test_rebook_is_all_or_nothing(travel_db_path):
    db = TravelDB(travel_db_path, scratch=True)
    a, b = db.search("train", {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02"}, limit=2)
    number = db.book("train", a, a["date"], "a", quantity=2)
    assert number is not None
    db.conn.execute("UPDATE trains SET seats = 1 WHERE id = ?", (b["id"],))
    left_a = seats(db, "train", a["id"])
    assert db.rebook(number, "train", b, b["date"], "b", quantity=2) is None  # one seat left: refused
    assert db.booking(number)["status"] == "booked" and seats(db, "train", a["id"]) == left_a
    assert seats(db, "train", b["id"]) == 1
    new = db.rebook(number, "train", b, b["date"], "b", quantity=1)
    assert new is not None and (db.booking(number)["status"], db.booking(number)["changed_into"]) == ("changed", new)
    assert (db.booking(new)["status"], db.booking(new)["quantity"]) == ("booked", 1)
    assert seats(db, "train", a["id"]) == left_a + 2 and seats(db, "train", b["id"]) == 0
    assert db.rebook(number, "train", b, b["date"], "b") is None  # the old one is gone: nothing is taken


def test_what_was_said_before_the_kind_of_transport_stays(branch):
    first, second = talk(branch, "明天早上从北京到上海的，预算800", "坐火车吧")
    assert "飞机还是" in first.reply
    assert second.state["domain"] == "train"
    assert {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02", "max_price": 800}.items() <= (
        second.state["slots"].items()
    )
    listed = offers(second.reply)
    assert listed and all(o["price"] <= 800 and "06:00" <= o["dep_time"] < "09:00" for o in listed), second.reply


def test_a_low_price_that_is_listed_chooses_it(branch):
    (listing,) = talk(branch, "明天南京到上海的硬座")
    listed = offers(listing.reply)
    cheapest = min(o["price"] for o in listed)
    assert cheapest < 50  # a price under 50 (once read as no price at all)
    (turn,) = talk(branch, f"订{cheapest}那个", state=listing.state)
    assert "请问确认预订吗" in turn.reply
    assert branch.db.get("train", turn.state["pending"]["id"])["price"] == cheapest
