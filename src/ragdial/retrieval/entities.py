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
_GENERIC = frozenset({"the", "hotel", "restaurant", "guest house", "guesthouse", "inn", "house", "lodge"})


def normalise(text: str) -> str:
    """Lower-case, punctuation to single spaces, padded with spaces for whole-word matching."""
    text = _NON_WORD.sub(" ", text.lower()).strip()
    return f" {text} "


def aliases(name: str) -> set[str]:
    """The normalised forms a name may take in a turn (as written, without brackets, without a leading 'the')."""
    forms = {name, _BRACKETS.sub("", name)}
    out = set()
    for form in forms:
        norm = normalise(form)
        if norm.startswith(" the "):
            norm = norm[4:]
        out.add(norm)
        out.add(norm.replace(" guest house ", " guesthouse "))
    min_len = 2 if any(_CJK.search(a) for a in out) else 3
    return {a for a in out if len(a.strip()) >= min_len and a.strip() not in _GENERIC}


@dataclass(frozen=True)
class Mention:
    entity: str
    turn: int  # index in the context


class EntityTracker:
    """Finds the KB's entity names in dialog turns."""

    def __init__(self, items: Iterable[Knowledge]) -> None:
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
                if not any(s < end and start < e for s, e in taken):
                    taken.append((start, end))
                    hits.extend((start, n) for n in sorted(names))
                    break
                start = norm.find(needle, start + 1)
        seen: dict[str, None] = {}
        for _, name in sorted(hits):
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
