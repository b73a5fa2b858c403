"""Text before reading: language, typing slips and nicknames put into known words, clauses."""

from __future__ import annotations

import re

from ragdial.task.acts.words import CITY_NICKNAMES, CONNECTIVES
from ragdial.task.db import Gazetteer


def _is_english(text: str) -> bool:
    letters = sum(c.isascii() and c.isalpha() for c in text)
    han = sum("\u4e00" <= c <= "\u9fff" for c in text)
    return letters > 0 and han == 0


# 对了 / 哦对了 / 对了对了 ("oh, by the way") opening a further clause: a discourse marker, not 对 (a yes books)
AFTERTHOUGHT = re.compile(
    r"(?:^|(?<=[，,。！!；;\s]))[哦噢啊哎诶欸呃嗯]*(?:对了)+[，,。！!~～…\s]*(?=[^，,。！!~～…\s])"
)


def without_afterthought_marker(text: str) -> str:
    """``text`` without the 对了 that opens an afterthought (对了，改成住两晚 -> 改成住两晚); 对了 said alone stays."""
    return AFTERTHOUGHT.sub("", text.strip())


def _normalise(text: str, gaz: Gazetteer) -> str:
    """Typing slips and mixed-language words in a Chinese utterance, put into the words the parser knows."""
    text = without_afterthought_marker(text)
    text = text.replace("俩", "两个").replace("仨", "三个")  # colloquial numbers: 俩人 = 两个人
    text = re.sub(r"([上中下卧])辅", r"\1铺", text)
    text = text.replace("仓", "舱") if re.search(r"(经济|商务|头等|公务)仓", text) else text
    for nick, city in CITY_NICKNAMES.items():
        text = text.replace(nick, city)
    for place in sorted(gaz.places, key=len, reverse=True):
        short = place[:-1] if place.endswith("站") else None
        if short and short not in gaz.cities and len(short) >= 3:
            text = re.sub(rf"{re.escape(short)}(?!站)", place, text)
    if not _is_english(text):
        names = sorted((k for k in gaz.cities if k.isascii()), key=len, reverse=True)
        for name in names:
            text = re.sub(rf"(?i)(?<![a-z]){re.escape(name)}(?![a-z])", gaz.cities[name], text)
        for word, zh in (("flight", "航班"), ("hotel", "酒店"), ("train", "火车")):
            text = re.sub(rf"(?i)(?<![a-z]){word}s?(?![a-z])", zh, text)
    return text


def _clauses(text: str) -> list[tuple[str, bool]]:
    """(clause, is a question) pieces of an utterance, in order."""
    english = _is_english(text)
    # one window or one price range: between 2 and 5 pm / between 300 and 500
    text = re.sub(r"(?i)\b(between\s+[¥$]?\d{1,5}(?::\d\d)?\s*(?:am|pm|yuan|rmb)?)\s+and\s+", r"\1 to ", text)
    # me and my wife / my husband and I: who travels, no second clause
    text = re.sub(r"(?i)\b(me|i|my [a-z]+)\s+and\s+(my [a-z]+|i|me)\b", r"\1 & \2", text)
    marked = CONNECTIVES.sub(lambda m: "|" + m.group(0).strip() + (" " if m.group(0).endswith(" ") else ""), text)
    if english:
        parts = re.split(r"([,.;!?|]+)", marked)
    else:
        parts = re.split(r"([，,。；;！!？?|…~]+|\s+(?=[^\sA-Za-z0-9])|(?<=[^\sA-Za-z0-9])\s+)", marked)
    out: list[tuple[str, bool]] = []
    for i in range(0, len(parts), 2):
        piece = parts[i].strip() if parts[i] else ""
        sep = parts[i + 1] if i + 1 < len(parts) else ""
        if piece:
            out.append((piece, "?" in (sep or "") or "？" in (sep or "")))
    return out
