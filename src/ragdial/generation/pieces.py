"""Split text into stream pieces (words, Chinese characters, punctuation) that join back to the exact text."""

from __future__ import annotations

import re
from collections.abc import Iterator

_PIECE = re.compile(r"\s*(?:[A-Za-z0-9]+(?:['’.,:-][A-Za-z0-9]+)*|[\u3400-\u9fff\uf900-\ufaff]|\S)|\s+")
_ZH_CLAUSE = re.compile(r"[^。！？；!?;\n]+[。！？；!?;\n]*|[。！？；!?;\n]+")
_EN_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def pieces(text: str) -> Iterator[str]:
    """Words and single CJK characters, each with the whitespace before it; ``"".join`` gives ``text`` back."""
    for match in _PIECE.finditer(text):
        yield match.group(0)


def sentences(text: str, language: str) -> list[str]:
    """Sentences (clauses ending in 。！？； for Chinese), stripped, empty ones dropped."""
    parts = _ZH_CLAUSE.findall(text) if language == "zh" else _EN_SENTENCE.split(text)
    return [p.strip() for p in parts if p.strip()]


def length(text: str, language: str) -> int:
    """Length in characters (Chinese) or words (English)."""
    return len(text.replace(" ", "")) if language == "zh" else len(text.split())
