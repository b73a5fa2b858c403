"""Tokenisation for Chinese (jieba words, characters) and English (words, optional stemming and stopwords)."""

from __future__ import annotations

import logging
import re
from functools import lru_cache

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_EN_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_PUNCT_SPACE = re.compile(r"[\s\W_]+", re.UNICODE)

EN_STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
    ]
)


def is_chinese(text: str, threshold: float = 0.2) -> bool:
    """True when at least ``threshold`` of the non-space characters are CJK ideographs."""
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return False
    return sum(1 for c in chars if _CJK.match(c)) / len(chars) >= threshold


def detect_language(text: str) -> str:
    """``"zh"`` or ``"en"``."""
    return "zh" if is_chinese(text) else "en"


@lru_cache(maxsize=1)
def _jieba():
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def chinese_words(text: str) -> list[str]:
    """jieba words (precise mode), punctuation and spaces dropped, Latin words lower-cased."""
    return [w.lower() for w in _jieba().lcut(text) if w.strip() and not _PUNCT_SPACE.fullmatch(w)]


def chinese_chars(text: str) -> list[str]:
    """Every non-space, non-punctuation character."""
    return [c for c in text if not c.isspace() and not _PUNCT_SPACE.fullmatch(c)]


def english_words(text: str, stem: bool = False, drop_stopwords: bool = False) -> list[str]:
    """Lower-cased word tokens; optionally Snowball-stemmed and without stopwords."""
    words = _EN_WORD.findall(text.lower())
    if drop_stopwords:
        words = [w for w in words if w not in EN_STOPWORDS]
    if stem:
        words = _stemmer().stemWords(words)
    return words


def words(text: str, language: str | None = None, stem: bool = False, drop_stopwords: bool = False) -> list[str]:
    """Word tokens in the text's language (detected when not given); Chinese text may carry Latin words too."""
    language = language or detect_language(text)
    if language == "zh":
        return chinese_words(text)
    return english_words(text, stem=stem, drop_stopwords=drop_stopwords)
