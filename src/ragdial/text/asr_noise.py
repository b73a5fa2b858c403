"""Reproducible ASR-noise simulation: Chinese pinyin-homophone substitution, English sound-alike words.

``corrupt(text, rate, seed)`` replaces each eligible unit with probability ``rate``: a Chinese character by another
common character with the same toneless pinyin (e.g. 是 -> 事), an English word by a sound-alike from a small table
(there -> their). The same text, rate and seed always give the same result.
"""

from __future__ import annotations

import dataclasses
import os
import random
import re
from collections.abc import Sequence
from functools import lru_cache

from ragdial.schema import Example, Speaker, Turn
from ragdial.text.tokenize import detect_language

_CJK = re.compile(r"[\u4e00-\u9fff]")
_EN_TOKEN = re.compile(r"[A-Za-z']+|[^A-Za-z']+")
MIN_CHAR_FREQUENCY = 100

_SOUND_ALIKE_GROUPS = [
    ("there", "their", "they're"),
    ("to", "two", "too"),
    ("for", "four"),
    ("right", "write"),
    ("see", "sea"),
    ("here", "hear"),
    ("know", "no"),
    ("new", "knew"),
    ("by", "buy", "bye"),
    ("week", "weak"),
    ("meet", "meat"),
    ("hour", "our"),
    ("one", "won"),
    ("eight", "ate"),
    ("fair", "fare"),
    ("wait", "weight"),
    ("road", "rode"),
    ("whole", "hole"),
    ("where", "wear"),
    ("which", "witch"),
    ("would", "wood"),
    ("your", "you're"),
    ("its", "it's"),
    ("sale", "sail"),
    ("stair", "stare"),
    ("suite", "sweet"),
    ("plane", "plain"),
    ("peace", "piece"),
    ("rest", "wrest"),
    ("room", "rheum"),
    ("inn", "in"),
    ("site", "sight", "cite"),
    ("pool", "pull"),
    ("free", "three"),
    ("park", "bark"),
    ("book", "look"),
    ("pets", "bets"),
    ("wifi", "hi-fi"),
    ("check", "cheque"),
    ("dinner", "diner"),
    ("bar", "bah"),
    ("serve", "surf"),
    ("seat", "sit"),
    ("tea", "tee"),
    ("cheap", "chip"),
    ("then", "than"),
    ("accept", "except"),
]
SOUND_ALIKES: dict[str, tuple[str, ...]] = {
    word: tuple(w for w in group if w != word) for group in _SOUND_ALIKE_GROUPS for word in group
}


@lru_cache(maxsize=1)
def _homophones() -> dict[str, tuple[tuple[str, int], ...]]:
    """Toneless pinyin -> (character, frequency) for common characters with that reading (jieba's dictionary)."""
    import jieba
    from pypinyin import Style, lazy_pinyin

    by_reading: dict[str, list[tuple[str, int]]] = {}
    path = os.path.join(os.path.dirname(jieba.__file__), "dict.txt")
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            parts = line.split()
            if len(parts) >= 2 and len(parts[0]) == 1 and _CJK.match(parts[0]) and int(parts[1]) >= MIN_CHAR_FREQUENCY:
                reading = lazy_pinyin(parts[0], style=Style.NORMAL)[0]
                by_reading.setdefault(reading, []).append((parts[0], int(parts[1])))
    return {reading: tuple(chars) for reading, chars in by_reading.items()}


@lru_cache(maxsize=8192)
def homophones(char: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Common characters that sound like ``char`` (toneless, ``char`` excluded) and their corpus frequencies."""
    from pypinyin import Style, lazy_pinyin

    reading = lazy_pinyin(char, style=Style.NORMAL)[0]
    pairs = [(c, f) for c, f in _homophones().get(reading, ()) if c != char]
    return tuple(c for c, _ in pairs), tuple(f for _, f in pairs)


def _corrupt_zh(text: str, rate: float, rng: random.Random) -> str:
    out = []
    for char in text:
        if _CJK.match(char) and rng.random() < rate:
            options, weights = homophones(char)
            if options:  # frequent characters are the likelier mis-hearings
                char = rng.choices(options, weights)[0]
        out.append(char)
    return "".join(out)


def _corrupt_en(text: str, rate: float, rng: random.Random) -> str:
    out = []
    for piece in _EN_TOKEN.findall(text):
        lower = piece.lower()
        if lower in SOUND_ALIKES and rng.random() < rate:
            swap = rng.choice(SOUND_ALIKES[lower])
            piece = swap.capitalize() if piece[:1].isupper() else swap
        out.append(piece)
    return "".join(out)


def corrupt(text: str, rate: float, seed: int = 0, language: str | None = None) -> str:
    """``text`` with each eligible character (zh) or word (en) swapped for a sound-alike with probability ``rate``."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"noise rate must be in [0, 1], not {rate}")
    if not text or rate == 0.0:
        return text
    rng = random.Random(f"{seed}\x00{text}")
    if (language or detect_language(text)) == "zh":
        return _corrupt_zh(text, rate, rng)
    return _corrupt_en(text, rate, rng)


def corrupt_turns(
    turns: Sequence[Turn], rate: float, seed: int = 0, speakers: Sequence[Speaker] = (Speaker.USER,)
) -> list[Turn]:
    """Copies of ``turns`` with the given speakers' text corrupted (ASR only hears the user by default)."""
    return [
        dataclasses.replace(t, text=corrupt(t.text, rate, seed + i)) if t.speaker in speakers else t
        for i, t in enumerate(turns)
    ]


def corrupt_context(example: Example, rate: float, seed: int = 0) -> Example:
    """A copy of ``example`` whose context user turns carry simulated ASR noise."""
    return dataclasses.replace(example, context=corrupt_turns(example.context, rate, seed))
