"""Round-7 failure classes on the reading side, in our own words (not the tester's): places ruled out as data
(``not_dep_place`` / ``not_arr_place``), limits as data (a budget for the whole order, a nightly price range, a
longest ride, an arrival deadline), a day counted from a named day, plain yeses, date asides, a change back to an
earlier value, a comment on an offer's time and a question about an option. Small generated database (seed 7,
today 2026-12-01, a Tuesday)."""

from __future__ import annotations

import pytest

from ragdial.task.acts import understand
from ragdial.task.db import TravelDB
from task_dialogs import TODAY


@pytest.fixture(scope="module")
def gaz(travel_db_path):
    return TravelDB(travel_db_path).gazetteer()


def read(gaz, text, context=None):
    return [(a.act, a.slots) for a in understand(text, context, gaz, TODAY)]


def slots_of(gaz, text, context=None):
    """The slots of the turn's inform/modify acts, merged."""
    out = {}
    for act, slots in read(gaz, text, context):
        if act in ("inform", "modify"):
            out.update(slots)
    return out


FLYING_TO_BEIJING = {
    "domain": "flight",
    "open_question": "date",
    "state": {"domain": "flight", "dep_city": "杭州", "arr_city": "北京"},
}
TRAIN_READ_BACK = {
    "domain": "train",
    "open_question": "confirm_booking",
    "state": {"domain": "train", "dep_city": "郑州", "arr_city": "武汉", "date": "2026-12-04"},
    "offers": [{"code": "G79", "dep_time": "09:10", "price": 244, "seat_class": "二等座", "arr_place": "汉口站"}],
}


# 4. places ruled out are data the manager can search with, in the role their city has in the trip
@pytest.mark.parametrize(
    ("text", "context", "key", "place"),
    [
        ("周四从杭州飞北京，千万别落到大兴", None, "not_arr_place", "大兴机场"),
        ("大兴那边就不要了", FLYING_TO_BEIJING, "not_arr_place", "大兴机场"),
        ("后天从上海坐飞机去成都，虹桥的不要", None, "not_dep_place", "虹桥机场"),
        ("后天从成都飞上海，不想落虹桥", None, "not_arr_place", "虹桥机场"),
        ("后天从北京坐高铁去上海，虹桥的不要", None, "not_arr_place", "上海虹桥站"),
        ("a train from Zhengzhou to Wuhan on Friday, not Hankou please", None, "not_arr_place", "汉口站"),
        ("fly me from Beijing to Chengdu on Thursday but avoid Tianfu", None, "not_arr_place", "天府机场"),
    ],
)
def test_a_place_ruled_out_is_kept_as_an_exclusion(gaz, text, context, key, place):
    said = slots_of(gaz, text, context)
    assert place in said.get(key, [])
    assert said.get(key.removeprefix("not_")) != place


def test_not_a_station_at_the_read_back_is_a_correction_not_an_aside(gaz):
    acts = understand("no, not Hankou", TRAIN_READ_BACK, gaz, TODAY)
    changed = [a for a in acts if a.act in ("inform", "modify")]
    assert changed and changed[0].slots["not_arr_place"] == ["汉口站"]
    assert changed[0].corrects
    assert all(a.act != "out_of_scope" for a in acts)


def test_an_exclusion_said_again_keeps_the_earlier_one(gaz):
    context = {**FLYING_TO_BEIJING, "state": {**FLYING_TO_BEIJING["state"], "not_arr_place": ["南苑机场"]}}
    assert slots_of(gaz, "也别落大兴", context)["not_arr_place"] == ["南苑机场", "大兴机场"]


# 5. limits as data
@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        ("下周四从杭州飞北京，我们四个人，一共别超过三千", {"max_total": 3000, "passengers": 4}),
        ("下周四杭州去北京的高铁，三个人加起来两千以内", {"max_total": 2000, "passengers": 3}),
        ("two of us flying Hangzhou to Beijing next Thursday, 2500 in total", {"max_total": 2500, "passengers": 2}),
    ],
)
def test_a_budget_for_the_whole_order_is_no_price_per_ticket(gaz, text, wanted):
    said = slots_of(gaz, text)
    assert {k: said.get(k) for k in wanted} == wanted
    assert "max_price" not in said


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("周五在南京住一晚，五六百一晚的就行", 500, 600),
        ("周五南京的酒店，价格两百到四百之间", 200, 400),
        ("a hotel in Nanjing on Friday, 250 to 450 a night", 250, 450),
    ],
)
def test_a_nightly_price_range_is_both_bounds(gaz, text, low, high):
    said = slots_of(gaz, text)
    assert (said.get("min_price"), said.get("max_price")) == (low, high)
    assert said.get("nights", 1) == 1


def test_a_price_per_room_is_no_count_of_rooms(gaz):
    said = slots_of(gaz, "周五南京的酒店，四五百一间的")
    assert said.get("rooms") is None
    assert (said["min_price"], said["max_price"]) == (400, 500)


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("周五从北京坐火车去上海，路上别超过六个钟头", 360),
        ("周五北京到上海的动车，四个半小时以内的", 270),
        ("a train from Beijing to Shanghai on Friday, no longer than 5 hours", 300),
    ],
)
def test_a_longest_ride_is_kept(gaz, text, minutes):
    assert slots_of(gaz, text)["max_duration"] == minutes


@pytest.mark.parametrize(
    ("text", "deadline"),
    [
        ("周五北京到上海的高铁，九点前必须到", "09:00"),
        ("a train from Beijing to Shanghai on Friday, I must be there by 9:30", "09:30"),
        ("flights from Beijing to Shanghai on Friday that land before 2pm", "14:00"),
    ],
)
def test_an_arrival_deadline_is_no_departure_window(gaz, text, deadline):
    said = slots_of(gaz, text)
    assert said["arr_by"] == deadline
    assert "time_to" not in said


# 6. a day counted from a named day
@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("冬至前一天从杭州飞北京", "2026-12-21"),
        ("圣诞节后两天从杭州飞北京", "2026-12-27"),
        ("a flight from Hangzhou to Beijing the day after Christmas", "2026-12-26"),
        ("冬至那天从杭州飞北京", "2026-12-22"),
    ],
)
def test_a_day_counted_from_a_named_day(gaz, text, day):
    assert slots_of(gaz, text)["date"] == day


# 1. plain yeses, and a question about the offer that stays a question
ROOM_READ_BACK = {
    "domain": "hotel",
    "open_question": "confirm_booking",
    "state": {"domain": "hotel", "city": "南京", "date": "2026-12-04", "nights": 1, "rooms": 2},
    "offers": [{"name": "亚朵酒店(新街口店)", "price": 520, "district": "秦淮区"}],
}
TRAINS_TO_CHOOSE = {
    "domain": "train",
    "open_question": "choose_offer",
    "state": {"domain": "train", "dep_city": "郑州", "arr_city": "武汉", "date": "2026-12-04"},
    "offers": [
        {"code": "G79", "dep_time": "09:10", "price": 244, "seat_class": "二等座"},
        {"code": "G81", "dep_time": "11:40", "price": 244, "seat_class": "二等座"},
    ],
}


@pytest.mark.parametrize("text", ["嗯，给我订上", "订上吧", "我是说确定，给我订", "我说了确认，给我订上", "嗯 订上"])
def test_a_plain_yes_at_the_read_back_books(gaz, text):
    assert read(gaz, text, TRAIN_READ_BACK) == [("confirm", {})]


@pytest.mark.parametrize("text", ["G81，二等座，订上", "第二趟，订上吧", "the second one, go ahead and book it"])
def test_a_choice_and_its_yes_in_one_turn(gaz, text):
    acts = read(gaz, text, TRAINS_TO_CHOOSE)
    assert [a for a, _s in acts] == ["select", "confirm"]


@pytest.mark.parametrize("text", ["订上了吗", "订上了没"])
def test_whether_it_is_booked_is_no_yes(gaz, text):
    assert [a for a, _s in read(gaz, text, TRAIN_READ_BACK)] != ["confirm"]


@pytest.mark.parametrize("text", ["是两间对吧？", "两间是吧", "that's two rooms, right?"])
def test_a_question_about_the_offer_is_no_yes_and_no_aside(gaz, text):
    assert read(gaz, text, ROOM_READ_BACK) == [("request", {})]


# 2. a date said as an aside (put off for later, someone's birthday) moves nothing
FLIGHT_DATE_ASKED = {
    "domain": "flight",
    "open_question": "date",
    "state": {"domain": "flight", "dep_city": "杭州", "arr_city": "北京"},
}
STAY_DATE_ASKED = {"domain": "hotel", "open_question": "date", "state": {"domain": "hotel", "city": "南京"}}


@pytest.mark.parametrize(
    ("text", "context", "day"),
    [
        ("下周二吧，27号我可能还要去一趟广州，回头再说", FLIGHT_DATE_ASKED, "2026-12-08"),
        ("周四从杭州飞北京，月底我还得从北京去西安，那个以后再说", None, "2026-12-03"),
        ("the 18th. the 21st is my dad's birthday", STAY_DATE_ASKED, "2026-12-18"),
    ],
)
def test_a_date_aside_does_not_move_the_trip(gaz, text, context, day):
    acts = read(gaz, text, context)
    days = [slots.get("date") for _a, slots in acts if "date" in slots]
    assert days == [day]
    assert all(slots.get("arr_city") != "广州" for _a, slots in acts)


def test_a_trip_put_off_alone_is_an_aside(gaz):
    assert read(gaz, "我20号还得回一趟西安，到时候再说", TRAINS_TO_CHOOSE) == [("out_of_scope", {})]


def test_put_off_without_a_date_is_still_a_no(gaz):
    assert read(gaz, "算了，以后再说", TRAIN_READ_BACK) == [("deny", {})]


# 3. going back to an earlier value; for a stay, the day one leaves is the check-out
HOTEL_BOOKED = {
    "domain": "hotel",
    "open_question": "anything_else",
    "state": {},
    "bookings": [
        {"domain": "hotel", "order_no": 6, "item_id": 1, "date": "2026-12-03", "nights": 3, "quantity": 1}
        | {"status": "booked", "details": ""}
    ],
}
TRAIN_REBOOKING = {
    "domain": "train",
    "open_question": "confirm_booking",
    "state": {"domain": "train", "dep_city": "郑州", "arr_city": "武汉", "date": "2026-12-05", "rebooking": 2},
    "offers": [{"code": "G79", "dep_time": "09:10", "price": 244, "seat_class": "二等座"}],
}


def test_a_stay_moved_keeping_the_day_one_leaves(gaz):
    assert read(gaz, "入住推到周五，还是礼拜天走", HOTEL_BOOKED) == [
        ("change_booking", {"date": "2026-12-04", "nights": 2})
    ]


@pytest.mark.parametrize("text", ["周四入住，礼拜天走", "周四入住，退房还是礼拜天"])
def test_the_day_one_leaves_a_hotel_is_the_check_out(gaz, text):
    assert slots_of(gaz, text, STAY_DATE_ASKED) == {"date": "2026-12-03", "check_out": "2026-12-06"}


def test_going_back_to_sunday_in_a_change_of_train(gaz):
    assert slots_of(gaz, "不对，还是礼拜天走", TRAIN_REBOOKING) == {"date": "2026-12-06"}


# 6. a comment on the time asks for another departure; a question about an option is a question
FLIGHTS_TO_CHOOSE = {
    "domain": "flight",
    "open_question": "choose_offer",
    "state": {"domain": "flight", "dep_city": "杭州", "arr_city": "北京", "date": "2026-12-03"},
    "offers": [
        {"code": "CA1701", "airline": "国航", "dep_time": "06:50", "price": 780, "seat_class": "经济舱"},
        {"code": "MU5131", "airline": "东航", "dep_time": "09:30", "price": 820, "seat_class": "经济舱"},
    ],
}


@pytest.mark.parametrize("text", ["起飞时间有点早啊", "these leave a little early"])
def test_a_bit_early_asks_for_a_later_departure(gaz, text):
    assert read(gaz, text, FLIGHTS_TO_CHOOSE) == [("modify", {"relative": "later", "time_from": "06:51"})]


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        ("where does the second one leave from?", {"ordinal": 2, "dep_place": "?"}),
        ("where's the first one?", {"ordinal": 1, "dep_place": "?"}),
    ],
)
def test_where_an_option_leaves_is_a_question(gaz, text, wanted):
    assert read(gaz, text, FLIGHTS_TO_CHOOSE) == [("request", wanted)]


def test_when_an_option_leaves_and_arrives_books_nothing(gaz):
    acts = read(gaz, "what time does the first one leave and when does it land", FLIGHTS_TO_CHOOSE)
    assert {a for a, _s in acts} == {"request"}
    assert {k for _a, s in acts for k in s} == {"ordinal", "dep_time", "arr_time"}


@pytest.mark.parametrize(
    ("text", "brand"),
    [
        ("a Jin Jiang Inn in Nanjing on Friday", "锦江之星"),
        ("two nights at a Han Ting in Nanjing from Friday", "汉庭酒店"),
        ("any Home Inns in Nanjing on Friday?", "如家快捷酒店"),
        ("an Orange Crystal in Nanjing on Friday", "桔子水晶酒店"),
    ],
)
def test_english_brand_names(gaz, text, brand):
    said = slots_of(gaz, text)
    assert (said["brand"], said.get("domain"), said.get("district")) == (brand, "hotel", None)


@pytest.mark.parametrize(
    ("text", "key", "airline"),
    [
        ("Sichuan Air from Hangzhou to Beijing on Friday", "airline", "川航"),
        ("Hangzhou to Beijing on Friday, Hainan if possible", "airline", "海航"),
        ("fly from Hangzhou to Beijing on Friday, no Eastern", "not_airline", ["东航"]),
    ],
)
def test_english_airline_names(gaz, text, key, airline):
    said = slots_of(gaz, text)
    assert said[key] == airline
    assert said["domain"] == "flight"


# 7. each act carries the clause it was read from, so the manager need not cut the raw text again
@pytest.mark.parametrize(
    ("text", "clauses"),
    [
        ("后天坐高铁去西安，到了在雁塔区住两晚", ["后天坐高铁去西安", "到了在雁塔区住两晚"]),
        ("明天从杭州坐高铁去南京，后天再从南京飞成都", ["明天从杭州坐高铁去南京", "后天再从南京飞成都"]),
        ("下周三从杭州飞厦门，周日再飞回来", ["下周三从杭州飞厦门，周日再飞回来"]),
    ],
)
def test_each_request_carries_its_clause(gaz, text, clauses):
    acts = understand(text, None, gaz, TODAY)
    assert [a.clause for a in acts] == clauses
    assert all(a.act == "inform" for a in acts)


# 5 (cont.). arriving too early refused: a bound on the arrival, not on the departure
@pytest.mark.parametrize(
    ("text", "after"),
    [
        ("周五北京到上海的火车，五点以前到站的不要", "05:00"),
        ("周五北京到上海的卧铺，大半夜到的不要", "06:00"),
        ("周五北京到上海的车，早上八点以后到就行", "08:00"),
        ("a sleeper from Beijing to Shanghai on Friday, nothing arriving before 7am", "07:00"),
    ],
)
def test_an_arrival_too_early_is_refused_as_data(gaz, text, after):
    said = slots_of(gaz, text)
    assert said["arr_after"] == after
    assert not {"arr_by", "time_from", "time_to", "period"} & set(said)


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        ("南京的酒店周五入住，两间，四百一晚以内", {"rooms": 2, "max_price": 400}),
        ("南京的酒店周五入住，八百六一间的太贵了", {}),
    ],
)
def test_a_price_per_night_is_no_count(gaz, text, wanted):
    said = slots_of(gaz, text)
    assert {k: said[k] for k in ("rooms", "max_price", "nights") if k in said} == wanted


HOTELS_TO_CHOOSE = {
    "domain": "hotel",
    "open_question": "choose_offer",
    "state": {"domain": "hotel", "city": "南京", "date": "2026-12-04"},
    "offers": [
        {"name": "汉庭酒店(夫子庙店)", "price": 260, "district": "秦淮区"},
        {"name": "亚朵酒店(新街口店)", "price": 520, "district": "秦淮区"},
    ],
}


def test_a_price_per_night_picks_the_offer(gaz):
    assert read(gaz, "520一晚那家吧", HOTELS_TO_CHOOSE) == [("select", {"price": 520})]


@pytest.mark.parametrize("text", ["G79不行，就G81吧", "G79太早了不行，换G81", "G79算了，G81"])
def test_the_offer_refused_is_not_the_one_chosen(gaz, text):
    acts = read(gaz, text, {**TRAINS_TO_CHOOSE, "open_question": "confirm_booking"})
    assert [s.get("code") for a, s in acts if a == "select"] == ["G81"]


def test_a_district_is_no_direction(gaz):
    assert slots_of(gaz, "下周五在哈尔滨道里区住两晚") == {
        "city": "哈尔滨",
        "date": "2026-12-11",
        "district": "道里",
        "nights": 2,
    }


FLIGHTS_TO_SHANGHAI = {
    "domain": "flight",
    "open_question": "choose_offer",
    "state": {"domain": "flight", "dep_city": "成都", "arr_city": "上海", "date": "2026-12-03"},
    "offers": [
        {"code": "MU5402", "airline": "东航", "dep_time": "08:10", "price": 990, "arr_place": "浦东机场"},
        {"code": "3U8961", "airline": "川航", "dep_time": "11:25", "price": 1020, "arr_place": "浦东机场"},
    ],
}


@pytest.mark.parametrize("text", ["不是浦东的，换一个", "别给我落浦东机场的"])
def test_an_airport_refused_while_choosing_is_an_exclusion(gaz, text):
    acts = read(gaz, text, FLIGHTS_TO_SHANGHAI)
    assert [a for a, _s in acts] in (["modify"], ["inform"])
    assert acts[0][1]["not_arr_place"] == ["浦东机场"]


def test_asking_whether_it_is_an_airport_refuses_nothing(gaz):
    assert all("not_arr_place" not in s for _a, s in read(gaz, "不是浦东机场吗", FLIGHTS_TO_SHANGHAI))


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        ("周五南京回北京的高铁，最好天黑前到", {"arr_by": "18:00"}),
        ("a train from Nanjing to Beijing on Friday, I have to be in Beijing by noon", {"arr_by": "12:00"}),
        ("a flight from Nanjing to Beijing on Friday, no red-eye", {"time_from": "06:00", "time_to": "22:00"}),
        ("a hotel in Nanjing on Friday, between 260 and 480", {"min_price": 260, "max_price": 480}),
    ],
)
def test_more_limits_in_words(gaz, text, wanted):
    said = slots_of(gaz, text)
    assert {k: said.get(k) for k in wanted} == wanted
    assert "time_to" not in said or "arr_by" not in wanted


def test_two_options_both_too_early_ask_for_later_ones(gaz):
    assert read(gaz, "这俩都有点早了", FLIGHTS_TO_CHOOSE) == [("modify", {"relative": "later", "time_from": "06:51"})]


@pytest.mark.parametrize(
    ("text", "acts"),
    [
        ("第一个有点早，第二个几点到呢", [("request", {"arr_time": "?", "ordinal": 2})]),
        ("第一个不要，第二个吧", [("select", {"ordinal": 2})]),
    ],
)
def test_an_option_refused_by_its_number_is_not_chosen(gaz, text, acts):
    assert read(gaz, text, FLIGHTS_TO_CHOOSE) == acts


def test_a_clock_time_without_am_pm_picks_the_afternoon_one_listed(gaz):
    context = {**FLIGHTS_TO_CHOOSE, "offers": [*FLIGHTS_TO_CHOOSE["offers"], {"code": "CA1705", "dep_time": "15:20"}]}
    assert read(gaz, "the 3:20 one please", context) == [("select", {"dep_time": "15:20"})]


def test_a_district_in_pinyin_with_an_apostrophe(gaz):
    context = {**HOTELS_TO_CHOOSE, "state": {"domain": "hotel", "city": "上海"}}
    context["offers"] = [{"name": "全季酒店(静安店)", "price": 430, "district": "静安"}, HOTELS_TO_CHOOSE["offers"][0]]
    assert read(gaz, "the one in Jing'an", context) == [("select", {"district": "静安"})]
