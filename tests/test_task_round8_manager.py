"""Round-7 failure classes on the manager's side, in our own wording: a ruled-out station or airport read back, limits
(a total for the group, a price range, a longest ride, an arrival time) dropped without a word, a refused offer read
back again, a second trip said in the same turn lost, a trip after a stay dated before it, a class and berth said
with a code not read back, a question about an offer taken as choosing it, and the database giving back what a
booking holds. The acts are given as the reader passes them (the manager's contract), so these cases do not depend
on how a sentence is read. Small generated database (seed 7, today 2026-12-01, a Tuesday; 12-01 to 12-05)."""

from __future__ import annotations

import re

import pytest

from ragdial.task.acts import Act
from ragdial.task.db import TravelDB
from ragdial.task.legs import not_before
from ragdial.task.manager import TaskBranch
from task_dialogs import talk

# 北京→上海 on 12-02, second class: D8452 07:05→13:24 382元, G5281 11:10→16:04 567元, G1500 15:50→20:44 567元;
# K524 19:15→次日09:54 (硬座 99, 软卧下铺 308). 上海→北京 on 12-02, economy: ZH1189 →首都机场 940元 (3 seats),
# HU9746 →大兴机场 1010元, MU8570 →大兴机场 sold out. 南京 hotels from 12-02, two nights: 锦江之星 140, 全季 240,
# 维也纳 250, 美居 450, 桔子水晶 510, 万豪 740, 洲际 960 a night.
RAIL = {"domain": "train", "dep_city": "北京", "arr_city": "上海", "date": "2026-12-02"}
SECOND = {**RAIL, "seat_class": "二等座"}
AIR = {"domain": "flight", "dep_city": "上海", "arr_city": "北京", "date": "2026-12-02", "seat_class": "经济舱"}


@pytest.fixture
def branch(travel_db_path):
    return TaskBranch(TravelDB(travel_db_path, scratch=True), acts="rules")


def given(branch, said):
    """``branch`` reading each turn in ``said`` (text → acts) as those acts; other turns with the rules."""
    read = branch.understand

    def understand(text, context):
        acts = said.get(text)
        return [Act(a.act, dict(a.slots)) for a in acts] if acts is not None else read(text, context)

    branch.understand = understand
    return branch


def _listed(reply):
    """The codes or names of the options a reply lists, in order."""
    return re.findall(r"^\d+\. (\S+)", reply, re.M)


def _pending(branch, turn):
    pending = turn.state["pending"]
    return branch.db.get(pending["domain"], pending["id"]) if pending else None


# 1. a ruled-out airport or station is never read back, and a later "not X" undoes one read back
def test_a_ruled_out_airport_is_never_offered(branch):
    given(branch, {"上海飞北京，别落首都": [Act("inform", {**AIR, "not_arr_place": ["首都机场"]})]})
    (turn,) = talk(branch, "上海飞北京，别落首都")
    assert "首都机场" not in turn.reply, turn.reply
    assert turn.state["open"] == "confirm_booking" and _pending(branch, turn)["flight_no"] == "HU9746", turn.reply


def test_not_that_airport_at_a_read_back_undoes_it(branch):
    given(
        branch,
        {
            "上海飞北京落首都": [Act("inform", {**AIR, "arr_place": "首都机场"})],
            "不对，不要首都的": [Act("modify", {"not_arr_place": ["首都机场"]})],
        },
    )
    first, second = talk(branch, "上海飞北京落首都", "不对，不要首都的")
    assert _pending(branch, first)["arr_place"] == "首都机场", first.reply
    assert "首都机场" not in second.reply, second.reply
    assert _pending(branch, second)["arr_place"] == "大兴机场", second.reply
    assert "arr_place" not in second.state["slots"] and second.state["slots"]["not_arr_place"] == ["首都机场"]


def test_a_station_ruled_out_leaves_the_trains_from_the_others(travel_db_path):
    db = TravelDB(travel_db_path)
    every = db.search("train", SECOND, limit=50)
    kept = db.search("train", {**SECOND, "not_arr_place": ["上海虹桥站"]}, limit=50)
    assert {r["arr_place"] for r in every} == {"上海虹桥站", "上海站"}
    assert [r["train_no"] for r in kept] == ["G5281"]
    left = db.search("train", {**SECOND, "not_dep_place": ["北京南站"]}, limit=50)
    assert left == []  # every second-class train leaves from 北京南站


# 2. limits: enforced in the search; when nothing meets one, which one, and the rows nearest to it
def test_a_total_budget_for_the_group_is_shared_by_the_tickets(branch):
    given(branch, {"两个人一共八百以内": [Act("inform", {**SECOND, "passengers": 2, "max_total": 800})]})
    (turn,) = talk(branch, "两个人一共八百以内")
    assert turn.state["open"] == "confirm_booking", turn.reply
    assert _pending(branch, turn)["train_no"] == "D8452" and "共764元" in turn.reply, turn.reply


def test_a_total_budget_nothing_meets_is_named_with_the_total_it_takes(branch):
    given(branch, {"两个人一共一千八": [Act("inform", {**AIR, "passengers": 2, "max_total": 1800})]})
    first, second = talk(branch, "两个人一共一千八", "好的")
    assert "总预算" in first.reply and "2张共1800元以内" in first.reply, first.reply
    assert "放宽到1880元" in first.reply and "ZH1189" in first.reply, first.reply
    assert first.state["suggestion"] == {"max_total": 1880}
    assert second.state["open"] == "confirm_booking" and "共1880元" in second.reply, second.reply
    assert second.booked is None  # the alternative taken is read back first, never booked on that yes


def test_a_nightly_price_range_keeps_both_ends(branch):
    stay = {"domain": "hotel", "city": "南京", "date": "2026-12-02", "nights": 2}
    given(branch, {"三百到五百一晚": [Act("inform", {**stay, "min_price": 300, "max_price": 500})]})
    (turn,) = talk(branch, "三百到五百一晚")
    assert turn.state["open"] == "confirm_booking", turn.reply
    assert "美居" in turn.reply and "锦江之星" not in turn.reply, turn.reply


def test_a_longest_ride_is_kept_and_the_nearest_rides_are_offered(branch):
    given(
        branch,
        {
            "别超过五个小时": [Act("inform", {**SECOND, "max_duration": 300})],
            "别超过四个小时": [Act("inform", {**SECOND, "max_duration": 240})],
        },
    )
    (fits,) = talk(branch, "别超过五个小时")
    assert "D8452" not in fits.reply and "G5281" in fits.reply and "G1500" in fits.reply, fits.reply
    assert "5小时以内" in fits.reply, fits.reply  # the limit is said with the list
    (none,) = talk(branch, "别超过四个小时")
    assert "行程时长" in none.reply and "4小时以内" in none.reply, none.reply
    assert _listed(none.reply)[:2] == ["G5281", "G1500"], none.reply  # the shorter rides first, not the cheapest


def test_an_arrival_time_nothing_meets_offers_the_earliest_arrivals(branch):
    given(branch, {"中午十二点前必须到": [Act("inform", {**RAIL, "arr_by": "12:00"})]})
    (turn,) = talk(branch, "中午十二点前必须到")
    assert "到达时间" in turn.reply and "12:00" in turn.reply, turn.reply
    assert _listed(turn.reply)[0] == "D8452", turn.reply  # arrives 13:24, the earliest


# 3. an offer refused is never read back for a yes again
def test_an_offer_named_refused_then_another_chosen_reads_back_the_other(branch):
    given(
        branch,
        {
            "北京去上海的二等座": [Act("inform", SECOND)],
            "D8452太慢了不行，就G1500吧": [
                Act("select", {"code": "D8452"}),
                Act("deny"),
                Act("select", {"code": "G1500"}),
            ],
        },
    )
    _, turn = talk(branch, "北京去上海的二等座", "D8452太慢了不行，就G1500吧")
    assert _pending(branch, turn)["train_no"] == "G1500", turn.reply
    assert "D8452" not in turn.reply, turn.reply


def test_an_offer_refused_at_its_read_back_is_not_read_back_again(branch):
    given(
        branch,
        {
            "北京去上海的二等座": [Act("inform", SECOND)],
            "第一个": [Act("select", {"ordinal": 1})],
            "不要": [Act("deny")],
            "下午一点半以前到": [Act("modify", {"arr_by": "13:30"})],
        },
    )
    turns = talk(branch, "北京去上海的二等座", "第一个", "不要", "下午一点半以前到")
    assert _pending(branch, turns[1])["train_no"] == "D8452"
    last = turns[-1]
    assert last.state["open"] == "choose_offer" and last.state["pending"] is None, last.reply
    assert "确认预订" not in last.reply and "刚才没要" in last.reply, last.reply


# 4. a second trip in the same turn waits for the first, in the order said, with its own conditions
def test_a_train_then_a_flight_in_one_turn_are_both_kept_in_order(branch):
    onward = {"domain": "flight", "dep_city": "上海", "arr_city": "北京", "date": "2026-12-02", "period": "下午"}
    given(
        branch,
        {
            "明天上午高铁去上海，后天下午再从上海飞北京": [
                Act("inform", {**RAIL, "date": "2026-12-02", "period": "上午", "seat_class": "二等座"}),
                Act("inform", {**onward, "date": "2026-12-03"}),
            ],
            "第一个": [Act("select", {"ordinal": 1})],
            "确认": [Act("confirm")],
        },
    )
    first, _, done = talk(branch, "明天上午高铁去上海，后天下午再从上海飞北京", "第一个", "确认")
    assert first.state["domain"] == "train" and "上海→北京的航班等这一程订好后为您查" in first.reply, first.reply
    assert "12月3日" in first.reply
    assert done.booked is not None and done.booked["domain"] == "train", done.reply
    assert done.state["domain"] == "flight" and done.state["slots"]["date"] == "2026-12-03", done.reply
    assert done.state["slots"]["period"] == "下午" and "seat_class" not in done.state["slots"]


def test_two_onward_trains_keep_the_tickets_said_once(branch):
    given(
        branch,
        {
            "两张，北京到上海，再从上海到南京": [
                Act("inform", {**SECOND, "passengers": 2}),
                Act("inform", {"domain": "train", "dep_city": "上海", "arr_city": "南京"}),
            ]
        },
    )
    (turn,) = talk(branch, "两张，北京到上海，再从上海到南京")
    (waiting,) = turn.state["queue"]
    assert (waiting["dep_city"], waiting["arr_city"], waiting["date"]) == ("上海", "南京", "2026-12-02")
    assert waiting["passengers"] == 2 and turn.state["slots"]["arr_city"] == "上海", turn.reply


# 5. a trip said after a stay is never dated before the stay
def test_a_flight_after_a_stay_is_not_put_before_it(branch):
    given(
        branch,
        {
            "周四起住南京两晚，周日飞回北京": [
                Act("inform", {"domain": "hotel", "city": "南京", "date": "2026-12-03", "nights": 2}),
                Act("inform", {"domain": "flight", "dep_city": "南京", "arr_city": "北京", "date": "2026-12-06"}),
            ],
            "周四起住南京两晚，周二飞回北京": [
                Act("inform", {"domain": "hotel", "city": "南京", "date": "2026-12-03", "nights": 2}),
                Act("inform", {"domain": "flight", "dep_city": "南京", "arr_city": "北京", "date": "2026-12-01"}),
            ],
        },
    )
    (sunday,) = talk(branch, "周四起住南京两晚，周日飞回北京")
    assert sunday.state["queue"][0]["date"] == "2026-12-06", sunday.reply
    (tuesday,) = talk(branch, "周四起住南京两晚，周二飞回北京")
    assert tuesday.state["queue"][0]["date"] == "2026-12-08", tuesday.reply
    assert "12月8日南京→北京的航班" in tuesday.reply, tuesday.reply


def test_not_before_moves_by_whole_weeks():
    assert not_before("2026-12-06", "2026-12-11") == "2026-12-13"
    assert not_before("2026-12-13", "2026-12-11") == "2026-12-13"
    assert not_before("2026-12-11", "2026-12-11") == "2026-12-11"


# 6. a class and berth said with a code: read back in them, not in the class listed
def test_a_code_with_a_class_and_berth_is_read_back_in_them(branch):
    given(
        branch,
        {
            "北京去上海的火车": [Act("inform", RAIL)],
            "那K524的软卧下铺呢": [Act("select", {"code": "K524", "seat_class": "软卧", "berth": "下铺"})],
        },
    )
    listed, turn = talk(branch, "北京去上海的火车", "那K524的软卧下铺呢")
    assert "软卧下铺" not in listed.reply, listed.reply
    item = _pending(branch, turn)
    assert (item["train_no"], item["seat_class"], item["berth"]) == ("K524", "软卧", "下铺"), turn.reply
    assert "308元" in turn.reply, turn.reply


# 7. a question about an offer names it without choosing it
def test_a_question_about_the_second_one_books_nothing(branch):
    given(
        branch,
        {
            "北京去上海的二等座": [Act("inform", SECOND)],
            "what time does the second one leave and when does it arrive": [
                Act("select", {"ordinal": 2}),
                Act("request", {"dep_time": "?", "arr_time": "?"}),
            ],
        },
    )
    _, turn = talk(branch, "北京去上海的二等座", "what time does the second one leave and when does it arrive")
    assert turn.state["open"] == "choose_offer" and turn.state["pending"] is None, turn.reply
    assert "11:10" in turn.reply and "16:04" in turn.reply and "Shall I" not in turn.reply, turn.reply


def test_a_choice_said_with_a_question_is_still_a_choice(branch):
    given(
        branch,
        {
            "北京去上海的二等座": [Act("inform", SECOND)],
            "就第二个吧，几点到？": [Act("select", {"ordinal": 2}), Act("request", {"arr_time": "?"})],
        },
    )
    _, turn = talk(branch, "北京去上海的二等座", "就第二个吧，几点到？")
    assert turn.state["open"] == "confirm_booking" and _pending(branch, turn)["train_no"] == "G5281", turn.reply


# 8. the database gives back what a booking holds, whatever the caller knows of it
def test_cancelling_gives_back_every_seat_and_room_night_booked(travel_db_path):
    db = TravelDB(travel_db_path, scratch=True)
    train = db.search("train", SECOND, limit=1)[0]
    hotel = db.search("hotel", {"city": "南京", "date": "2026-12-02", "nights": 2}, limit=1)[0]
    seats = db.get("train", train["id"])["seats"]
    rooms = db.rooms_free(hotel["id"], "2026-12-02", 2)
    ticket = db.book("train", train, "2026-12-02", "two seats", quantity=2)
    stay = db.book("hotel", hotel, "2026-12-02", "two rooms, two nights", quantity=2, nights=2)
    assert db.get("train", train["id"])["seats"] == seats - 2 and db.rooms_free(hotel["id"], "2026-12-03") is not None
    assert db.cancel(ticket) and db.cancel(stay)
    assert db.get("train", train["id"])["seats"] == seats
    assert db.rooms_free(hotel["id"], "2026-12-02", 2) == rooms
    assert not db.cancel(ticket)  # once only


# the same limits said in words, through both act readers (the reader's fields, the manager's search)
@pytest.mark.parametrize("acts", ["learned", "rules"])
def test_limits_said_in_words_are_kept(travel_db_path, acts):
    branch = TaskBranch(TravelDB(travel_db_path, scratch=True), acts=acts)
    (ride,) = talk(branch, "后天北京去上海的二等座，路上别超过五个钟头")
    assert _listed(ride.reply) == ["G5281", "G1500"], ride.reply
    (group,) = talk(branch, "后天北京到上海的火车，二等座，我们俩一共不超过一千")
    assert _pending(branch, group)["train_no"] == "D8452" and "2张，共764元" in group.reply, group.reply


def test_arriving_too_early_is_refused_whatever_the_day(branch):
    # T475 arrives 06:34 the next day, K524 09:54 the next day (hard seats)
    given(branch, {"七点以前到站的不要": [Act("inform", {**RAIL, "seat_class": "硬座", "arr_after": "07:00"})]})
    (turn,) = talk(branch, "七点以前到站的不要")
    assert turn.state["open"] == "confirm_booking" and _pending(branch, turn)["train_no"] == "K524", turn.reply
    given(branch, {"十点以前到站的不要": [Act("inform", {**RAIL, "seat_class": "硬座", "arr_after": "10:00"})]})
    (none,) = talk(branch, "十点以前到站的不要")
    assert "最早到达时间（10:00）" in none.reply and "T475" not in none.reply, none.reply  # named, never dropped


def test_the_offer_read_back_named_then_refused_is_not_read_back_again(branch):
    given(
        branch,
        {
            "北京去上海的二等座": [Act("inform", SECOND)],
            "第一个": [Act("select", {"ordinal": 1})],
            "D8452太慢，不要": [Act("select", {"code": "D8452"}), Act("deny")],
        },
    )
    *_, turn = talk(branch, "北京去上海的二等座", "第一个", "D8452太慢，不要")
    assert turn.state["open"] == "choose_offer" and turn.state["pending"] is None, turn.reply
    assert "确认预订" not in turn.reply and turn.state["refused"], turn.reply


def test_the_price_of_another_class_of_the_offer_read_back_is_answered(branch):
    asked = [Act("request", {"price": "?", "seat_class": "软卧", "ref": "this"})]
    given(
        branch,
        {
            "北京去上海的硬座": [Act("inform", {**RAIL, "seat_class": "硬座"})],
            "第一个": [Act("select", {"ordinal": 1})],
            "这趟软卧多少钱？": [*asked, Act("request", {"price": "?", "seat_class": "软卧"})],
        },
    )
    *_, turn = talk(branch, "北京去上海的硬座", "第一个", "这趟软卧多少钱？")
    assert "K524：283元" in turn.reply and turn.reply.count("283元") == 1, turn.reply  # its cheapest soft sleeper
    assert "请先告诉我" not in turn.reply and _pending(branch, turn)["seat_class"] == "硬座", turn.reply


def test_where_an_offer_leaves_from_is_said_in_words(branch):
    given(
        branch,
        {
            "trains from Beijing to Shanghai the day after tomorrow": [Act("inform", SECOND)],
            "where does the second one leave from?": [Act("request", {"dep_place": "?", "ordinal": 2})],
        },
    )
    _, turn = talk(
        branch, "trains from Beijing to Shanghai the day after tomorrow", "where does the second one leave from?"
    )
    assert "G5281 leaves from Beijing South Station" in turn.reply and "dep_place" not in turn.reply, turn.reply


def test_that_one_with_a_new_condition_is_no_question_which_one(branch):
    given(
        branch,
        {
            "上海飞北京": [Act("inform", AIR)],
            "那个落首都的不行，要落大兴的": [
                Act("select", {"ref": "this"}),
                Act("modify", {"not_arr_place": ["首都机场"], "arr_place": "大兴机场"}),
            ],
        },
    )
    listed, turn = talk(branch, "上海飞北京", "那个落首都的不行，要落大兴的")
    assert "ZH1189" in listed.reply, listed.reply
    assert "哪一个？" not in turn.reply.split("\n")[0] and "首都机场" not in turn.reply, turn.reply
    assert _pending(branch, turn)["flight_no"] == "HU9746", turn.reply
