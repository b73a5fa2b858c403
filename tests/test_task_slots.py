"""Slot parsing: dates (absolute, relative), cities and stations, times, classes, prices, stars, acts."""

from __future__ import annotations

import datetime as dt

import pytest

from ragdial.task.slots import cn_number, parse, parse_date
from task_dialogs import TODAY, travel_gazetteer


@pytest.fixture(scope="module")
def gaz(tmp_path_factory):
    return travel_gazetteer(tmp_path_factory.mktemp("db"), seed=1, days=3)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("今天", "2026-12-01"),
        ("明天", "2026-12-02"),
        ("后天", "2026-12-03"),
        ("大后天", "2026-12-04"),
        ("下周三", "2026-12-09"),
        ("帮我查一下下周三的", "2026-12-09"),
        ("下下周一", "2026-12-14"),
        ("周五", "2026-12-04"),
        ("这周日", "2026-12-06"),
        ("12月5日", "2026-12-05"),
        ("十二月五号", "2026-12-05"),
        ("1月3日", "2027-01-03"),
        ("8号", "2026-12-08"),
        ("2026-12-20", "2026-12-20"),
        ("什么时候都行", None),
    ],
)
def test_chinese_dates(text, expected):
    assert parse_date(text, TODAY) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tomorrow", "2026-12-02"),
        ("the day after tomorrow", "2026-12-03"),
        ("next Wednesday", "2026-12-09"),
        ("on Dec 5", "2026-12-05"),
        ("5th of December", "2026-12-05"),
    ],
)
def test_english_dates(text, expected):
    assert parse_date(text, TODAY, english=True) == expected


def test_chinese_numbers():
    assert [cn_number(x) for x in ("12", "十二", "二十一", "一千五百", "一千五", "两百", "三")] == [
        12,
        12,
        21,
        1500,
        1500,
        200,
        3,
    ]


def test_full_train_request(gaz):
    p = parse("明天晚上从哈尔滨到北京的软卧，上铺或者下铺", gaz, TODAY)
    assert p.cities == [("哈尔滨", "dep"), ("北京", "arr")]
    assert p.date == "2026-12-02"
    assert (p.time_from, p.time_to, p.period) == ("18:00", "24:00", "晚上")
    assert p.seat_class == "软卧" and p.berths == ["上铺", "下铺"]
    assert p.domains == ["train"]


def test_flight_with_budget_and_aliases(gaz):
    p = parse("下周三从羊城飞魔都的机票，一千二以内，商务舱", gaz, TODAY)
    assert p.cities == [("广州", "dep"), ("上海", "arr")]
    assert p.max_price == 1200 and p.seat_class == "商务舱" and p.domains[0] == "flight"


def test_station_names_map_to_cities_and_domain(gaz):
    p = parse("下午3点以后从南京南站去杭州", gaz, TODAY)
    assert p.cities == [("南京", "dep"), ("杭州", "arr")]
    assert p.places == {"南京": "南京南站"} and "train" in p.domains
    assert p.time_from == "15:00" and p.time_to is None


def test_homophone_city_still_parses(gaz):
    # "背景" is an ASR homophone of 北京 (bei jing)
    p = parse("背景到上海的二等座", gaz, TODAY)
    assert p.cities == [("北京", "dep"), ("上海", "arr")] and p.seat_class == "二等座"


def test_corrections_and_negation(gaz):
    p = parse("不是北京，是天津", gaz, TODAY)
    assert p.cities == [("天津", None)] and p.negated_cities == ["北京"]
    p = parse("actually, Shanghai", gaz, TODAY)
    assert p.cities == [("上海", None)]


def test_hotel_slots(gaz):
    p = parse("三星以上的酒店，每晚500以内", gaz, TODAY)
    assert (p.min_stars, p.stars, p.max_price, p.domains) == (3, None, 500, ["hotel"])
    p = parse("a 4-star hotel in Hangzhou under 600", gaz, TODAY)
    assert (p.stars, p.max_price, p.cities, p.domains) == (4, 600, [("杭州", "arr")], ["hotel"])


def test_english_trip(gaz):
    p = parse("book a flight from Beijing to Shanghai tomorrow evening, business class", gaz, TODAY)
    assert p.cities == [("北京", "dep"), ("上海", "arr")] and p.date == "2026-12-02"
    assert p.period == "evening" and p.seat_class == "business" and p.domains == ["flight"]


def test_slot_parser_reads_no_dialog_acts(gaz):
    # one place decides what a turn does (ragdial.task.acts): the slot parser has no act fields
    fields = set(parse("好的，第二个", gaz, TODAY).to_dict())
    assert not fields & {"choice", "code", "affirm", "deny", "correction", "bye", "off_topic"}
    assert not parse("第二个", gaz, TODAY).has_slots()


def test_off_topic_has_no_slots(gaz):
    p = parse("你会唱歌吗", gaz, TODAY)
    assert not p.has_slots() and not p.domains


def test_simulator_numbers_parse_back():
    from ragdial.task.simulator import chinese_number

    for value in (1, 5, 10, 12, 100, 350, 1200, 1050, 2000, 4300):
        assert cn_number(chinese_number(value)) == value, chinese_number(value)


def test_pinyin_matching_does_not_reach_into_city_names(gaz):
    # 一下无锡: 下无 sounds like 下午 (xia wu) but 无 belongs to 无锡
    p = parse("帮我查一下无锡出发去天津的软卧火车票", gaz, TODAY)
    assert p.period is None and p.time_from is None
    assert p.cities == [("无锡", "dep"), ("天津", "arr")]


@pytest.mark.parametrize(
    ("heard", "check"),
    [  # homophone ASR errors (same toneless pinyin) as ragdial.text.asr_noise makes them
        (
            "斡响订12月9日完上难京去桂林的车票",
            lambda p: p.cities == [("南京", "dep"), ("桂林", "arr")] and p.period == "晚上",
        ),
        ("12约4日的", lambda p: p.date == "2026-12-04"),
        ("下舟而", lambda p: p.date == "2026-12-08"),
        (
            "后天晚上哈尔滨驱杭州的即票",
            lambda p: p.cities == [("哈尔滨", "dep"), ("杭州", "arr")] and "flight" in p.domains,
        ),
        (
            "再帮我订桂林得濒馆，窑5醒鸡的，1100块以夏",
            lambda p: p.stars == 5 and p.max_price == 1100 and "hotel" in p.domains,
        ),
        ("部是西安，是武汉", lambda p: p.negated_cities == ["西安"] and p.cities == [("武汉", None)]),
        ("说错肋，应该是从天津出法", lambda p: p.cities == [("天津", "dep")]),
    ],
)
def test_homophone_noise(gaz, heard, check):
    assert check(parse(heard, gaz, TODAY)), parse(heard, gaz, TODAY)


def test_exact_only_parsing_misses_homophones(gaz):
    p = parse("斡响订12月9日完上难京去桂林的车票", gaz, TODAY, by_sound=False)
    assert p.cities == [("桂林", "arr")] and p.period is None


def test_words_said_exactly_are_not_reread_by_sound(gaz):
    # 商务 (shang wu) sounds like 上午: a business-class request names no morning
    p = parse("帮我订12月6日郑州去厦门的商务舱机票", gaz, TODAY)
    assert p.seat_class == "商务舱" and p.period is None


def test_noisy_next_week_and_noisy_business_class(gaz):
    assert parse("请帮我顶夏周五素周的酒店", gaz, TODAY).date == "2026-12-11"
    p = parse("榜卧丁12月6日郑州去厦焖的上务舱机票，2300袁以内", gaz, TODAY)
    assert p.seat_class == "商务舱" and p.period is None and p.max_price == 2300


@pytest.mark.parametrize(
    ("said", "today", "meant"),
    [
        ("改到20号吧", "2026-11-24", "2026-12-20"),  # already past this month: next month, not next year
        ("3号那天走", "2026-12-20", "2027-01-03"),  # across the year end
        ("就今天，24号", "2026-11-24", "2026-11-24"),
        ("31号", "2026-11-24", "2026-12-31"),  # a day November lacks
        ("30号", "2027-01-31", "2027-03-30"),  # February has no 30th
    ],
)
def test_a_day_said_by_its_number_alone_is_the_next_one_to_come(said, today, meant):
    assert parse_date(said, dt.date.fromisoformat(today)) == meant
