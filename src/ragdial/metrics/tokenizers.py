"""The tokenisations metrics use, by name (the name goes into every signature).

Word and character tokens come from :mod:`ragdial.text.tokenize`; the others reproduce what an official scorer does.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ragdial.text import tokenize

_DSTC9_ARTICLES = re.compile(r"\b(a|an|the)\b")
_DSTC9_PUNCT = re.compile(r"[!\"#$%&()*+,\-./:;<=>?@\[\]\\^`{|}~_']")


def dstc9_normalize(text: str) -> str:
    """DSTC9 ``scores.py`` normalisation: lower-case, ASCII punctuation and articles to spaces, spaces squeezed."""
    text = _DSTC9_PUNCT.sub(" ", text.lower())
    text = _DSTC9_ARTICLES.sub(" ", text)
    return " ".join(text.split())


def chars(text: str) -> list[str]:
    """Every character except whitespace, punctuation kept (FutureDial ``' '.join(list(s)).split()``)."""
    return [c for c in text if not c.isspace()]


TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "chars": chars,
    "chars-nopunct": tokenize.chinese_chars,
    "words": tokenize.words,
    "whitespace": str.split,
    "dstc9": lambda text: dstc9_normalize(text).split(),
}


def get(name: str) -> Callable[[str], list[str]]:
    """The tokenizer called ``name``."""
    try:
        return TOKENIZERS[name]
    except KeyError:
        raise ValueError(f"unknown tokenizer {name!r}; choose one of {', '.join(TOKENIZERS)}") from None
