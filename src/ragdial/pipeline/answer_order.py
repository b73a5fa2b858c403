"""Structural corrections of the answer model's ranking, read from the candidates' features and the items
themselves (no word list of any knowledge base):

- **one's own figure**: when a profile item comes first, the profile item that holds the attribute asked for
  comes first; so it does before an FAQ or a product that lacks it when the turn speaks of one's own (我 anywhere in
  a Chinese turn, "did I", "have I") and does not ask how;
- **the referent of an anaphor**: a short turn that refers back ("how do I cancel it?") and names nothing is about
  what the last reply was about; a global item whose head (an FAQ's question, a product's name) names something
  neither the turn nor the recent dialog mentions goes below the item cited last;
- **the figure named**: among the user's own items, the one holding the field the turn names by the field's
  own words ("how much is left?" after a data question → ``Data left``) goes before another of the user's items;
- **the user's own instance**: a question about one's own service ("is my plan 5G?", "我那个亲情号一个月多少钱")
  whose best item is the catalogue product of a service the user has is answered by the user's record of it
  first (its fee and start date are the user's), unless the attribute asked for is only in the product.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise

import numpy as np

from ragdial.generation.extractive import asked_keys, item_fields, key_match, named_keys
from ragdial.pipeline.answer_features import (
    Candidates,
    TurnView,
    item_head,
    item_name,
    item_types,
    own_turn,
    refers_back,
)
from ragdial.schema import NAME_KEYS, Knowledge, SourceKind


def reorder(
    order: Sequence[int],
    candidates: Candidates,
    view: TurnView,
    catalogue: Mapping[str, Knowledge],
    query: str = "",
) -> list[int]:
    """``order`` (candidate indices, best first) after the corrections above (``query``: the rewritten turn)."""
    order = list(order)
    if not order:
        return order
    order = _referent_first(order, candidates, view, catalogue)
    order = _sibling_first(order, candidates, view, catalogue)
    order = _member_named_first(order, candidates, view, catalogue)
    order = _number_named_first(order, candidates, view, catalogue)
    standalone = _standalone_first(order, candidates, view, catalogue)
    if standalone[0] != order[0]:
        return standalone  # "单独办多少钱": the product's own price, not the user's record of it
    names = [*catalogue, *(k for item in candidates.items if not item.is_global for k in _names_of(item))]
    own = own_turn(view.text) or own_turn(query) or says_mine(view.text, names) or bool(_ASKED_OF_ME.search(view.text))
    mine = _own_instance_first(order, candidates, view, catalogue, query, own)
    if mine[0] != order[0]:
        return mine  # the user's record of the service asked about (not another figure of theirs)
    # for one's figure against an FAQ, a Chinese turn that says 我 anywhere speaks of one's own ("这个月我用了多少流量")
    mine_said = own or "我" in view.text
    return _named_figure_first(_own_figure_first(order, candidates, view, mine_said), candidates, view)


POSSESSION_FLOOR = 0.08  # below this cover/cosine the turn says nothing about a service (chosen on dev)


def possession_first(order: Sequence[int], candidates: Candidates, within: int = 5) -> tuple[list[int], bool]:
    """For a question whether the user has a service ("do I have the free family calls thing?", "我开通国际漫游了吗"):
    the service it is about is the first named item of the ranking (a product, or one of the user's services;
    FAQs and the user's figures skipped) in the first ``within`` that the turn itself speaks of (its name half
    said, or the turn's cover or cosine with it, for a user's service with its catalogue product, reaching
    ``POSSESSION_FLOOR``: "do I already have one?" speaks of nothing); the user's record of it goes first when
    they have it, else the product goes first (the reply says they do not have it). Returns the order and whether
    a service was found."""
    items = candidates.items
    columns = ("name_cover", "lex_turn", "dense_turn", "catalogue_lex", "catalogue_dense")
    evidence = np.max(np.stack([candidates.column(c) for c in columns]), axis=0)
    named = [
        j
        for j in order[:within]
        if item_name(items[j]) and items[j].source != SourceKind.FAQ and evidence[j] >= POSSESSION_FLOOR
    ]
    if not named:
        return list(order), False
    name = item_name(items[named[0]]).lower()
    mine = [j for j in order if not items[j].is_global and item_name(items[j]).lower() == name]
    first = mine[0] if mine else named[0]
    return [first, *(j for j in order if j != first)], True


# a question about what the speaker did or has ("when did I add it", "how much credit have I got")
_ASKED_OF_ME = re.compile(r"\b(?:have|did|had|was|were)\s+i\b", re.I)


def says_mine(text: str, names: Iterable[str]) -> bool:
    """Whether a Chinese turn puts 我 right before a word of the knowledge's names ("我宽带是哪个档的", "我流量还剩多少"
    : the possessive without 的); ``names``: product names, the user's services and the names of their fields."""
    pairs = {a + b for name in names for a, b in pairwise(name)}
    return any(m.group(1) in pairs for m in re.finditer(r"我(?=([\u4e00-\u9fff]{2}))", text))


def _typed_siblings(item: Knowledge, catalogue: Mapping[str, Knowledge]) -> tuple[str, dict[str, Knowledge]] | None:
    """``item``'s lowered name and the catalogue products of its type (its own type field) other than itself;
    ``None`` for an item of no type."""
    types = item_types(list(catalogue.values()))
    name = item_name(item).lower()
    kind = types.get(name)
    if not kind:
        return None
    return name, {n: p for n, p in catalogue.items() if n != name and types.get(n) == kind}


def _names_of(item: Knowledge) -> list[str]:
    return [item_name(item), *item_fields(item)]


def _named_figure_first(order: list[int], candidates: Candidates, view: TurnView) -> list[int]:
    """Among the user's own items, the one with a field the turn names best by the field's own words
    (``named_keys``: "how much is left?" after a data question → the item with ``Data left``) goes first, when a
    profile item leads whose service the turn does not name and no other item matches as well; or when a short
    turn goes on from a reply about the user's own figures and names no product ("and data?" after the minutes
    left)."""
    items = candidates.items
    top = order[0]
    named, cover = candidates.column("named_turn"), candidates.column("name_cover")
    referent = candidates.column("cited_last_first")
    going_on = view.short and any(referent[j] and not items[j].is_global for j in order) and not named.any()
    if (items[top].is_global and not going_on) or named[top] or cover[top] >= 0.5:
        return order
    before = view.previous[-1] if view.previous else ""
    score = {}
    for j in order:
        if not items[j].is_global:
            keys = named_keys(view.text, item_fields(items[j]), before)
            score[j] = key_match(keys[0], view.text, before) if keys else (0, 0, 0)
    best = max(score.values())
    winners = [j for j, v in score.items() if v == best]
    if not best[0] or len(winners) > 1 or winners[0] == top:
        return order
    return [winners[0], *(j for j in order if j != winners[0])]


def _own_figure_first(order: list[int], candidates: Candidates, view: TurnView, own: bool) -> list[int]:
    items, asked = candidates.items, candidates.column("asked_attribute")
    top = items[order[0]]
    named = [bool(item_name(item)) for item in items]  # a service record; else the user's figures
    if asked[order[0]] or (top.is_global and (asks_how(view.text) or not own)):
        return order  # a global item first unless the turn asks for one's own figure that it lacks, not how to see it
    # before an FAQ, the user's figures; a service record only when the turn asks which one it is ("what plan am I on")
    holding = [
        j
        for j in order
        if not items[j].is_global
        and asked[j]
        and (not top.is_global or not named[j] or _asks_name(view.text, items[j]))
    ]
    return [holding[0], *(j for j in order if j != holding[0])] if holding else order


def _asks_name(text: str, item: Knowledge) -> bool:
    return any(k in NAME_KEYS for k in asked_keys(text, item_fields(item), first_match=True))


_HOW = re.compile(
    r"怎么|怎样|如何|咋|在哪|哪里|步骤|\bhow (?:do|can|could|should|would) (?:i|you|we)\b|\bwhere\b|\bsteps?\b", re.I
)


def asks_how(text: str) -> bool:
    """Whether the turn asks how or where to do something (answered by an FAQ, not by the user's figures)."""
    return bool(_HOW.search(text))


def _referent_first(
    order: list[int], candidates: Candidates, view: TurnView, catalogue: Mapping[str, Knowledge]
) -> list[int]:
    if not (view.short and refers_back(view.text)) or not view.last_cited or re.search(r"\d", view.text):
        return order  # not a bare reference (a number names its subject: "38的那个")
    items = candidates.items
    if candidates.column("named_turn").any() or (candidates.column("name_cover") >= 0.5).any():
        return order  # the turn names its subject itself
    cited, referent = candidates.column("cited_last"), candidates.column("cited_last_first")
    first_cited = next((j for j in order if referent[j]), None)
    if first_cited is None or not items[first_cited].is_global:
        return order  # the referent is what the last reply was about: an FAQ or a product
    # what the dialog talks about: the turn, the last two user turns, the names of the items cited last
    said = " ".join([view.text, *view.previous[-2:], *(item_head(items[j]) for j in order if cited[j])])
    spoken = _fragments(said, name_only=False)
    objects = {f for name in catalogue for f in _fragments(name)}  # what product names are made of

    def stranger(j: int) -> bool:  # an item mostly about another kind of thing than the one talked about
        named = _fragments(item_head(items[j])) & objects
        return items[j].is_global and not cited[j] and len(named - spoken) * 2 > len(named)

    above = [j for j in order[: order.index(first_cited)] if stranger(j)]
    if not above or order[0] not in above:
        return order
    rest = [j for j in order if j not in above]  # the strangers go right below the item cited last
    at = rest.index(first_cited) + 1
    return [*rest[:at], *above, *rest[at:]]


def _bare(candidates: Candidates, view: TurnView) -> int | None:
    """For a short turn that names no item: the row of the item the last reply cited first, if it is a candidate."""
    if not view.short or not view.last_cited or not candidates.items:
        return None
    if candidates.column("named_turn").any() or (candidates.column("name_cover") >= 0.5).any():
        return None
    referent = candidates.column("cited_last_first")
    return next((j for j in range(len(candidates.items)) if referent[j]), None)


_BIGGER = re.compile(r"大点|大一点|大些|更大|多点|多一点|更多|\b(?:bigger|larger|more)\b", re.I)
_SMALLER = re.compile(r"小点|小一点|更小|少点|少一点|便宜|\b(?:smaller|cheaper|less)\b", re.I)


_WHICH = re.compile(r"哪|\b(?:which|or|compared?|vs)\b", re.I)  # a comparison of two, not a request for another


def _magnitude(name: str) -> float | None:
    """The largest number in a product's name ("10GB通用流量月包" → 10, "青禾5G极速卡68元" → 68), if any."""
    numbers = [float(n) for n in re.findall(r"\d+(?:\.\d+)?", name)]
    return max(numbers) if numbers else None


def _sibling_first(
    order: list[int], candidates: Candidates, view: TurnView, catalogue: Mapping[str, Knowledge]
) -> list[int]:
    """A short turn that names nothing and asks for a sibling of the product the last reply was about
    (``sibling_asked``) puts that sibling first, if it is a candidate."""
    cited = _bare(candidates, view)
    if cited is None:
        return order
    chosen = sibling_asked(view.text, candidates.items[cited], catalogue)
    row = {item.id: j for j, item in enumerate(candidates.items)}
    if chosen is None or chosen.id not in row:
        return order
    j = row[chosen.id]
    return [j, *(i for i in order if i != j)]


def _member_named_first(
    order: list[int], candidates: Candidates, view: TurnView, catalogue: Mapping[str, Knowledge]
) -> list[int]:
    """When the first item is a typed product and the turn names, by a part of its name few names share, one other
    product of the same type ("下周去香港出差 漫游包怎么收费": 港 of 香港, a word no product's text has, is in the
    港澳台 pass's name only), that product goes first: the model found the family, the turn says which member."""
    items = candidates.items
    top = items[order[0]]
    if not top.is_global or top.source == SourceKind.FAQ or candidates.column("named_turn")[order[0]]:
        return order
    typed = _typed_siblings(top, catalogue)
    if typed is None:
        return order
    name, siblings = typed
    chosen = _spoken(view.text, name, siblings, list(catalogue.values()))
    row = {item.id: j for j, item in enumerate(items)}
    if chosen is None or chosen.id not in row:
        return order
    return [row[chosen.id], *(j for j in order if j != row[chosen.id])]


def _number_named_first(
    order: list[int], candidates: Candidates, view: TurnView, catalogue: Mapping[str, Knowledge]
) -> list[int]:
    """When the first item is a typed product whose name has a number the turn does not say, and the turn says the
    number in the name of exactly one other candidate of the same type ("10个G的通用流量包" → 10GB, not the 5GB
    pack), that one goes first."""
    items = candidates.items
    top = items[order[0]]
    said = set(re.findall(r"\d+(?:\.\d+)?", view.text))
    if not said or not top.is_global or top.source == SourceKind.FAQ:
        return order
    types = item_types(list(catalogue.values()))
    kind = types.get(item_name(top).lower())
    if not kind or not _numbers(item_name(top)) or _numbers(item_name(top)) & said:
        return order
    named = [
        j
        for j in order[1:]
        if items[j].is_global
        and types.get(item_name(items[j]).lower()) == kind
        and _numbers(item_name(items[j])) & said
    ]
    return [named[0], *(j for j in order if j != named[0])] if len(named) == 1 else order


def _numbers(name: str) -> set[str]:
    return set(re.findall(r"\d+(?:\.\d+)?", name))


_STANDALONE = re.compile(r"单独|单买|单办|\b(?:on its own|by itself|separately|standalone)\b", re.I)


def asks_standalone(text: str) -> bool:
    """Whether the turn asks about a service on its own ("单独办的话多少钱", "what would it cost on its own")."""
    return bool(_STANDALONE.search(text))


def _standalone_first(
    order: list[int], candidates: Candidates, view: TurnView, catalogue: Mapping[str, Knowledge]
) -> list[int]:
    """A turn asking about a service on its own whose first item is the user's record of it (included in their
    plan, 0 yuan) puts the catalogue product first: its own price and rules."""
    items = candidates.items
    top = items[order[0]]
    if top.is_global or not asks_standalone(view.text):
        return order
    product = catalogue.get(item_name(top).lower())
    row = next((j for j in order if product is not None and items[j].id == product.id), None)
    return [row, *(j for j in order if j != row)] if row is not None else order


def sibling_asked(text: str, item: Knowledge, catalogue: Mapping[str, Knowledge]) -> Knowledge | None:
    """The product of ``item``'s type (its own type field, ``item_types``) that ``text`` asks for instead of it:
    "有大点的吗" / "anything bigger?" → the one with the next larger number in its name (the next smaller for
    "便宜点" / "cheaper"); "那澳门的呢" → the one whose name has a word or character of the turn that ``item``'s
    name lacks and few names share (港澳台 for 澳门). For the user's record of a service and a turn about it on its own
    ("单独办的话多少钱"): its catalogue product. ``None`` for an FAQ, an untyped item or no such request."""
    if not item.is_global and asks_standalone(text):
        return catalogue.get(item_name(item).lower())
    if not item.is_global or item.source == SourceKind.FAQ:
        return None
    typed = _typed_siblings(item, catalogue)
    if typed is None:
        return None
    name, siblings = typed
    return _sized(text, name, siblings) or _spoken(text, name, siblings, list(catalogue.values()))


def _sized(text: str, name: str, siblings: Mapping[str, Knowledge]) -> Knowledge | None:
    bigger, smaller = bool(_BIGGER.search(text)), bool(_SMALLER.search(text))
    size = _magnitude(name)
    if bigger == smaller or size is None or re.search(r"\d", text) or _WHICH.search(text):
        return None
    sized = [(m, p) for n, p in siblings.items() if (m := _magnitude(n)) is not None and (m > size) == bigger]
    sized = [(m, p) for m, p in sized if m != size]
    if not sized:
        return None
    return (min if bigger else max)(sized, key=lambda pair: pair[0])[1]


def _spoken(
    text: str, name: str, siblings: Mapping[str, Knowledge], catalogue: Sequence[Knowledge]
) -> Knowledge | None:
    """The one sibling whose name has a part (``_parts``) the turn says, the last name lacks and at most two names
    share; a Chinese character counts only where no character pair of the turn holding it is in a product's text
    (澳 of 澳门: the abbreviation 港澳台 names it; 生 of 生效 is not 学生)."""
    lowered = text.lower()
    texts = " ".join(item.text.lower() for item in catalogue)
    pairs = [a + b for a, b in pairwise(lowered) if _HAN.match(a) and _HAN.match(b)]
    known = {c for pair in pairs if pair in texts for c in pair}
    said = {c for pair in pairs for c in pair if c not in known} | set(re.findall(r"[a-z]{4,}", lowered))
    said |= {w.lower() for w in re.findall(r"\b[A-Z]{2,3}\b", text)}  # "HK"
    counts: dict[str, int] = {}
    for item in catalogue:
        for part in _parts(item_name(item)):
            counts[part] = counts.get(part, 0) + 1
    own = _parts(name)
    hits = [p for n, p in siblings.items() if any(counts.get(part, 0) <= 2 for part in (_parts(n) - own) & said)]
    return hits[0] if len(hits) == 1 else None


_HAN = re.compile(r"[\u4e00-\u9fff]")


def _parts(name: str) -> set[str]:
    """A name's Chinese characters, English words of four letters or more ("and" is no part) and the initials of
    its runs of capitalised words ("Hong Kong" → "hk"), lowercased."""
    lowered = name.lower()
    initials = {
        "".join(w[0] for w in run.split()).lower() for run in re.findall(r"[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+", name)
    }
    return set(re.findall(r"[\u4e00-\u9fff]", lowered)) | set(re.findall(r"[a-z]{4,}", lowered)) | initials


def _own_instance_first(
    order: list[int],
    candidates: Candidates,
    view: TurnView,
    catalogue: Mapping[str, Knowledge],
    query: str,
    own: bool,
) -> list[int]:
    if view.guest or not own:
        return order
    items = candidates.items
    top = items[order[0]]
    if not top.is_global:
        return order
    asked = candidates.column("asked_attribute")
    services = [j for j in order if not items[j].is_global and item_name(items[j])]
    if top.source != SourceKind.FAQ:  # the catalogue product of one of the user's services
        mine = [j for j in services if _product_of(items[j], catalogue) == top.id]
        if mine and not (asked[order[0]] and not asked[mine[0]]):  # unless only the product holds what is asked
            return [mine[0], *(j for j in order if j != mine[0])]
    # a service of the user's that the turn names, holding the attribute asked for (its fee, its start date)
    common = common_fragments(list(catalogue))
    text = f"{view.text} {query}"
    named = [j for j in services if asked[j] and mentions(item_name(items[j]), text, common)]
    if named:
        return [named[0], *(j for j in order if j != named[0])]
    return order


def _product_of(item: Knowledge, catalogue: Mapping[str, Knowledge]) -> str:
    product = catalogue.get(item_name(item).lower())
    return product.id if product is not None else ""


def mentions(name: str, text: str, common: frozenset[str] = frozenset()) -> bool:
    """Whether ``text`` mentions ``name`` in part: a Chinese character pair of it, or an English word of it of
    three letters or more, that is not ``common`` (fragments many names share, see ``common_fragments``)."""
    return bool((_fragments(name) - common) & _fragments(text, name_only=False))


def common_fragments(names: Sequence[str], most: int = 3) -> frozenset[str]:
    """The name fragments (``mentions``) found in ``most`` or more of ``names``: "套餐", "plan", "data"."""
    counts: dict[str, int] = {}
    for name in names:
        for fragment in _fragments(name):
            counts[fragment] = counts.get(fragment, 0) + 1
    return frozenset(f for f, n in counts.items() if n >= most)


def _fragments(text: str, name_only: bool = True) -> set[str]:
    text = text.lower()
    pairs = {a + b for run in re.findall(r"[\u4e00-\u9fff]+", text) for a, b in pairwise(run)}
    words = set(re.findall(r"[a-z]{3,}", text)) if name_only else set(re.findall(r"[a-z]+", text))
    return pairs | words
