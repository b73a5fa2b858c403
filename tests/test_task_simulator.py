"""The simulated user read line by line, on hand-written replies: option lines and booking summaries, the answer to
each question, a read-back with the wrong nights, rooms or tickets, the booking-integrity errors, the hotel night
after an overnight train, asking about a booking by its domain, and choosing a listed option that fits."""

from __future__ import annotations

import datetime as dt
import json
import random
import re

import pytest

from ragdial.task.goals import Goal, SubGoal
from ragdial.task.simulator import UserSimulator, read_item
from ragdial.task.slots import cn_number, parse_date

TODAY = dt.date(2026, 12, 1)


class Fixed(random.Random):
    """An rng whose ``random()`` is fixed and whose ``choice`` takes the first: one phrasing, no optional turn."""

    def __init__(self, value: float) -> None:
        super().__init__(0)
        self.value = value

    def random(self) -> float:
        return self.value

    def choice(self, seq):
        return seq[0]


def train_then_hotel(**goal) -> Goal:
    return Goal(
        1,
        "train+hotel",
        [
            SubGoal("train", {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02"}, date_expr="明天"),
            SubGoal("hotel", {"city": "上海", "date": "2026-12-02", "nights": 2, "rooms": 2}),
        ],
        **goal,
    )


def simulator(goal: Goal, value: float = 0.99) -> UserSimulator:
    return UserSimulator(goal, TODAY, Fixed(value))


def test_an_option_line_a_hotel_line_and_a_booking_summary_are_read():
    assert read_item("1. G101 12月2日 08:00北京南→12:30上海虹桥 二等座 553元") == {
        "index": 1,
        "code": "G101",
        "day": "12月2日",
        "dep_place": "北京南",
        "arr_place": "上海虹桥",
        "dep_time": "08:00",
        "seat_class": "二等座",
        "berth": "",
        "price": 553,
    }
    sleeper = read_item("2. K21 12月2日 20:00北京→次日08:00上海 硬卧下铺 300元")
    assert sleeper is not None and (sleeper["seat_class"], sleeper["berth"], sleeper["arr_place"]) == (
        "硬卧",
        "下铺",
        "上海",
    )
    assert read_item("3. 如家(浦东店) 3星 浦东 每晚300元") == {
        "index": 3,
        "name": "如家(浦东店)",
        "stars": 3,
        "district": "浦东",
        "price": 300,
    }
    summary = read_item("G101 12月2日 08:00北京南→12:30上海虹桥 二等座 553元，1张")  # no number: index 0
    assert summary is not None and (summary["index"], summary["code"], summary["price"]) == (0, "G101", 553)
    assert read_item("请问您想订哪一个？") is None


def test_each_question_is_answered_from_the_goal():
    user = simulator(train_then_hotel())
    assert user._answer("请问您是坐飞机还是坐火车？") == "坐火车"
    assert user._answer("请问您从哪个城市出发？") == "从北京出发"
    assert user._answer("请问您要去哪个城市？") == "去上海"
    assert parse_date(user._answer("请问您哪天出发？") or "", TODAY) == "2026-12-02"  # the goal's date, in words
    assert user._answer("请问您住在哪个城市？") is None  # a hotel question about a train: restate instead
    assert user._answer("好的。") is None
    user.index = 1  # the hotel part
    assert user._answer("请问您住在哪个城市？") == "上海"
    assert user._answer("请问您从哪个城市出发？") is None  # a travel question about a hotel
    # asked what to change: the whole request again, hotel words and all
    again = user._answer("您想改哪个条件？")
    assert again is not None and again.startswith("我要上海的酒店") and again.endswith("要两间")
    nights = re.search(r"住(.)晚", again)
    assert nights is not None and cn_number(nights.group(1)) == 2


def test_a_read_back_with_the_wrong_nights_rooms_or_tickets_is_corrected():
    user = simulator(train_then_hotel())
    train, hotel = user.goal.subgoals
    assert (
        user._readback_mismatch("为您预订：G101 12月2日 08:00北京南→12:30上海虹桥 二等座 553元，2张。", train)
        == "就一张"
    )
    assert (
        user._readback_mismatch("为您预订：G101 12月2日 08:00北京南→12:30上海虹桥 二等座 553元，1张。", train) is None
    )
    nights = user._readback_mismatch("为您预订：如家(浦东店)，12月2日入住，住3晚，2间。", hotel)
    assert nights is not None and nights[0] + nights[-1] == "住晚" and cn_number(nights[1:-1]) == 2
    assert user._readback_mismatch("为您预订：如家(浦东店)，12月2日入住，住2晚，1间。", hotel) == "是两间吧？"
    assert user._readback_mismatch("为您预订：如家(浦东店)，12月2日入住，住2晚，2间。", hotel) is None


BOOKED_SLEEPER = "预订成功，订单号12345：K21 12月2日 20:00北京→次日08:00上海 硬卧下铺 300元。"


def test_a_booking_the_user_did_not_confirm_is_an_integrity_error():
    user = simulator(train_then_hotel())
    user.last_kind = "request"
    user.react(BOOKED_SLEEPER)
    assert user.errors == ["booking made without confirmation"]


def test_a_confirmation_neither_booked_nor_asked_again_is_an_integrity_error():
    user = simulator(train_then_hotel())
    user.last_kind = "confirm"
    user.react("好的。")
    assert user.errors == ["confirmation dropped: neither booked nor asked again"]
    again = simulator(train_then_hotel())
    again.last_kind = "confirm"
    again.react("为您预订：G101 12月2日 08:00北京南→12:30上海虹桥 二等座 553元。请问确认预订吗？")
    assert (again.errors, again.confirms_without_booking) == ([], 1)


def test_after_an_overnight_train_the_hotel_is_for_the_night_of_arrival():
    user = simulator(train_then_hotel())
    user.last_kind = "confirm"
    following = user.react(BOOKED_SLEEPER)
    assert user.errors == [] and user.bookings == [(0, 12345)] and user.index == 1
    assert user.goal.subgoals[1].constraints["date"] == "2026-12-03"  # arrives the next day (次日)
    assert following is not None and following.startswith("再帮我订") and "上海" in following


def test_a_train_arriving_the_same_day_keeps_the_hotel_date():
    user = simulator(train_then_hotel())
    user.last_kind = "confirm"
    user.react("预订成功，订单号7：G101 12月2日 08:00北京南→12:30上海虹桥 二等座 553元。")
    assert user.goal.subgoals[1].constraints["date"] == "2026-12-02"


def test_asking_about_a_booking_names_the_booked_domain():
    user = simulator(train_then_hotel(ask_booking=True), value=0.0)  # every optional turn is taken
    user.last_kind = "confirm"
    question = user.react(BOOKED_SLEEPER)
    assert user.last_kind == "ask_booking"
    assert question == "那张火车票是订好了吧"  # the first of the dev bank's train questions


def test_the_user_picks_the_listed_option_that_fits_its_goal():
    goal = Goal(2, "train", [SubGoal("train", {"dep_city": "北京", "arr_city": "上海", "max_price": 400})])
    user = simulator(goal)
    reply = "\n".join(
        [
            "可选的有：",
            "1. G101 12月2日 08:00北京南→12:30上海虹桥 二等座 553元",
            "2. K21 12月2日 20:00北京→次日08:00上海 硬卧下铺 300元",
            "请问您想订哪一个？",
        ]
    )
    said = user.react(reply)
    assert user.last_kind == "select" and [o["code"] for o in user.options] == ["G101", "K21"]
    assert said is not None and ("2" in said or "二" in said)  # the second, the one within 400 yuan


@pytest.mark.parametrize(("nights", "said"), [(1, "一间就够"), (2, "是两间吧？")])
def test_the_rooms_asked_for_follow_the_goal(nights, said):
    goal = Goal(3, "hotel", [SubGoal("hotel", {"city": "上海", "date": "2026-12-02", "rooms": nights})])
    user = simulator(goal)
    wrong = 2 if nights == 1 else 1
    assert user._readback_mismatch(f"为您预订：如家(浦东店)，住1晚，{wrong}间。", goal.subgoals[0]) == said


class Prefers(Fixed):
    """A fixed rng whose ``choice`` takes ``wanted`` where the sequence has it."""

    def __init__(self, wanted: str, value: float = 0.0) -> None:
        super().__init__(value)
        self.wanted = wanted

    def choice(self, seq):
        return self.wanted if self.wanted in seq else seq[0]


def test_an_option_is_chosen_by_its_code_or_its_brand_as_asked():
    goal = Goal(4, "train", [SubGoal("train", {"dep_city": "北京", "arr_city": "上海"})])
    user = UserSimulator(goal, TODAY, Prefers("code"))
    user.options = [
        read_item("1. G101 12月2日 08:00北京南→12:30上海虹桥 二等座 553元"),  # type: ignore[list-item]
        read_item("2. G105 12月2日 09:00北京南→13:30上海虹桥 二等座 553元"),  # type: ignore[list-item]
    ]
    assert user._select(user.options[0]) == "G101那个"  # the dev bank's first code template (the price is shared)
    hotel = Goal(5, "hotel", [SubGoal("hotel", {"city": "上海"})])
    user = UserSimulator(hotel, TODAY, Prefers("brand"))
    user.options = [
        read_item("1. 如家快捷酒店(浦东店) 3星 浦东 每晚300元"),  # type: ignore[list-item]
        read_item("2. 汉庭酒店(静安店) 3星 静安 每晚280元"),  # type: ignore[list-item]
    ]
    assert user._select(user.options[0]) == "如家吧，住好点"  # "酒店" and "快捷" are not said


def test_a_part_meant_to_fail_moves_on_to_the_next_way_of_travel():
    goal = Goal(
        6,
        "flight>train",
        [
            SubGoal("flight", {"dep_city": "北京", "arr_city": "上海"}, expect_fail=True),
            SubGoal("train", {"dep_city": "北京", "arr_city": "上海"}),
        ],
    )
    user = simulator(goal)
    said = user.react("抱歉，没有找到符合条件的机票。")
    assert (said, user.last_kind, user.index) == ("那帮我看看火车票吧", "modify", 1)
    again = simulator(goal)
    said = again.react("抱歉，没有找到符合条件的机票。坐火车的话有几班，需要帮您查吗？")
    assert (said, again.last_kind) == ("好的", "confirm_suggestion")


def test_a_user_who_changes_the_date_says_the_real_one_once_options_are_listed():
    goal = train_then_hotel(change_date="2026-12-04")
    user = simulator(goal)
    said = user.react("可选的有：\n1. G101 12月4日 08:00北京南→12:30上海虹桥 二等座 553元\n请问您想订哪一个？")
    assert user.last_kind == "modify" and user.pending_change is None
    assert said is not None and "{date}" not in said
    assert parse_date(said, TODAY) == "2026-12-02"  # the goal's real date


@pytest.mark.parametrize(
    ("item", "constraints", "fits"),
    [
        ({"dep_time": "09:00"}, {"time_from": "09:00"}, True),  # the bound itself is inside
        ({"dep_time": "08:59"}, {"time_from": "09:00"}, False),
        ({"dep_time": "17:00"}, {"time_to": "17:00"}, False),  # "before 17:00" leaves 17:00 out
        ({"dep_time": "23:30"}, {"time_to": "24:00"}, True),
        ({"price": 400}, {"max_price": 400}, True),
        ({"price": 401}, {"max_price": 400}, False),
        ({"berth": "下铺"}, {"berths": ["上铺", "下铺"]}, True),
        ({"berth": "中铺"}, {"berths": ["上铺", "下铺"]}, False),
        ({"stars": 4}, {"min_stars": 4}, True),
        ({"stars": 3}, {"min_stars": 4}, False),
        ({"price": 900}, {"dep_city": "北京", "max_price": None}, True),  # nothing said, nothing shown: no check
    ],
)
def test_an_option_meets_a_constraint_at_its_bounds(item, constraints, fits):
    from ragdial.task.goals import satisfies

    assert satisfies(item, constraints) is fits


def test_the_phrase_bank_takes_the_dev_halfs_chinese_lines_by_kind(tmp_path):
    from ragdial.task.phrases import Phrases

    def row(text, acts, split="dev", open_question=None):
        return {"text": text, "acts": acts, "split": split, "context": {"open_question": open_question}}

    rows = [
        row("行，就这个", [{"act": "confirm", "slots": {}}], open_question="confirm_booking"),
        row("好的好的", [{"act": "confirm", "slots": {}}], split="test", open_question="confirm_booking"),
        row("yes please", [{"act": "confirm", "slots": {}}], open_question="confirm_booking"),
        row("多谢啦", [{"act": "thanks", "slots": {}}]),
        row("火车票订好了吗", [{"act": "ask_about_booking", "slots": {"domain": "train"}}]),
        row("要G102那趟", [{"act": "select", "slots": {"code": "G102"}}]),
        row("选第二个", [{"act": "select", "slots": {"ordinal": 2}}]),
        row("改成后天吧", [{"act": "modify", "slots": {"date": "2026-12-03"}}]),
    ]
    bank = tmp_path / "bank.jsonl"
    bank.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    phrases = Phrases.load(bank)
    assert phrases.by_kind["confirm"] == ["行，就这个"]  # the test half and English lines are left out
    assert phrases.by_kind["thanks"] == ["多谢啦"]
    assert phrases.ask_by_domain == {"train": ["火车票订好了吗"]}
    assert phrases.by_kind["select_code"] == ["要{code}那趟"]
    assert phrases.by_kind["select_ordinal"] == ["选第{n}个"]
    assert phrases.by_kind["modify_date"] == ["改成{date}吧"]


class Last(Fixed):
    """A fixed rng whose ``choice`` takes the last of the sequence."""

    def choice(self, seq):
        return seq[-1]


def test_a_hotel_date_is_answered_as_a_check_in_and_a_trip_date_as_a_departure():
    goal = train_then_hotel()
    user = UserSimulator(goal, TODAY, Last(0.99))
    assert (user._answer("请问您哪天出发？") or "").endswith("出发")
    user.index = 1
    assert (user._answer("请问您哪天入住？") or "").endswith("入住")


def test_two_passengers_ask_for_two_tickets():
    goal = Goal(
        7, "train", [SubGoal("train", {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02", "passengers": 2})]
    )
    said = simulator(goal)._request(goal.subgoals[0], full=True)
    assert said.endswith("，两个人")  # the first of the phrasings
    alone = Goal(8, "train", [SubGoal("train", {"dep_city": "北京", "arr_city": "上海", "date": "2026-12-02"})])
    assert "两" not in simulator(alone)._request(alone.subgoals[0], full=True)


@pytest.mark.parametrize(
    ("hour", "extra", "minute", "period", "clock"),
    [("十", "三刻", None, "上午", "10:45"), ("十", "一刻", None, "上午", "10:15"), ("三", "半", None, "下午", "15:30"),
     ("八", None, "二十", "晚上", "20:20")],
)  # fmt: skip
def test_quarter_and_half_hours_in_words(hour, extra, minute, period, clock):
    from ragdial.task.acts.finders import _clock_of

    assert _clock_of(hour, extra, minute, period) == clock


def test_an_offers_code_is_its_flight_or_train_number():
    from ragdial.task.acts.finders import _offer_code

    assert _offer_code({"flight_no": "CA1501"}) == "CA1501"
    assert _offer_code({"train_no": "G101", "name": "x"}) == "G101"
    assert _offer_code({"code": "K21", "train_no": "G101"}) == "K21"
    assert _offer_code({"name": "如家"}) == ""


def test_the_travel_database_lives_in_the_cache_folder(tmp_path, monkeypatch):
    from ragdial.task.db import default_db_path

    monkeypatch.setenv("RAGDIAL_CACHE", str(tmp_path))
    assert default_db_path() == tmp_path / "task" / "travel.sqlite"
