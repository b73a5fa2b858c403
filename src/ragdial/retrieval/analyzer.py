"""Retrieval tokens: ``ragdial.text.tokenize`` words (stemmed, no stopwords for English), optionally plus pinyin."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from ragdial.text.tokenize import detect_language, words

PINYIN_PREFIX = "py:"


@lru_cache(maxsize=65536)
def _pinyin(word: str) -> str:
    from pypinyin import Style, lazy_pinyin

    return "".join(lazy_pinyin(word, style=Style.NORMAL, errors="ignore"))


@dataclass(frozen=True)
class Analyzer:
    """How texts become BM25 tokens. ``language=None`` detects per text, so a mixed KB works.

    ``pinyin`` adds a toneless pinyin token for each Chinese word, so an ASR homophone error (同音字) still matches.
    """

    language: str | None = None
    stem: bool = True
    drop_stopwords: bool = True
    pinyin: bool = False

    def __call__(self, text: str) -> list[str]:
        if not text:
            return []
        language = self.language or detect_language(text)
        tokens = words(text, language, stem=self.stem, drop_stopwords=self.drop_stopwords)
        if self.pinyin and language == "zh":
            tokens = tokens + [PINYIN_PREFIX + _pinyin(t) for t in tokens if not t.isascii() and _pinyin(t)]
        return tokens

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Analyzer:
        return cls(**{k: data[k] for k in ("language", "stem", "drop_stopwords", "pinyin") if k in data})
