"""Round-6 failure classes on the reading side, in our own words (not the testers'): plain changes of a booking
read as acts by the reader (the manager only fills in what the database knows), changes said in English, a day of
the month after a weekday, airports in the role their city gives them, refused values and bounds, counts said as
people and rooms shared, a day of something else than the trip, a trip and a stay in one turn. Small generated
database (seed 7, today 2026-12-01, a Tuesday), both act readers for the dialogs."""

from __future__ import annotations

import pytest

from ragdial.task import replies as R
from ragdial.task.acts import Act, understand
from ragdial.task.db import TravelDB
from ragdial.task.manager import TaskBranch
from ragdial.task.plain_changes import resolve_changes
from task_dialogs import TODAY, talk


@pytest.fixture(scope="module")
def gaz(travel_db_path):
    return TravelDB(travel_db_path).gazetteer()


@pytest.fixture(params=["learned", "rules"])
def branch(request, travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True), acts=request.param)


def read(gaz, text, context=None):
    return [(a.act, a.slots) for a in understand(text, context, gaz, TODAY)]


def _booked(domain, order_no=1, nights=None, quantity=1):
    booking = {"domain": domain, "order_no": order_no, "item_id": 1, "date": "2026-12-03", "quantity": quantity}
    booking |= {"status": "booked", "details": "", "nights": nights} if nights else {"status": "booked", "details": ""}
    return {"domain": domain, "open_question": "anything_else", "state": {}, "bookings": [booking]}


HOTEL_3 = _booked("hotel", 4, nights=3)
TRAIN = _booked("train", 2)
FLIGHT_AND_HOTEL = {
    **_booked("flight", 1),
    "bookings": [_booked("flight", 1)["bookings"][0], _booked("hotel", 2, nights=2)["bookings"][0]],
}
CHOOSING_FROM_BEIJING = {
    "domain": "flight",
    "open_question": "choose_offer",
    "state": {"domain": "flight", "dep_city": "北京", "arr_city": "成都", "date": "2026-12-03"},
    "offers": [{"code": "CA1001", "dep_time": "09:00", "price": 900, "seat_class": "经济舱"}],
}
TRAINS_LISTED = {
    "domain": "train",
    "open_question": "choose_offer",
    "state": {"domain": "train", "dep_city": "上海", "arr_city": "长沙", "date": "2026-12-03"},
    "offers": [
        {"code": "G1040", "dep_time": "14:00", "price": 469, "seat_class": "二等座"},
        {"code": "G2851", "dep_time": "14:30", "price": 469, "seat_class": "二等座"},
    ],
}


# 1. plain changes are the reader's acts: which booking and what changes
@pytest.mark.parametrize(
    ("text", "context", "slots"),
    [
        ("住的时间少一晚吧，少住一晚", HOTEL_3, {"domain": "hotel", "order_no": 4, "nights": 2}),
        ("please cut the stay to two nights", HOTEL_3, {"domain": "hotel", "order_no": 4, "nights": 2}),
        ("we'll check out a day early", HOTEL_3, {"domain": "hotel", "order_no": 4, "nights": 2}),
        ("帮我升个舱", TRAIN, {"domain": "train", "order_no": 2, "same_trip": True, "upgrade": True}),
        ("这趟车再帮我多买两张", TRAIN, {"domain": "train", "order_no": 2, "passengers": 3, "same_trip": True}),
        (
            "I need one more ticket on the same train",
            TRAIN,
            {"domain": "train", "order_no": 2, "passengers": 2, "same_trip": True},
        ),
        ("火车帮我改早一班", TRAIN, {"domain": "train", "order_no": 2, "adjacent": "earlier"}),
        ("could you move me to a later train", TRAIN, {"domain": "train", "order_no": 2, "adjacent": "later"}),
        ("这家一般，换一家吧", HOTEL_3, {"domain": "hotel", "order_no": 4, "other_hotel": True}),
        ("Change it to the evening train.", TRAIN, {"domain": "train", "period": "晚上"}),
    ],
)
def test_a_plain_change_is_read_as_a_change_of_that_booking(gaz, text, context, slots):
    assert read(gaz, text, context) == [("change_booking", slots)]


def test_an_earlier_train_around_noon_is_a_change_to_that_window(gaz):
    ((act, slots),) = read(gaz, "move it to an earlier train around noon", TRAIN)
    assert act == "change_booking" and slots.get("period") == "中午" and slots.get("domain") == "train"
    assert "adjacent" not in slots


@pytest.mark.parametrize("text", ["change it", "Can you change my booking?", "我想改一下", "能改吗"])
def test_a_change_without_what_changes_is_a_change_with_no_value(gaz, text):
    assert read(gaz, text, TRAIN) == [("change_booking", {})]


def test_cancelling_both_is_one_act_naming_both(gaz):
    assert read(gaz, "机票酒店统统退掉", FLIGHT_AND_HOTEL) == [("cancel_booking", {"orders": [1, 2]})]
    assert read(gaz, "cancel both bookings please", FLIGHT_AND_HOTEL) == [("cancel_booking", {"orders": [1, 2]})]


def test_no_change_is_read_without_a_booking(gaz):
    assert [a for a, _s in read(gaz, "少住一晚吧")] != ["change_booking"]
    assert read(gaz, "change it", {"domain": "train", "open_question": "anything_else"}) != [("change_booking", {})]


def test_the_manager_fills_in_only_what_the_database_knows(travel_db_path):
    db = TravelDB(travel_db_path)
    rows = db.search(
        "train", {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02", "seat_class": "二等座"}, 100
    )
    rows = sorted(rows, key=lambda r: r["dep_time"])
    assert len(rows) >= 2
    booked = rows[-1]
    state = {"bookings": [{"domain": "train", "order_no": 3, "item_id": booked["id"], "status": "booked"}]}
    (earlier,) = resolve_changes(
        state, [Act("change_booking", {"domain": "train", "order_no": 3, "adjacent": "earlier"})], db
    )
    assert earlier.slots == {"domain": "train", "order_no": 3, "code": R.code_of(rows[-2])}
    (later,) = resolve_changes(
        state, [Act("change_booking", {"domain": "train", "order_no": 3, "adjacent": "later"})], db
    )
    assert later.slots == {"domain": "train", "order_no": 3, "none_left": "later"}
    (up,) = resolve_changes(state, [Act("change_booking", {"domain": "train", "order_no": 3, "upgrade": True})], db)
    assert up.slots == {"domain": "train", "order_no": 3, "code": R.code_of(booked), "seat_class": "一等座"}
    (more,) = resolve_changes(
        state, [Act("change_booking", {"domain": "train", "order_no": 3, "passengers": 2, "same_trip": True})], db
    )
    assert more.slots == {
        "domain": "train",
        "order_no": 3,
        "passengers": 2,
        "code": R.code_of(booked),
        "seat_class": "二等座",
    }


# 2. changes said in English, through the whole dialog
def test_cutting_the_stay_in_english_reads_back_fewer_nights_and_books_them(branch):
    turns = talk(branch, "I need a hotel in Beijing from December 2 for three nights", "the first one", "yes")
    assert turns[-1].booked is not None and turns[-1].booked["nights"] == 3, turns[-1].reply
    (asked,) = talk(branch, "please cut the stay to two nights", state=turns[-1].state)
    assert asked.state["open"] == "confirm_booking" and "2 night(s)" in asked.reply.split("for:")[-1], asked.reply
    (done,) = talk(branch, "yes", state=asked.state)
    assert done.booked is not None and done.booked["nights"] == 2, done.reply


def test_one_more_ticket_in_english_is_the_same_train_for_two(branch):
    turns = talk(branch, "a train from Beijing to Shanghai tomorrow", "the first one", "yes")
    code = turns[-1].booked["details"].split(" ")[0]
    (asked,) = talk(branch, "add one more ticket on the same train for my wife", state=turns[-1].state)
    assert asked.state["open"] == "confirm_booking", asked.reply
    assert "2 ticket(s)" in asked.reply and code in asked.reply.split("for:")[-1], asked.reply


def test_change_it_alone_asks_what_to_change(branch):
    turns = talk(branch, "a train from Beijing to Shanghai tomorrow", "the first one", "yes")
    (asked,) = talk(branch, "change it", state=turns[-1].state)
    assert asked.acts == ["change_booking"] and "Which city" not in asked.reply, asked.reply
    assert "change" in asked.reply.lower() and "date" in asked.reply, asked.reply  # what to change is asked


# 3. a day of the month after a weekday
@pytest.mark.parametrize(
    ("text", "date"),
    [
        ("a flight from Beijing to Shanghai on Monday the 14th", "2026-12-14"),
        ("hotel in Beijing from Friday the 18th", "2026-12-18"),
        ("train from Beijing to Shanghai on Thursday 3rd", "2026-12-03"),
    ],
)
def test_a_weekday_with_a_day_of_the_month_is_that_day(gaz, text, date):
    (inform,) = read(gaz, text)
    assert inform[1]["date"] == date


def test_the_second_one_is_no_day(gaz):
    assert read(gaz, "the 2nd one", CHOOSING_FROM_BEIJING) == [("select", {"ordinal": 2})]


# 4. airports and stations in their roles, refused ones replaced
@pytest.mark.parametrize(
    ("text", "context", "expected"),
    [
        ("下周三北京飞成都，大兴太远不要，首都机场走", None, {"dep_place": "首都机场"}),
        ("下周三北京飞成都，只要首都机场的", None, {"dep_place": "首都机场"}),
        ("只要首都机场起飞的", CHOOSING_FROM_BEIJING, {"dep_place": "首都机场"}),
        ("别从大兴走", CHOOSING_FROM_BEIJING, {"dep_place": "首都机场"}),
        ("要落双流那个，天府太远了", CHOOSING_FROM_BEIJING, {"arr_place": "双流机场"}),
    ],
)
def test_an_airport_takes_the_role_of_its_city(gaz, text, context, expected):
    informs = [s for a, s in read(gaz, text, context) if a in ("inform", "modify")]
    assert len(informs) == 1
    assert {k: informs[0].get(k) for k in ("dep_place", "arr_place") if k in informs[0]} == expected


def test_a_refused_station_is_the_citys_other_one(gaz):
    (inform,) = read(gaz, "明天武汉坐高铁去长沙，汉口站不要")
    assert inform[1]["dep_place"] == "武汉站"


# 5. refused values and bounds
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("硬卧，中铺上铺都不要", {"berth": ["下铺"]}),
        ("三星的不要，四星太贵了也不要", {"not_stars": [3, 4]}),
        ("八点以前起飞的不要，晚上七点以后的也不要", {"time_from": "08:00", "time_to": "19:00"}),
        ("三点以前发车的都不要", {"time_from": "15:00"}),
        ("晚上九点前要到", {"arr_by": "21:00"}),
    ],
)
def test_refused_values_and_bounds_are_kept(gaz, text, expected):
    (inform,) = read(gaz, text, CHOOSING_FROM_BEIJING if "起飞" in text else None)
    assert {k: inform[1].get(k) for k in expected} == expected
    assert "time_to" not in expected or "arr_by" not in inform[1]
    if "arr_by" in expected:
        assert "time_to" not in inform[1]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Me and my wife want to fly from Beijing to Chengdu, nothing before 10 in the morning",
            {"passengers": 2, "time_from": "10:00"},
        ),
        ("a flight from Beijing to Chengdu, no flights after 6 pm", {"time_to": "18:00"}),
        ("a hotel in Kunming in Panlong district, the highest-rated one", {"district": "盘龙"}),
        (
            "two first-class tickets from Beijing to Hangzhou, the latest train",
            {"seat_class": "一等座", "passengers": 2},
        ),
    ],
)
def test_english_constraints_said_with_the_request_are_kept(gaz, text, expected):
    acts = read(gaz, text)
    assert {k: acts[0][1].get(k) for k in expected} == expected
    if "highest" in text or "latest" in text:
        assert acts[-1] == ("select", {"feature": "best" if "highest" in text else "latest"})


# 6. counts said as people, rooms shared, named days
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我们一家仨，后天从深圳飞北京", {"passengers": 3}),
        ("我们一家四口明天去上海坐高铁", {"passengers": 4}),
        ("我们八个人，两人一间，在北京住两晚", {"guests": 8, "rooms": 4, "nights": 2}),
        ("在北京订酒店，五个人住，每间住两个人", {"guests": 5, "rooms": 3}),
        ("冬至那天从上海飞北京", {"date": "2026-12-22"}),
    ],
)
def test_counts_and_days_of_a_first_turn(gaz, text, expected):
    informs = [s for a, s in read(gaz, text) if a == "inform"]
    assert {k: informs[-1].get(k) for k in expected} == expected


# 7. a day of something else than the trip
@pytest.mark.parametrize("text", ["我姐18号结婚，我们得提前两天过去", "老公25号生日，要早点回来", "我生日是10号"])
def test_a_day_of_an_event_does_not_move_the_trip_nor_choose(gaz, text):
    assert read(gaz, text, TRAINS_LISTED) == [("out_of_scope", {})]


def test_a_birthday_said_with_the_request_keeps_the_travel_day(gaz):
    acts = read(gaz, "下周五从北京坐高铁去上海，我生日是12号")
    assert acts[0][1]["date"] == "2026-12-11" and acts[1] == ("out_of_scope", {})


def test_the_day_refused_and_the_day_said_keep_the_one_said(gaz):
    assert read(gaz, "不是20号走！我们16号走", TRAINS_LISTED) == [("modify", {"date": "2026-12-16"})]


def test_an_event_day_aside_keeps_the_list(branch):
    (listed,) = talk(branch, "后天上海去长沙的高铁")
    (aside,) = talk(branch, "我妹妹12号有比赛，我们得提前几天过去", state=listed.state)
    assert aside.state["slots"]["date"] == listed.state["slots"]["date"] == "2026-12-03", aside.reply
    assert aside.state["open"] == listed.state["open"] and aside.state.get("pending") is None


# 8. a trip and a stay in one turn are two requests
def test_a_stay_then_a_train_said_in_one_turn_are_two_requests(gaz):
    acts = read(gaz, "17号在长沙住两晚，四星，一间；19号退房后从长沙坐高铁去广州")
    assert [a for a, _s in acts] == ["inform", "inform"]
    hotel, train = acts[0][1], acts[1][1]
    assert hotel == {"domain": "hotel", "city": "长沙", "date": "2026-12-17", "nights": 2, "stars": 4} | {
        k: hotel[k] for k in hotel if k == "rooms"
    }
    assert train["domain"] == "train" and train["dep_city"] == "长沙" and train["arr_city"] == "广州"
    assert train["date"] == "2026-12-19" and "check_out" not in train


def test_a_stay_after_a_trip_keeps_its_nights(gaz):
    acts = read(gaz, "周五从北京坐卧铺去上海，软卧；到了在上海住三晚")
    assert [a for a, _s in acts] == ["inform", "inform"]
    assert acts[1][1] == {"domain": "hotel", "city": "上海", "nights": 3}
    assert "nights" not in acts[0][1] and acts[0][1]["arr_city"] == "上海"


TWO_BOOKED = {
    "domain": "hotel",
    "open_question": "anything_else",
    "state": {},
    "bookings": [
        {"domain": "train", "order_no": 5, "item_id": 1, "date": "2026-12-05", "quantity": 1, "status": "booked"},
        {"domain": "hotel", "order_no": 6, "item_id": 2, "date": "2026-12-03", "nights": 3, "status": "booked"},
    ],
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Please change booking 6 to 2 nights", {"order_no": 6, "nights": 2}),
        ("Could you change booking 5 to the G5281?", {"order_no": 5, "code": "G5281"}),
        ("It's booking 5, the Shanghai train. Move it to the evening one.", {"order_no": 5, "period": "晚上"}),
        ("把订单6换成鼓楼区的四星", {"order_no": 6, "stars": 4, "district": "鼓楼"}),
    ],
)
def test_a_change_naming_its_order_carries_the_new_values(gaz, text, expected):
    ((act, slots),) = read(gaz, text, TWO_BOOKED)
    assert act == "change_booking" and {k: slots.get(k) for k in expected} == expected


@pytest.mark.parametrize("text", ["后天上海飞北京，帮我挑便宜的", "后天上海飞北京，给我挑个便宜的吧"])
def test_pick_a_cheap_one_up_front_is_the_cheapest(gaz, text):
    assert read(gaz, text)[-1] == ("select", {"feature": "cheapest"})


# 9. names as English speakers say them, and an alternative taken by naming it
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'd like a Crowne Plaza in Beijing from December 3", {"domain": "hotel", "brand": "皇冠假日酒店"}),
        ("a flight from Beijing Daxing to Shanghai tomorrow", {"dep_place": "大兴机场"}),
        ("fly from Beijing Capital to Shanghai tomorrow", {"dep_place": "首都机场"}),
        ("a train from Beijing West to Shanghai tomorrow", {"dep_place": "北京西站"}),
        ("a flight from Beijing to Shanghai tomorrow, landing at Hongqiao", {"arr_place": "虹桥机场"}),
    ],
)
def test_english_names_of_hotels_airports_and_stations(gaz, text, expected):
    (inform,) = read(gaz, text)
    assert {k: inform[1].get(k) for k in expected} == expected


def test_naming_the_alternative_offered_takes_it(gaz):
    context = {
        "domain": "hotel",
        "open_question": "offer_alternative",
        "state": {"city": "北京", "date": "2026-12-03", "brand": "希尔顿酒店"},
        "suggestion": {"brand": "亚朵酒店"},
    }
    assert read(gaz, "亚朵的也可以", context) == [("confirm", {})]
    assert read(gaz, "汉庭的也可以", context) == [("modify", {"brand": "汉庭酒店"})]


LANDING_TIANFU = {
    "domain": "flight",
    "open_question": "choose_offer",
    "state": {"domain": "flight", "dep_city": "深圳", "arr_city": "成都", "date": "2026-12-04"},
    "offers": [
        {"code": "3U1001", "dep_time": "10:00", "arr_place": "天府机场", "price": 900, "seat_class": "经济舱"},
        {"code": "CZ1002", "dep_time": "19:00", "arr_place": "天府机场", "price": 800, "seat_class": "经济舱"},
    ],
}


def test_airports_complained_about_are_not_wanted(gaz):
    assert read(gaz, "怎么都是落天府的啊，有没有上午落双流的", LANDING_TIANFU) == [
        ("inform", {"arr_place": "双流机场", "period": "上午", "not_arr_place": ["天府机场"]})
    ]  # (the airport complained about is ruled out as data too: not_arr_place)


@pytest.mark.parametrize("text", ["好吧天府就天府，第二个", "从深圳走，到成都天府机场，CZ1002"])
def test_the_arrival_airport_said_again_is_no_new_origin(gaz, text):
    acts = read(gaz, text, LANDING_TIANFU)
    assert all("dep_city" not in slots for _a, slots in acts), acts
    assert acts[-1][0] == "select"


def test_another_train_in_another_class_during_a_read_back_keeps_the_class(gaz):
    context = {
        "domain": "train",
        "open_question": "confirm_booking",
        "state": {"domain": "train", "dep_city": "北京", "arr_city": "杭州", "seat_class": "硬卧"},
        "offers": [{"code": "K644", "dep_time": "22:50", "seat_class": "硬卧", "berth": "上铺", "price": 181}],
    }
    assert read(gaz, "那T665的软卧下铺呢", context) == [
        ("select", {"code": "T665", "seat_class": "软卧", "berth": "下铺"})
    ]


def test_a_trip_on_the_check_out_day_leaves_from_the_stay(gaz):
    acts = read(gaz, "周四在南京住三晚；退房后坐高铁去上海")
    assert [a for a, _s in acts] == ["inform", "inform"]
    assert acts[1][1]["date"] == "2026-12-06" and acts[1][1]["dep_city"] == "南京", acts


@pytest.mark.parametrize(
    "text", ["机票给我退了，酒店保留", "酒店不动，机票取消吧", "cancel the flight but keep the hotel"]
)
def test_a_booking_kept_in_the_same_sentence_is_not_cancelled(gaz, text):
    assert read(gaz, text, FLIGHT_AND_HOTEL) == [("cancel_booking", {"domain": "flight"})]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("后天上海到北京的高铁，最晚晚上九点到", {"arr_by": "21:00"}),
        ("后天上海飞北京，不要红眼航班", {"time_from": "06:00", "time_to": "22:00"}),
    ],
)
def test_arrival_deadlines_and_no_red_eye(gaz, text, expected):
    (inform,) = read(gaz, text)
    assert {k: inform[1].get(k) for k in expected} == expected


@pytest.mark.parametrize("text", ["动车上可以带宠物吗", "周日我还得回上海上班呢", "高铁能托运两个大箱子吗"])
def test_asides_about_the_trip_change_nothing(gaz, text):
    assert read(gaz, text, TRAINS_LISTED) == [("out_of_scope", {})]


def test_the_station_the_way_back_arrives_at_is_the_way_backs(gaz):
    ((act, slots),) = read(gaz, "周六上午从北京坐高铁去天津，周日下午再回来，回来要到北京南站")
    assert act == "inform" and "dep_place" not in slots and "arr_place" not in slots, slots
    assert slots["return_leg"] == {"date": "2026-12-06", "period": "下午", "arr_place": "北京南站"}


def test_a_stay_after_a_trip_takes_the_hotel_clauses_after_it_and_the_arrival_city(gaz):
    acts = read(gaz, "周日从杭州坐高铁去南京，到了住两晚，要玄武区的，四星")
    assert [a for a, _s in acts] == ["inform", "inform"]
    assert acts[1][1] == {"domain": "hotel", "city": "南京", "nights": 2, "district": "玄武", "stars": 4}
    assert "district" not in acts[0][1] and "stars" not in acts[0][1]


@pytest.mark.parametrize(
    ("text", "slots"),
    [
        ("Could we get one more night?", {"domain": "hotel", "longer": 1}),
        ("please extend my stay by two nights", {"domain": "hotel", "longer": 2}),
        ("I'd rather have a different hotel", {"domain": "hotel", "order_no": 4, "other_hotel": True}),
    ],
)
def test_a_longer_stay_or_another_hotel_in_english(gaz, text, slots):
    assert read(gaz, text, HOTEL_3) == [("change_booking", slots)]


def test_another_hotel_elsewhere_is_a_new_request(gaz):
    assert read(gaz, "I need another hotel in Shanghai tomorrow", HOTEL_3) == [
        ("inform", {"domain": "hotel", "city": "上海", "date": "2026-12-02"})
    ]


def test_a_district_said_with_its_place_name_reading(gaz):
    (inform,) = read(gaz, "a hotel in Beijing, Chaoyang district, tomorrow")
    assert inform[1]["district"] == "朝阳"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("周五北京飞昆明，别给我订早上六点那种", {"time_from": "07:00"}),
        ("周四晚上南京坐动车去上海，九点前要到", {"arr_by": "21:00", "period": "晚上"}),
        ("晚上从北京坐卧铺去上海，早上八点前要到", {"arr_by": "08:00"}),
    ],
)
def test_a_departure_refused_by_its_hour_and_an_evening_deadline(gaz, text, expected):
    (inform,) = read(gaz, text)
    assert {k: inform[1].get(k) for k in expected} == expected


def test_where_one_is_misheard_is_still_an_aside(gaz):
    context = {
        "domain": "hotel",
        "open_question": "choose_offer",
        "state": {"domain": "hotel", "city": "南京", "date": "2026-12-02", "nights": 2},
        "offers": [{"name": "锦江之星(南京玄武店)", "district": "玄武", "stars": 2, "price": 120}],
    }
    assert read(gaz, "我再武汉，这边好冷", context) == [("out_of_scope", {})]  # 在 heard as 再


@pytest.mark.parametrize("text", ["同一趟再加一张", "火车改早一班", "换一家吧", "两个都退了"])
def test_a_booking_known_only_by_its_number_and_summary_is_no_crash(gaz, text):
    # the utterance bank's contexts give bookings as {domain, order_no, summary}: no date, nights or quantity
    context = {
        "domain": "train",
        "open_question": "anything_else",
        "bookings": [
            {"domain": "train", "order_no": 1, "summary": "G1 北京→上海"},
            {"domain": "hotel", "order_no": 2, "summary": "汉庭 上海"},
        ],
    }
    acts = read(gaz, text, context)
    assert acts and acts[0][0] in ("change_booking", "cancel_booking"), acts
