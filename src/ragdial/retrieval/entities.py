"""Entity tracking: which knowledge-base entities a dialog is talking about, turn by turn.

Entity names come from the items' ``fields["entity"]`` (DSTC entity names, KG-triple heads). A name is found in a
turn by normalised substring match (whole words for Latin text), longest names first so "Hotel A Express" wins
over "Hotel A". The focus of a context is the entities of the latest turn that names any, plus, with
``carry_turns``, those of earlier turns within that distance.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ragdial.schema import Knowledge, Turn

_BRACKETS = re.compile(r"[（(\[【《].*?[）)\]】》]")
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u9fff]")
_GENERIC = frozenset(
    {"the", "hotel", "restaurant", "guest house", "guesthouse", "inn", "house", "lodge", "bar", "cafe", "city"}
)
_APOSTROPHE = re.compile(r"['’`]")
_SUFFIXES = (" restaurant ", " hotel ", " guest house ", " guesthouse ", " bed and breakfast ", " b and b ")


def normalise(text: str) -> str:
    """Lower-case, '&' as 'and', apostrophes dropped, punctuation to single spaces, padded with spaces."""
    text = _APOSTROPHE.sub("", text.lower().replace("&", " and "))
    text = _NON_WORD.sub(" ", text).strip()
    return f" {text} "


def aliases(name: str) -> set[str]:
    """The normalised forms a name may take in a turn: as written, without brackets, without a leading 'the',
    without a generic suffix ("Fitzbillies" for "Fitzbillies Restaurant"), "guesthouse"/"house" for "guest house"."""
    forms = {name, _BRACKETS.sub("", name)}
    out = set()
    for form in forms:
        norm = normalise(form)
        if norm.startswith(" the "):
            norm = norm[4:]
        out.add(norm)
        out.add(norm.replace(" guest house ", " guesthouse "))
        out.add(norm.replace(" guest house ", " house "))
        for suffix in _SUFFIXES:
            if norm.endswith(suffix) and len(norm) - len(suffix) >= 5:
                out.add(norm[: -len(suffix) + 1])
    min_len = 2 if any(_CJK.search(a) for a in out) else 3
    return {a for a in out if len(a.strip()) >= min_len and a.strip() not in _GENERIC}


@dataclass(frozen=True)
class Mention:
    entity: str
    turn: int  # index in the context


def _pinyin_line(text: str) -> str:
    """The toneless pinyin of the Chinese characters in ``text``, space-separated and padded."""
    from pypinyin import Style, lazy_pinyin

    return " " + " ".join(lazy_pinyin("".join(_CJK.findall(text)), style=Style.NORMAL, errors="ignore")) + " "


class EntityTracker:
    """Finds the KB's entity names in dialog turns.

    With ``pinyin``, Chinese names of three or more characters also match by toneless pinyin, so a name an ASR
    error spelled with homophones (梅花杉 for 梅花山) is still found.
    """

    def __init__(self, items: Iterable[Knowledge], pinyin: bool = False) -> None:
        table: dict[str, set[str]] = {}
        for item in items:
            name = item.fields.get("entity")
            if isinstance(name, str) and name:
                for alias in aliases(name):
                    table.setdefault(alias, set()).add(name)
        # longest first, so a longer name claims its span before a name it contains
        self._aliases = sorted(table.items(), key=lambda kv: -len(kv[0]))
        self.entities = sorted({e for names in table.values() for e in names})
        self._memo: dict[str, list[str]] = {}
        self._pinyin: list[tuple[str, set[str]]] = []
        if pinyin:
            by_sound: dict[str, set[str]] = {}
            for alias, names in self._aliases:
                chars = _CJK.findall(alias)
                if len(chars) >= 3 and len(chars) == len(alias.strip()):
                    by_sound.setdefault(_pinyin_line(alias), set()).update(names)
            self._pinyin = sorted(by_sound.items(), key=lambda kv: -len(kv[0]))

    def __len__(self) -> int:
        return len(self.entities)

    def find(self, text: str) -> list[str]:
        """Entity names in ``text``, in order of first appearance."""
        if not self._aliases or not text:
            return []
        if text in self._memo:
            return self._memo[text]
        if len(self._memo) > 100_000:
            self._memo.clear()
        self._memo[text] = found = self._find(text)
        return found

    def _find(self, text: str) -> list[str]:
        norm = normalise(text)
        cjk = bool(_CJK.search(norm))
        hits: list[tuple[int, str]] = []
        taken: list[tuple[int, int]] = []
        for alias, names in self._aliases:
            needle = alias if not cjk else alias.strip()
            if not needle.strip() or len(needle) > len(norm):
                continue
            start = norm.find(needle)
            while start != -1:
                end = start + len(needle)
                inner = (start + 1, end - 1) if needle.startswith(" ") else (start, end)  # padding may be shared
                if not any(s < inner[1] and inner[0] < e for s, e in taken):
                    taken.append(inner)
                    hits.extend((start, n) for n in sorted(names))
                    break
                start = norm.find(needle, start + 1)
        seen: dict[str, None] = {}
        for _, name in sorted(hits):
            seen.setdefault(name, None)
        if self._pinyin and cjk:
            sound = _pinyin_line(text)
            for syllables, names in self._pinyin:
                if syllables in sound:
                    for name in sorted(names):
                        seen.setdefault(name, None)
        return list(seen)

    def mentions(self, context: Sequence[Turn]) -> list[Mention]:
        return [Mention(e, i) for i, turn in enumerate(context) for e in self.find(turn.text)]

    def focus(self, context: Sequence[Turn], carry_turns: int = 0) -> list[str]:
        """Entities under discussion: the latest turn naming any, plus those within ``carry_turns`` before it."""
        for index in range(len(context) - 1, -1, -1):
            found = self.find(context[index].text)
            if found:
                focus = dict.fromkeys(found)
                for back in range(max(0, index - carry_turns), index):
                    focus.update(dict.fromkeys(self.find(context[back].text)))
                return list(focus)
        return []

    def last_mention(self, context: Sequence[Turn]) -> dict[str, int]:
        """For each entity mentioned, how many turns ago it was last named (0 = the last turn)."""
        out: dict[str, int] = {}
        for index in range(len(context) - 1, -1, -1):
            for name in self.find(context[index].text):
                out.setdefault(name, len(context) - 1 - index)
        return out
