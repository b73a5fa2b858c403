"""Entity tracking: which knowledge-base entities a dialog is talking about, turn by turn.

Entity names come from the items' ``fields["entity"]`` (DSTC entity names, KG-triple heads). A name is found in a
turn by normalised substring match (whole words for Latin text), longest names first so "Hotel A Express" wins
over "Hotel A". The focus of a context is the entities of the latest turn that names any, plus, with
``carry_turns``, those of earlier turns within that distance.

What a user calls an entity is learnt from the knowledge base itself (:func:`partial_names`): a part of a name
("Stazione" for "Stazione Restaurant and Coffee Bar", "De Luca Cucina") is an alias when no other entity's name
has it and the KB's texts about other entities hardly use it. Latin-script names also match with one typing
error per long word ("cambrdige belfry", "caffee uno"), and a one-word alias followed by "street" or "road" is
an address, not the entity.
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


_ADDRESS_WORDS = frozenset({"street", "st", "road", "rd", "lane", "avenue", "way", "drive", "square"})
_FUNCTION = frozenset({"the", "a", "an", "and", "of", "at", "in", "on", "by", "de", "la", "le", "du", "el"})


def _spans(tokens: Sequence[str], longest: int = 4) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for n in range(1, longest + 1) for i in range(len(tokens) - n + 1)}


def partial_names(items: Sequence[Knowledge], max_other_items: int = 2) -> dict[str, set[str]]:
    """Parts of entity names that name one entity only, learnt from the KB (normalised alias -> names).

    A part is a run of up to four words of a name (as :func:`aliases` forms it), not starting or ending with a
    function word or a generic word, at least 5 letters long, found in no other entity's name, and used in at
    most ``max_other_items`` item texts of other entities; a single word must be the name's first (people drop
    the end of a name: "Stazione", not "Palace" for "Tandoori Palace")."""
    forms: dict[str, set[str]] = {}
    for item in items:
        name = item.fields.get("entity")
        if isinstance(name, str) and name and not _CJK.search(name):
            forms.setdefault(name, set()).update(aliases(name))
    owner: dict[tuple[str, ...], set[str]] = {}
    firsts: set[tuple[str, tuple[str, ...]]] = set()
    for name, names in forms.items():
        for form in names:
            tokens = form.split()
            for span in _spans(tokens):
                owner.setdefault(span, set()).add(name)
            firsts.update((name, span) for span in _spans(tokens) if span[0] == tokens[0])
    candidates: dict[tuple[str, ...], str] = {}
    for span, names in owner.items():
        if len(names) != 1 or span[0] in _FUNCTION or span[-1] in _FUNCTION:
            continue
        if span[0] in _GENERIC or span[-1] in _GENERIC or len("".join(span)) < 5:
            continue
        name = next(iter(names))
        if len(span) == 1 and ((name, span) not in firsts or len(span[0]) < 6):
            continue
        candidates[span] = name
    if not candidates:
        return {}
    used: dict[tuple[str, ...], int] = {}
    for item in items:
        entity = item.fields.get("entity")
        present = _spans(normalise(item.text).split()) & candidates.keys()
        for span in present:
            if candidates[span] != entity:
                used[span] = used.get(span, 0) + 1
    out: dict[str, set[str]] = {}
    for span, name in candidates.items():
        if used.get(span, 0) <= max_other_items:
            out.setdefault(f" {' '.join(span)} ", set()).add(name)
    return out


def _one_edit(a: str, b: str) -> bool:
    """At most one insertion, deletion, substitution or swap of neighbours between ``a`` and ``b``."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1 :]


def _near(word: str, target: str) -> bool:
    """``word`` is ``target`` or, for words of 5+ letters sharing the first letter, one typing error away."""
    if word == target:
        return True
    return len(target) >= 5 and len(word) >= 4 and word[0] == target[0] and _one_edit(word, target)


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

    def __init__(self, items: Iterable[Knowledge], pinyin: bool = False, learn: bool = True) -> None:
        items = list(items)
        table: dict[str, set[str]] = {}
        for item in items:
            name = item.fields.get("entity")
            if isinstance(name, str) and name:
                for alias in aliases(name):
                    table.setdefault(alias, set()).add(name)
        # typing errors are forgiven in whole names only: two or more words, or one word of 6+ letters
        self._fuzzy = [
            (alias.split(), names)
            for alias, names in sorted(table.items(), key=lambda kv: -len(kv[0]))
            if learn and not _CJK.search(alias) and (len(alias.split()) > 1 or len(alias.strip()) >= 6)
        ]
        # a name's first word, by (first letter, length): a typing error keeps the first letter and changes the
        # length by at most one, so a turn's word only needs comparing with names indexed under its neighbours
        self._fuzzy_by_key: dict[tuple[str, int], list[int]] = {}
        for order, (alias_words, _) in enumerate(self._fuzzy):
            self._fuzzy_by_key.setdefault((alias_words[0][0], len(alias_words[0])), []).append(order)
        if learn:
            for alias, names in partial_names(items).items():
                if alias not in table:
                    table[alias] = names
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
                if not any(s < inner[1] and inner[0] < e for s, e in taken) and not self._address(alias, norm, end):
                    taken.append(inner)
                    hits.extend((start, n) for n in sorted(names))
                    break
                start = norm.find(needle, start + 1)
        if not cjk and self._fuzzy:
            hits.extend(self._fuzzy_hits(norm, taken))
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

    def _address(self, alias: str, norm: str, end: int) -> bool:
        """A one-word alias that is part of a name, followed by an address word ("Bridge Street")."""
        if " " in alias.strip():
            return False
        following = norm[end:].split(maxsplit=1)
        return bool(following) and following[0] in _ADDRESS_WORDS

    def _fuzzy_hits(self, norm: str, taken: list[tuple[int, int]]) -> list[tuple[int, str]]:
        """Names written with one typing error per long word, over words no exact match claimed."""
        words_at: list[tuple[int, str]] = []
        position = 0
        for word in norm.split():
            position = norm.index(word, position)
            words_at.append((position, word))
            position += len(word)
        free = [not any(s <= p < e for s, e in taken) for p, _ in words_at]
        matches = []
        for i, (_, word) in enumerate(words_at):
            if not free[i]:
                continue
            for length in (len(word) - 1, len(word), len(word) + 1):
                for order in self._fuzzy_by_key.get((word[0], length), ()):
                    alias_words = self._fuzzy[order][0]
                    window = [w for _, w in words_at[i : i + len(alias_words)]]
                    if (
                        len(window) == len(alias_words)
                        and window != alias_words
                        and all(_near(w, t) for w, t in zip(window, alias_words, strict=True))
                    ):
                        matches.append((order, i))
        hits: list[tuple[int, str]] = []
        claimed: set[int] = set()
        for order, i in sorted(matches):  # longer names first, then the earliest place in the turn
            alias_words, names = self._fuzzy[order]
            size = len(alias_words)
            if order in claimed or not all(free[i : i + size]):
                continue
            if size == 1 and i + 1 < len(words_at) and words_at[i + 1][1] in _ADDRESS_WORDS:
                continue
            claimed.add(order)
            hits.extend((words_at[i][0], n) for n in sorted(names))
            for j in range(i, i + size):
                free[j] = False
        return hits

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
