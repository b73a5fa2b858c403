"""Reply texts of the task branch, Chinese and English, in one place.

The user simulator reads these replies like a person would; the cue phrases it relies on are the ones marked
"cue" below (预订成功/订单号, 确认, 请问, 没有找到, 我可以帮您), so change them together with ``simulator``.
"""

from __future__ import annotations

from typing import Any

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
    },
    "en": {
        "dep_city": "Which city are you leaving from?",
        "arr_city": "Which city are you going to?",
        "date": "Which day do you want to travel?",
        "hotel_date": "Which day do you check in?",
        "city": "Which city do you want to stay in?",
        "domain": "Do you want a flight, a train ticket or a hotel?",
    },
}
GUIDE = {  # cue: 我可以帮您 / I can help
    "zh": "抱歉，这个我帮不上忙。我可以帮您查询和预订机票、火车票和酒店，比如说“明天从北京到上海的机票”。",
    "en": "Sorry, I can't help with that. I can help you find and book flights, train tickets and hotels, "
    "e.g. 'a flight from Beijing to Shanghai tomorrow'.",
}
GREETING = {
    "zh": "您好！我可以帮您查询和预订机票、火车票和酒店，请问有什么需要？",
    "en": "Hello! I can help you find and book flights, train tickets and hotels. What do you need?",
}
BYE = {"zh": "好的，祝您旅途愉快，再见！", "en": "All right, have a good trip. Goodbye!"}


def date_text(iso: str, language: str) -> str:
    year, month, day = iso.split("-")
    del year
    return f"{int(month)}月{int(day)}日" if language == "zh" else f"{iso}"


def item_summary(domain: str, item: dict[str, Any], language: str = "zh") -> str:
    """One line describing a flight, train or hotel row."""
    if domain == "hotel":
        if language == "zh":
            return f"{item['name']} {item['stars']}星 {item['district']} 每晚{item['price']}元"
        return f"{item['name']} {item['stars']}-star, {item['district']}, {item['price']} yuan/night"
    code = item["flight_no"] if domain == "flight" else item["train_no"]
    days = item.get("arr_days", 0)
    arrive = item["arr_time"]
    if days:
        arrive = ("次日" if days == 1 else f"第{days + 1}天") + arrive if language == "zh" else f"{arrive}(+{days}d)"
    seat = item["seat_class"] + item.get("berth", "")
    when = date_text(item["date"], language)
    if language == "zh":
        return (
            f"{code} {when} {item['dep_time']}{item['dep_place']}→{arrive}{item['arr_place']} {seat} {item['price']}元"
        )
    return (
        f"{code} {when} {item['dep_time']} {item['dep_place']} → {arrive} {item['arr_place']} "
        f"{seat} {item['price']} yuan"
    )


def options(domain: str, items: list[dict[str, Any]], total_note: str, language: str) -> str:
    """List options and ask which one (cue: 请问您要订哪一个)."""
    lines = [f"{i}. {item_summary(domain, item, language)}" for i, item in enumerate(items, 1)]
    if language == "zh":
        return f"{total_note}\n" + "\n".join(lines) + "\n请问您要订哪一个？"
    return f"{total_note}\n" + "\n".join(lines) + "\nWhich one would you like?"


def confirm(domain: str, item: dict[str, Any], language: str) -> str:
    """Ask to confirm a booking (cue: 确认预订)."""
    if language == "zh":
        return f"为您预订：{item_summary(domain, item, language)}。请问确认预订吗？"
    return f"I'll book: {item_summary(domain, item, language)}. Shall I confirm the booking?"


def booked(domain: str, item: dict[str, Any], number: int, language: str) -> str:
    """Booking done (cue: 预订成功，订单号 N)."""
    if language == "zh":
        more = "还需要别的帮助吗？比如预订酒店。" if domain != "hotel" else "还需要别的帮助吗？"
        return f"预订成功，订单号{number}：{item_summary(domain, item, language)}。{more}"
    return f"Booked, booking number {number}: {item_summary(domain, item, language)}. Anything else?"
