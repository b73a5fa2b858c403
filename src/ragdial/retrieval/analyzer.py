"""Retrieval tokens: ``ragdial.text.tokenize`` words (stemmed, no stopwords for English), optionally plus pinyin."""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import TypedDict, cast

from ragdial.jsontypes import JSONDict
from ragdial.text.tokenize import detect_language, words

PINYIN_PREFIX = "py:"


_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")


@lru_cache(maxsize=65536)
def _syllables(run: str) -> tuple[str, ...]:
    from pypinyin import Style, lazy_pinyin

    return tuple(lazy_pinyin(run, style=Style.NORMAL, errors="ignore"))


def pinyin_bigrams(text: str) -> list[str]:
    """Toneless pinyin syllable bigrams over each run of Chinese characters, independent of word segmentation
    (a homophone error also changes how jieba segments, so word-level pinyin would not match)."""
    out: list[str] = []
    for run in _CJK_RUN.findall(text):
        syllables = _syllables(run)
        out.extend(f"{PINYIN_PREFIX}{a}_{b}" for a, b in itertools.pairwise(syllables))
    return out


class AnalyzerOptions(TypedDict, total=False):
    """An ``Analyzer``'s fields as a config gives them."""

    language: str | None
    stem: bool
    drop_stopwords: bool
    pinyin: bool


@dataclass(frozen=True)
class Analyzer:
    """How texts become BM25 tokens. ``language=None`` detects per text, so a mixed KB works.

    ``pinyin`` adds toneless pinyin syllable bigrams, so an ASR homophone error (同音字) still matches.
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
            tokens = tokens + pinyin_bigrams(text)
        return tokens

    def to_dict(self) -> JSONDict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Analyzer:
        options = {k: data[k] for k in ("language", "stem", "drop_stopwords", "pinyin") if k in data}
        return cls(**cast(AnalyzerOptions, options))
