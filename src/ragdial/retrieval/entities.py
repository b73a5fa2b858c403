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

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragdial.jsontypes import JSONDict, JSONObject, as_array, as_object, as_text, as_texts
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
    firsts_of = {span[0] for span in candidates}
    longest = max(len(span) for span in candidates)
    for item in items:
        entity = item.fields.get("entity")
        words = normalise(item.text).split()
        present = {
            span
            for i, word in enumerate(words)
            if word in firsts_of
            for n in range(1, longest + 1)
            if i + n <= len(words) and (span := tuple(words[i : i + n])) in candidates
        }
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


def _fuzzy_keys(words: Sequence[str]) -> list[tuple[str | int, ...]]:
    """The fuzzy-index keys of the names that may start at ``words`` (the turn's next one or two words)."""
    first = [(words[0][0], len(words[0]) + d) for d in (-1, 0, 1)]
    if len(words) < 2:
        return list(first)
    second = [(words[1][0], len(words[1]) + d) for d in (-1, 0, 1)]
    return [*first, *(a + b for a in first for b in second)]


def _word_spans(padded: str, table: dict[str, int], longest: int) -> set[int]:
    """The values of ``table`` whose key (space-padded words) is a run of words of ``padded``."""
    words = padded.split()
    found = set()
    for start in range(len(words)):
        for stop in range(start + 1, min(len(words), start + longest) + 1):
            order = table.get(f" {' '.join(words[start:stop])} ")
            if order is not None:
                found.add(order)
    return found


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
        items = items if isinstance(items, Sequence) else list(items)  # read twice (an ``ItemStore`` from disk)
        names: dict[str, None] = {}  # in order of first appearance
        for item in items:
            name = item.fields.get("entity")
            if isinstance(name, str) and name:
                names.setdefault(name)
        self._setup(list(names), partial_names(items) if learn else {}, pinyin, learn)

    def to_dict(self) -> JSONDict:
        """What rebuilds this tracker without the items (:meth:`from_dict`): names and learnt aliases."""
        return {
            "names": list(self._names),
            "learned": [[alias, sorted(names)] for alias, names in self._learned.items()],
            "pinyin": self._pinyin_on,
            "learn": self._learn,
        }

    @classmethod
    def from_dict(cls, data: JSONObject) -> EntityTracker:
        tracker = cls.__new__(cls)
        pairs = [as_array(pair) for pair in as_array(data["learned"])]
        learned = {as_text(alias): set(as_texts(names)) for alias, names in pairs}
        tracker._setup(as_texts(data["names"]), learned, bool(data["pinyin"]), bool(data["learn"]))
        return tracker

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> EntityTracker:
        return cls.from_dict(as_object(json.loads(path.read_text(encoding="utf-8"))))

    def _setup(self, names: list[str], learned: dict[str, set[str]], pinyin: bool, learn: bool) -> None:
        """The look-up tables from the entity names (in order of first appearance) and the aliases learnt for them."""
        self._names, self._learned, self._pinyin_on, self._learn = names, learned, pinyin, learn
        table: dict[str, set[str]] = {}
        for name in names:
            for alias in aliases(name):
                table.setdefault(alias, set()).add(name)
        # typing errors are forgiven in whole names only: two or more words, or one word of 6+ letters
        self._fuzzy = [
            (alias.split(), owners)
            for alias, owners in sorted(table.items(), key=lambda kv: -len(kv[0]))
            if learn and not _CJK.search(alias) and (len(alias.split()) > 1 or len(alias.strip()) >= 6)
        ]
        # a name by the (first letter, length) of its first two words: a typing error keeps the first letter and
        # changes the length by at most one, so a turn's words only need comparing with names indexed under their
        # neighbours (the second word keeps "Avalon North 3" and "Avalon Quay 7" in separate lists)
        self._fuzzy_by_key: dict[tuple[str | int, ...], list[int]] = {}
        for order, (alias_words, _) in enumerate(self._fuzzy):
            key = tuple(part for word in alias_words[:2] for part in (word[0], len(word)))
            self._fuzzy_by_key.setdefault(key, []).append(order)
        for alias, found in learned.items():
            if alias not in table:
                table[alias] = found
        # longest first, so a longer name claims its span before a name it contains
        self._aliases = sorted(table.items(), key=lambda kv: -len(kv[0]))
        # where each alias is in that order, by its words (a Latin turn is matched word by word) and by its text
        # without padding (in a Chinese turn any substring may be a name): a turn looks up its own spans instead of
        # scanning every alias, so finding names costs the same for 600 or 60,000 entities
        self._by_words = {alias: order for order, (alias, _) in enumerate(self._aliases)}
        self._by_text = {alias.strip(): order for order, (alias, _) in enumerate(self._aliases)}
        self._longest_words = max((len(alias.split()) for alias in self._by_words), default=0)
        self._text_lengths = sorted({len(text) for text in self._by_text if text})
        self.entities = sorted({e for owners in table.values() for e in owners})
        self._memo: dict[str, list[str]] = {}
        self._pinyin: list[tuple[str, set[str]]] = []
        if pinyin:
            by_sound: dict[str, set[str]] = {}
            for alias, owners in self._aliases:
                chars = _CJK.findall(alias)
                if len(chars) >= 3 and len(chars) == len(alias.strip()):
                    by_sound.setdefault(_pinyin_line(alias), set()).update(owners)
            self._pinyin = sorted(by_sound.items(), key=lambda kv: -len(kv[0]))
        self._by_sound = {syllables: order for order, (syllables, _) in enumerate(self._pinyin)}
        self._longest_sound = max((len(syllables.split()) for syllables in self._by_sound), default=0)

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
        for order in self._present(norm, cjk):
            alias, names = self._aliases[order]
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
            for order in sorted(_word_spans(sound, self._by_sound, self._longest_sound)):
                for name in sorted(self._pinyin[order][1]):
                    seen.setdefault(name, None)
        return list(seen)

    def _present(self, norm: str, cjk: bool) -> list[int]:
        """The order positions of the aliases that occur in ``norm`` (padded words for a Latin turn, any substring
        for a Chinese one), in the longest-first order ``_find`` claims them in."""
        if not cjk:
            return sorted(_word_spans(norm, self._by_words, self._longest_words))
        found = set()
        for length in self._text_lengths:
            if length > len(norm):
                break
            for start in range(len(norm) - length + 1):
                order = self._by_text.get(norm[start : start + length])
                if order is not None:
                    found.add(order)
        return sorted(found)

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
        for i in range(len(words_at)):
            if not free[i]:
                continue
            for key in _fuzzy_keys([w for _, w in words_at[i : i + 2]]):
                for order in self._fuzzy_by_key.get(key, ()):
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
