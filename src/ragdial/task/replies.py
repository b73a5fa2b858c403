"""Reply texts of the task branch, Chinese and English, in one place.

The user simulator reads these replies like a person would; the cue phrases it relies on are the ones marked
"cue" below (预订成功/订单号, 确认预订吗, 请问, 没有找到, 我可以帮您), so change them together with ``simulator``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

from ragdial.task import english as E
from ragdial.task.values import as_int, as_str

DOMAIN_NAMES = {
    "zh": {"flight": "航班", "train": "车次", "hotel": "酒店"},
    "en": {"flight": "flights", "train": "trains", "hotel": "hotels"},
}
TICKET_NAMES = {
    "zh": {"flight": "机票", "train": "火车票", "hotel": "酒店"},
    "en": {"flight": "flight", "train": "train ticket", "hotel": "hotel room"},
}
SLOT_QUESTIONS = {  # cue: 请问 + the slot's words
    "zh": {
        "dep_city": "请问您从哪个城市出发？",
        "arr_city": "请问您要去哪个城市？",
        "date": "请问您哪天出发？",
        "hotel_date": "请问您哪天入住？",
        "city": "请问您要住在哪个城市？",
        "domain": "请问您要订机票、火车票还是酒店？",
        "trip_domain": "请问您想坐飞机还是坐火车？",
    },
    "en": {
        "dep_city": "Which city are you leaving from?",
        "arr_city": "Which city are you going to?",
        "date": "Which day do you want to travel?",
        "hotel_date": "Which day do you check in?",
        "city": "Which city do you want to stay in?",
        "domain": "Do you want a flight, a train ticket or a hotel?",
        "trip_domain": "Would you like to fly or take the train?",
    },
}
CAN_DO = {  # cue: 我可以帮您 / I can help
    "zh": "我可以帮您查询和预订机票、火车票和酒店",
    "en": "I can help you find and book flights, train tickets and hotels",
}
GUIDE = {
    "zh": "抱歉，这个我帮不上忙。" + CAN_DO["zh"] + "。",
    "en": "Sorry, I can't help with that. " + CAN_DO["en"] + ".",
}
GREETING = {
    "zh": "您好！" + CAN_DO["zh"] + "，请问有什么需要？",
    "en": "Hello! " + CAN_DO["en"] + ". What do you need?",
}
BYE = {"zh": "好的，祝您旅途愉快，再见！", "en": "All right, have a good trip. Goodbye!"}
CHOOSE = {"zh": "请问您要订哪一个？", "en": "Which one would you like?"}
CONFIRM_Q = {"zh": "请问确认预订吗？", "en": "Shall I confirm the booking?"}
ANYTHING_ELSE = {"zh": "还需要别的帮助吗？", "en": "Anything else?"}
SLOT_NAMES = {
    "zh": {
        "max_price": "预算",
        "code": "车次/航班号",
        "period": "出发时段",
        "time_from": "出发时间",
        "time_to": "出发时间",
        "seat_class": "座位等级",
        "berth": "铺位",
        "train_kinds": "车型",
        "airline": "航空公司",
        "dep_place": "出发站/机场",
        "arr_place": "到达站/机场",
        "district": "区域",
        "brand": "酒店品牌",
        "stars": "星级",
        "min_stars": "星级",
        "rooms": "房间数",
        "nights": "连住晚数",
        "passengers": "票数",
        "date": "日期",
        "city": "城市",
        "dep_city": "出发城市",
        "arr_city": "到达城市",
        "guests": "入住人数",
        "check_out": "退房日期",
        "not_brand": "排除的酒店品牌",
        "not_airline": "排除的航空公司",
        "not_train_kinds": "排除的车型",
        "not_stars": "排除的星级",
        "not_district": "排除的区域",
        "arr_by": "到达时间",
        "arr_after": "最早到达时间",
        "max_total": "总预算",
        "min_price": "最低价格",
        "max_duration": "行程时长",
        "not_dep_place": "排除的出发站/机场",
        "not_arr_place": "排除的到达站/机场",
    },
    "en": {
        "max_price": "budget",
        "code": "train or flight number",
        "period": "time of day",
        "time_from": "departure time",
        "time_to": "departure time",
        "seat_class": "class",
        "berth": "berth",
        "train_kinds": "train type",
        "airline": "airline",
        "dep_place": "departure station/airport",
        "arr_place": "arrival station/airport",
        "district": "district",
        "brand": "hotel brand",
        "stars": "star rating",
        "min_stars": "star rating",
        "rooms": "number of rooms",
        "nights": "number of nights",
        "passengers": "number of tickets",
        "date": "date",
        "city": "city",
        "dep_city": "departure city",
        "arr_city": "destination city",
        "guests": "guests",
        "check_out": "check-out date",
        "not_brand": "excluded hotel brands",
        "not_airline": "excluded airlines",
        "not_train_kinds": "excluded train types",
        "not_stars": "excluded star ratings",
        "not_district": "excluded districts",
        "arr_by": "arrival time",
        "arr_after": "earliest arrival",
        "max_total": "total budget",
        "min_price": "lowest price",
        "max_duration": "travel time",
        "not_dep_place": "excluded departure stations/airports",
        "not_arr_place": "excluded arrival stations/airports",
    },
}


def only_left(when: str, left: Mapping[str, int], needed: int, unit: str, language: str) -> str:
    """Fewer seats or rooms left than asked, said as such (never "sold out"): 抱歉，12月7日符合条件的G1只剩2张，
    不够3张。 / 抱歉，12月7日起住2晚，全季只剩1间，不够2间。 ``when`` leads in (with its own comma for a stay)."""
    if language == "zh":
        said = "、".join(f"{name}只剩{n}{unit}" for name, n in left.items())
        return f"抱歉，{when}{said}，不够{needed}{unit}。"
    said = ", ".join(f"{name} has only {n} left" for name, n in left.items())
    return f"Sorry, {when} {said}, not enough for {needed}."


def date_text(iso: str, language: str) -> str:
    year, month, day = iso.split("-")
    del year
    return f"{int(month)}月{int(day)}日" if language == "zh" else f"{iso}"


def code_of(item: Mapping[str, object]) -> str:
    return str(item.get("flight_no") or item.get("train_no") or item.get("code") or "")


def item_summary(domain: str | None, item: Mapping[str, object], language: str = "zh") -> str:
    """One line describing a flight, train or hotel row."""
    if domain == "hotel":
        if language == "zh":
            return f"{item['name']} {item['stars']}星 {item['district']} 每晚{item['price']}元"
        return (
            f"{E.hotel(as_str(item['name']))} {item['stars']}-star, {E.value(as_str(item['district']))}, "
            f"{item['price']} yuan/night"
        )
    code = code_of(item)
    days = as_int(item.get("arr_days") or 0)
    arrive = as_str(item["arr_time"])
    if days:
        arrive = ("次日" if days == 1 else f"第{days + 1}天") + arrive if language == "zh" else f"{arrive}(+{days}d)"
    seat = as_str(item["seat_class"]) + as_str(item.get("berth", ""))
    when = date_text(as_str(item["date"]), language)
    if language == "zh":
        return (
            f"{code} {when} {item['dep_time']}{item['dep_place']}→{arrive}{item['arr_place']} {seat} {item['price']}元"
        )
    seat = E.seat(as_str(item["seat_class"]), as_str(item.get("berth", "")))
    return (
        f"{code} {when} {item['dep_time']} {E.place(as_str(item['dep_place']))} → {arrive} "
        f"{E.place(as_str(item['arr_place']))}, {seat}, {item['price']} yuan"
    )


def listing(domain: str | None, items: Sequence[Mapping[str, object]], language: str) -> str:
    return "\n".join(f"{i}. {item_summary(domain, item, language)}" for i, item in enumerate(items, 1))


def options(domain: str | None, items: Sequence[Mapping[str, object]], head: str, language: str) -> str:
    """List options and ask which one (cue: 请问您要订哪一个)."""
    return f"{head}\n{listing(domain, items, language)}\n{CHOOSE[language]}"


def offer_details(domain: str, item: Mapping[str, object], pending: Mapping[str, object], language: str) -> str:
    """The whole offer as it will be booked: item, dates, quantity and total price."""
    zh = language == "zh"
    line = item_summary(domain, item, language)
    if domain == "hotel":
        nights, rooms = as_int(pending.get("nights") or 1), as_int(pending.get("rooms") or 1)
        check_in = as_str(pending["date"])
        check_out = (dt.date.fromisoformat(check_in) + dt.timedelta(days=nights)).isoformat()
        total = as_int(item["price"]) * nights * rooms
        if zh:
            return (
                f"{line}，{date_text(check_in, 'zh')}入住，住{nights}晚（{date_text(check_out, 'zh')}退房），"
                f"{rooms}间，共{total}元"
            )
        return (
            f"{line}, check in {check_in}, {nights} night(s) (out {check_out}), {rooms} room(s), {total} yuan in total"
        )
    count = as_int(pending.get("passengers") or 1)
    total = as_int(item["price"]) * count
    return f"{line}，{count}张，共{total}元" if zh else f"{line}, {count} ticket(s), {total} yuan in total"


def confirm(domain: str, item: Mapping[str, object], pending: Mapping[str, object], language: str) -> str:
    """Read the whole offer back and ask to confirm (cue: 为您预订：… 请问确认预订吗)."""
    details = offer_details(domain, item, pending, language)
    if language == "zh":
        return f"即将为您预订：{details}。{CONFIRM_Q['zh']}"  # (not booked yet: the yes books it)
    return f"I'll book: {details}. {CONFIRM_Q['en']}"


def booked(domain: str, item: Mapping[str, object], pending: Mapping[str, object], number: int, language: str) -> str:
    """Booking done (cue: 预订成功，订单号 N)."""
    details = offer_details(domain, item, pending, language)
    if language == "zh":
        return f"预订成功，订单号{number}：{details}。"
    return f"Booked, booking number {number}: {details}."


# relative preferences (便宜点的 / 早一点的): what the new search found, or that nothing is beyond the offers shown
RELATIVE_FOUND = {
    "zh": {"cheaper": "更便宜的有：", "pricier": "价格高一些的有：", "earlier": "更早的有：", "later": "更晚的有："},
    "en": {"cheaper": "Cheaper ones:", "pricier": "Pricier ones:", "earlier": "Earlier ones:", "later": "Later ones:"},
}
RELATIVE_NONE = {
    "zh": {
        "cheaper": "没有比这更便宜的了。",
        "pricier": "没有比这更贵的了。",
        "earlier": "在您的条件下没有更早的了。",
        "later": "在您的条件下没有更晚的了。",
    },
    "en": {
        "cheaper": "There is nothing cheaper.",
        "pricier": "There is nothing pricier.",
        "earlier": "Nothing earlier fits your conditions.",
        "later": "Nothing later fits your conditions.",
    },
}
