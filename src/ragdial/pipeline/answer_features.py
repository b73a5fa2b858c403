"""Features of a customer-service turn for the learned answer model (``ragdial.understanding.answer_model``):
what the turn says (character and word n-grams), where the conversation stands (earlier turns, the items cited
before, whether the session has an account), and how well each candidate item matches (retrieval rank, lexical
cover and dense cosine of the turn and of the turn before, the asked attribute present in the item, the item named
or cited before). The same functions serve the pipeline and the model's training, so both see the same numbers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from ragdial.generation.extractive import asked_keys, is_service_item, item_fields
from ragdial.schema import Knowledge, SourceKind, Speaker, Turn, name_attribute, type_attribute

PROFILE, PRODUCT, FAQ = "profile", "product", "faq"
SOURCES = (PROFILE, PRODUCT, FAQ)
Dense = Callable[[str, Sequence[Knowledge]], list[float]]
Lexical = Callable[[str, Knowledge], float]
Embed = Callable[[str], "np.ndarray | None"]
Terms = Callable[[str], list[str]]


def source_of(item: Knowledge) -> str:
    """``profile`` (the user's own data), ``product`` or ``faq`` (anything else global counts as a product)."""
    if not item.is_global:
        return PROFILE
    return FAQ if item.source == SourceKind.FAQ else PRODUCT


def item_name(item: Knowledge) -> str:
    """The item's plan/product/service name, or an FAQ's question ("" if it has neither)."""
    fields = item_fields(item) if item.source != SourceKind.FAQ else {}
    name = name_attribute(fields) or item.fields.get("name")
    if not name and item.source == SourceKind.FAQ:
        name = item.fields.get("question")
    return str(name or "")


@dataclass(frozen=True)
class TurnView:
    """The turn to answer and what came before it: earlier user turns (newest last), the ids each earlier system
    turn cited (newest last), whether the session has an account (``guest``: none), and the language."""

    text: str
    previous: tuple[str, ...] = ()
    cited: tuple[tuple[str, ...], ...] = ()
    guest: bool = False
    language: str = "zh"

    @classmethod
    def of(cls, context: Sequence[Turn], user: str | None, language: str) -> TurnView:
        earlier = context[:-1]
        return cls(
            context[-1].text,
            tuple(t.text for t in earlier if t.speaker == Speaker.USER),
            tuple(tuple(t.knowledge_ids) for t in earlier if t.speaker == Speaker.SYSTEM),
            user is None,
            language,
        )

    @property
    def short(self) -> bool:
        """A short turn (≤ 12 Chinese characters or ≤ 6 words) usually leans on what came before."""
        if re.search(r"[a-zA-Z]{2}", self.text):
            return len(self.text.split()) <= 6
        return len(self.text.strip()) <= 12

    @property
    def last_cited(self) -> tuple[str, ...]:
        return self.cited[-1] if self.cited else ()


def turn_terms(view: TurnView) -> list[str]:
    """The turn's n-grams: characters 1-3 of the lowercased text (spaces as boundaries), English words and word
    pairs, and character bigrams of the previous user turn (prefixed ``p:``), for the policy and route heads."""
    text = _normal(view.text)
    terms = [f"c:{g}" for g in _char_ngrams(text, (1, 2, 3))]
    words = re.findall(r"[a-z0-9']+", text)
    terms += [f"w:{w}" for w in words] + [f"w:{a}_{b}" for a, b in pairwise(words)]
    if words:
        terms.append(f"w0:{words[0]}")
    if view.previous:
        terms += [f"p:{g}" for g in _char_ngrams(_normal(view.previous[-1]), (2,))]
    return sorted(set(terms))


def _normal(text: str) -> str:
    return " " + re.sub(r"\s+", " ", text.lower()).strip() + " "


def _char_ngrams(text: str, sizes: Sequence[int]) -> list[str]:
    return [text[i : i + n] for n in sizes for i in range(len(text) - n + 1) if text[i : i + n].strip()]


# dialog acts: small lexicons of the two languages whose weights the policy head learns (a cue alone decides
# nothing); each is a feature, ``act_request_change`` their conjunction
_ACTS = {
    "request": re.compile(
        r"帮我|给我|替我|帮忙|麻烦|请你|你(?:直接|现在|先|帮)|直接|马上|现在就|我要|我想要?|"
        r"\b(?:can|could|would|will) you\b|\bplease\b|\bfor me\b|\bi want (?:you|to)\b|\bi'?d like\b|\bjust\b|"
        r"\bgo ahead\b|\blet'?s\b",
        re.I,
    ),
    "change": re.compile(
        r"开通|开|办理|办|订|退订|退|取消|关掉|关闭|停|充值|充|缴|交|改|换|升|降|注销|挂失|复机|预约|加|装|转|恢复|重置|"
        r"\b(?:cancel|activate|subscribe|unsubscribe|sign (?:me )?up|add|book|change|switch|top (?:it )?up|"
        r"turn (?:on|off)|"
        r"enable|disable|upgrade|downgrade|close|reset|schedule|renew|remove|stop|port|block|unblock|open|pay|order|"
        r"buy|get me|set (?:it|that|me) up|move|drop|put)\b",
        re.I,
    ),
    "question": re.compile(
        r"[?？]|吗|呢|什么|啥|怎么|怎样|如何|咋|哪|几|多少|多久|((?!不)[\u4e00-\u9fff])不\1|有没有|可不可以|"
        r"^\s*(?:what|how|which|when|where|why|who|is|are|do|does|did|can|could|will|should|am)\b|\b(?:how|what)\b"
        r"|\b(?:what|who|where|how)'?s\b",
        re.I,
    ),
    "greeting": re.compile(
        r"你好|您好|在吗|在不在|哈喽|最近好吗|你是谁"
        r"|\b(?:hi|hello|hey|morning|evening|afternoon|how are you|who are you)\b",
        re.I,
    ),
    "thanks": re.compile(r"谢|感谢|辛苦|\b(?:thanks?|thx|cheers|appreciate)\b", re.I),
    "bye": re.compile(r"再见|拜拜|回头见|没事了|没有了|就这些|\b(?:bye|goodbye|that'?s all|see you)\b", re.I),
    "ack": re.compile(
        r"^\s*(?:好的?|行|嗯+|哦+|ok(?:ay)?|明白|知道了|了解|great|perfect|cool|got it|alright|sure)", re.I
    ),
    "look_up": re.compile(r"查|看看|看一下|告诉|\b(?:check|show|tell|look up|find out)\b", re.I),
    "own": re.compile(
        r"我的|我家|我还|我这|我那|我自己|我现在|我目前|我是|\bmy\b|\bmine\b|\bdo i\b|\bam i\b|\bi have\b|\bi'?m\b"
        r"|\bi'?ve got\b",
        re.I,
    ),
    "refer": re.compile(
        r"它|这个|那个|这项|那项|该业务|这款|那款|这种|那种|这样|\b(?:it|its|that|this|them|those|these|one)\b", re.I
    ),
    "past": re.compile(r"上个?月|上期|去年|以前|之前|\blast (?:month|year|week)\b|\bprevious\b|\bago\b", re.I),
}
ACTS = (*(f"act_{a}" for a in _ACTS), "act_request_change", "act_len_short", "act_len_long")


SOCIAL_ACTS = ("act_greeting", "act_thanks", "act_bye", "act_ack")


def own_turn(text: str) -> bool:
    """Whether the turn speaks of the user's own things ("我的", "我那个", "my", "do I")."""
    return bool(_ACTS["own"].search(text))


def refers_back(text: str) -> bool:
    """Whether the turn refers to something said before ("它", "这个", "it", "that one")."""
    return bool(_ACTS["refer"].search(text))


def dialog_acts(text: str) -> dict[str, float]:
    """The turn's dialog-act features (``ACTS``)."""
    acts = {f"act_{name}": float(bool(pattern.search(text))) for name, pattern in _ACTS.items()}
    acts["act_request_change"] = acts["act_request"] * acts["act_change"]
    size = len(text.split()) if re.search(r"[a-zA-Z]{2}", text) else len(text.strip()) / 2
    acts["act_len_short"] = float(size <= 3)
    acts["act_len_long"] = float(size >= 10)
    return acts


CANDIDATE_FEATURES = (
    "rank_turn",
    "rank_query",
    "lex_turn",
    "lex_turn_gap",
    "dense_turn",
    "dense_turn_gap",
    "lex_prev",
    "dense_prev",
    "lex_query",
    "name_cover",
    "name_cover_prev",
    "named_turn",
    "named_prev",
    "cited_last_first",
    "cited_last",
    "cited_before",
    "asked_attribute",
    "own_service",
    "same_name_as_cited",
    "service_item",
    "main_plan",
    "type_cover",
    "short_x_cited_last",
    "short_x_named_prev",
    "short_x_lex_prev",
    "src_profile",
    "src_product",
    "src_faq",
    "guest_x_profile",
    "key_cover",
    "key_dense",
    "field_dense",
    "key_dense_gap",
    "field_dense_gap",
    "own_x_profile",
    "own_x_named",
    "catalogue_lex",
    "catalogue_dense",
    "refer_x_cited_last",
    "refer_x_lex_prev",
    "refer_x_dense_prev",
    "dense_query",
    "dense_query_gap",
    "head_cover_turn",
    "head_cover_dialog",
    "refer_x_head_uncovered",
    "cited_recency",
    "same_type_as_last",
    "same_source_as_last",
    "number_in_name",
    "number_cover",
    "named_in_cited",
)


@dataclass(frozen=True)
class Candidates:
    """The items considered for a turn and their feature rows (``CANDIDATE_FEATURES`` order); ``unknown``: the
    share of the turn's terms that no item of the knowledge base has (``Relevance.unknown``)."""

    items: tuple[Knowledge, ...]
    features: np.ndarray
    unknown: float = 0.0

    def column(self, name: str) -> np.ndarray:
        return self.features[:, CANDIDATE_FEATURES.index(name)]


def candidate_features(
    view: TurnView,
    query: str,
    items: Sequence[Knowledge],
    ranks: dict[str, tuple[int, int]],
    lexical: Lexical,
    dense: Dense | None,
    profile: Sequence[Knowledge] = (),
    types: Mapping[str, str] | None = None,
    cited_names: Sequence[str] = (),
    embed: Embed | None = None,
    catalogue: Mapping[str, Knowledge] | None = None,
    terms: Terms | None = None,
    unknown: float = 0.0,
) -> Candidates:
    """Feature rows of ``items`` for ``view`` (``query``: the rewritten turn retrieval was asked; ``ranks``: each
    item's 0-based rank in the retrieval of the turn alone and of the query, -1 where absent; ``profile``: the
    user's own items, whose service names tell which products the user has; ``types``: product name (lowercased)
    → its type (``item_types``), which also types the user's services; ``cited_names``: names of the items the
    last reply cited; ``embed``: a sentence vector of a text (unit length), for the field features: how well the
    turn matches the item's own field names and fields (``field_matches``), the same for any knowledge base;
    ``catalogue``: product name (lowercased) → the product, so that one of the user's services is as relevant as
    the product it names; ``terms``: the lexical terms of a text, for how much of each item's head (an FAQ's
    question, a product's name, else its field names) the turn and the recent dialog cover: a generic item whose
    head names something nobody mentioned is not what "how do I cancel it?" is about; ``unknown``: see
    ``Candidates``)."""
    n = len(items)
    if not n:
        return Candidates((), np.zeros((0, len(CANDIDATE_FEATURES))), unknown)
    text = view.text
    previous = view.previous[-1] if view.previous else ""
    lex_turn = np.array([lexical(text, item) for item in items])
    lex_prev = np.array([lexical(previous, item) if previous else 0.0 for item in items])
    lex_query = np.array([lexical(query, item) for item in items])
    dense_turn = np.array(dense(text, items)) if dense is not None else np.zeros(n)
    dense_prev = np.array(dense(previous, items)) if dense is not None and previous else np.zeros(n)
    dense_query = dense_turn if query == text or dense is None else np.array(dense(query, items))
    lowered = text.lower()
    recent = " ".join(view.previous[-2:]).lower()
    last = view.last_cited
    before = {i for ids in view.cited[:-1] for i in ids}
    own = {item_name(p).lower() for p in profile if is_service_item(p)}
    types = types or {}
    cited = {c.lower() for c in cited_names if c}
    rows = np.zeros((n, len(CANDIDATE_FEATURES)))
    matches = [field_matches(text, item, embed) for item in items]
    best_key = max(m[1] for m in matches)
    best_field = max(m[2] for m in matches)
    own_act = bool(_ACTS["own"].search(text))
    refers = bool(_ACTS["refer"].search(text))
    catalogue = catalogue or {}
    said = set(terms(text)) if terms is not None else set()
    recency = _cited_recency(view.cited)
    by_id = {item.id: item for item in items}
    last_item = by_id.get(last[0]) if last else None
    last_type = types.get(item_name(last_item).lower(), "") if last_item is not None else ""
    last_source = source_of(last_item) if last_item is not None else ""
    numbers_said = set(_NUMBER.findall(text))
    cited_text = " ".join(by_id[i].text for i in last if i in by_id).lower()
    context = said | set(terms(" ".join([*view.previous[-2:], *cited_names]))) if terms is not None else set()
    for j, item in enumerate(items):
        source = source_of(item)
        name = item_name(item).lower()
        turn_rank, query_rank = ranks.get(item.id, (-1, -1))
        asked = source != FAQ and bool(asked_keys(text, item_fields(item), first_match=True))
        named_turn = bool(name) and source != FAQ and name in lowered
        named_prev = bool(name) and source != FAQ and name in recent
        kind = types.get(name, "") if source != FAQ else ""
        product = catalogue.get(name) if source == PROFILE and name else None
        values = {
            "rank_turn": 1.0 / (1 + turn_rank) if turn_rank >= 0 else 0.0,
            "rank_query": 1.0 / (1 + query_rank) if query_rank >= 0 else 0.0,
            "lex_turn": lex_turn[j],
            "lex_turn_gap": lex_turn[j] - lex_turn.max(),
            "dense_turn": dense_turn[j],
            "dense_turn_gap": dense_turn[j] - dense_turn.max(),
            "lex_prev": lex_prev[j],
            "dense_prev": dense_prev[j],
            "lex_query": lex_query[j],
            "name_cover": _name_cover(name, lowered) if source != FAQ else 0.0,
            "name_cover_prev": _name_cover(name, recent) if source != FAQ else 0.0,
            "named_turn": float(named_turn),
            "named_prev": float(named_prev),
            "cited_last_first": float(bool(last) and last[0] == item.id),
            "cited_last": float(item.id in last),
            "cited_before": float(item.id in before),
            "asked_attribute": float(asked),
            "own_service": float(source == PRODUCT and name in own),
            "same_name_as_cited": float(bool(name) and name in cited and item.id not in last),
            "main_plan": float(kind.lower() in MAIN_PLAN),
            "type_cover": _name_cover(kind.lower(), lowered),
            "service_item": float(source == PROFILE and is_service_item(item)),
            "short_x_cited_last": float(view.short and item.id in last),
            "short_x_named_prev": float(view.short and named_prev),
            "short_x_lex_prev": lex_prev[j] if view.short else 0.0,
            "src_profile": float(source == PROFILE),
            "src_product": float(source == PRODUCT),
            "src_faq": float(source == FAQ),
            "guest_x_profile": float(view.guest and source == PROFILE),
            "key_cover": matches[j][0],
            "key_dense": matches[j][1],
            "field_dense": matches[j][2],
            "key_dense_gap": matches[j][1] - best_key,
            "field_dense_gap": matches[j][2] - best_field,
            "own_x_profile": float(own_act and source == PROFILE),
            "own_x_named": float(own_act and source == PROFILE and _name_cover(name, lowered) >= 0.5),
            "dense_query": dense_query[j],
            "dense_query_gap": dense_query[j] - dense_query.max(),
            "refer_x_cited_last": float(refers and item.id in last),
            "refer_x_lex_prev": lex_prev[j] if refers else 0.0,
            "refer_x_dense_prev": dense_prev[j] - dense_prev.max() if refers else -1.0,
            "catalogue_lex": lexical(text, product) if product is not None else 0.0,
            "catalogue_dense": dense(text, [product])[0] if product is not None and dense is not None else 0.0,
            **_head_covers(item, terms, said, context, refers),
            "cited_recency": recency.get(item.id, 0.0),
            "same_type_as_last": float(bool(kind) and kind == last_type and item.id not in last),
            "same_source_as_last": float(source == last_source),
            "number_in_name": float(source != FAQ and bool(numbers_said & set(_NUMBER.findall(name)))),
            "number_cover": _number_cover(numbers_said, item.text),
            # "how much is that one?" after an FAQ naming a product, "does it come with a router?" after the
            # user's record naming their broadband: the item the last reply's items speak of
            "named_in_cited": float(bool(name) and source != FAQ and item.id not in last and name in cited_text),
        }
        rows[j] = [values[k] for k in CANDIDATE_FEATURES]
    return Candidates(tuple(items), np.round(rows, 9), unknown)


_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.])")


def _number_cover(numbers: set[str], text: str) -> float:
    """Share of the numbers the turn says that the item's text has (0 when the turn says none)."""
    if not numbers:
        return 0.0
    return len(numbers & set(_NUMBER.findall(text))) / len(numbers)


def _cited_recency(cited: Sequence[Sequence[str]]) -> dict[str, float]:
    """Item id → 1 / k for the item cited k system turns back (1: by the last reply; the latest citation counts)."""
    recency: dict[str, float] = {}
    for k, ids in enumerate(reversed(cited), start=1):
        for item_id in ids:
            recency.setdefault(item_id, 1.0 / k)
    return recency


def item_head(item: Knowledge) -> str:
    """What the item is about: an FAQ's question, else its name, else its field names."""
    return item_name(item) or " ".join(item_fields(item))


def _head_covers(
    item: Knowledge, terms: Terms | None, said: set[str], context: set[str], refers: bool
) -> dict[str, float]:
    """Share of the item's head terms in the turn and in the turn with the recent dialog (the last two user turns
    and the names of the items cited last); for a referring turn, the share the dialog leaves uncovered."""
    head = set(terms(item_head(item))) if terms is not None else set()
    if not head:
        return {"head_cover_turn": 0.0, "head_cover_dialog": 0.0, "refer_x_head_uncovered": 0.0}
    in_dialog = len(head & context) / len(head)
    return {
        "head_cover_turn": len(head & said) / len(head),
        "head_cover_dialog": in_dialog,
        "refer_x_head_uncovered": 1.0 - in_dialog if refers else 0.0,
    }


MAIN_PLAN = ("主套餐", "main plan")


def field_texts(item: Knowledge) -> tuple[list[str], list[str]]:
    """The texts ``field_matches`` compares a turn with: the item's field names and its ``name: value`` fields (an
    FAQ: no names, its question)."""
    if item.source == SourceKind.FAQ:
        question = str(item.fields.get("question") or "")
        return [], [question] if question else []
    parsed = item_fields(item)
    return list(parsed), [f"{k}：{v}" for k, v in parsed.items()]


def field_matches(text: str, item: Knowledge, embed: Embed | None) -> tuple[float, float, float]:
    """How well ``text`` matches the item's own fields, whatever the knowledge base names them: the best share of
    a field name's bigrams/words found in the text, the best cosine of the text with a field name, and with a whole
    ``name: value`` field (an FAQ: its question). The item's fields come from the item itself, no word list."""
    keys, fields = field_texts(item)
    lowered = text.lower()
    cover = max((_name_cover(k.lower(), lowered) for k in keys), default=0.0)
    if embed is None:
        return cover, 0.0, 0.0
    query = embed(text)
    if query is None:
        return cover, 0.0, 0.0

    def best(texts: Sequence[str]) -> float:
        vectors = [v for v in (embed(t) for t in texts) if v is not None and len(v) == len(query)]
        return max((float(v @ query) for v in vectors), default=0.0)

    return cover, best(keys), best(fields)


def catalogue_of(items: Sequence[Knowledge]) -> dict[str, Knowledge]:
    """Product name (lowercased) → the product (global items that are not FAQs and have a name)."""
    return {
        item_name(item).lower(): item
        for item in items
        if item.is_global and item.source != SourceKind.FAQ and item_name(item)
    }


def item_types(items: Sequence[Knowledge]) -> dict[str, str]:
    """Product name (lowercased) → its type (``schema.TYPE_KEYS``: 业务类型 / "Type"), for the products that state
    one."""
    types = {}
    for item in items:
        if item.is_global and item.source != SourceKind.FAQ:
            kind = type_attribute(item_fields(item))
            if kind and item_name(item):
                types[item_name(item).lower()] = kind
    return types


def _name_cover(name: str, text: str) -> float:
    """Share of the name's character bigrams (Chinese) or words (English) found in ``text``."""
    if not name:
        return 0.0
    if re.search(r"[\u4e00-\u9fff]", name):
        grams = {name[i : i + 2] for i in range(len(name) - 1)}
    else:
        grams = {w for w in re.findall(r"[a-z0-9]+", name) if len(w) > 1 and w not in ("the", "pack", "plan")}
    return sum(g in text for g in grams) / len(grams) if grams else 0.0


def turn_numbers(view: TurnView, candidates: Candidates) -> dict[str, float]:
    """Turn-level numbers for the route head: the best lexical cover and dense cosine of the turn per source, the
    margin of the best item over the second, which source was cited last, short turn, guest, question mark."""
    numbers: dict[str, float] = {
        "short": float(view.short),
        "guest": float(view.guest),
        "question": float(bool(re.search(r"[?？吗呢]\s*$", view.text))),
        "first_turn": float(not view.previous),
        "numbers_said": float(bool(_NUMBER.search(view.text))),
        "unknown": candidates.unknown,
        **dialog_acts(view.text),
    }
    lexical, dense = candidates.column("lex_turn"), candidates.column("dense_turn")
    sources = [source_of(item) for item in candidates.items]
    last = set(view.last_cited)
    asked, named = candidates.column("asked_attribute"), candidates.column("named_turn")
    for source in SOURCES:
        mask = np.array([s == source for s in sources], dtype=bool)
        numbers[f"lex_{source}"] = float(lexical[mask].max()) if mask.any() else 0.0
        numbers[f"dense_{source}"] = float(dense[mask].max()) if mask.any() else 0.0
        cited = [i.id in last for i, s in zip(candidates.items, sources, strict=True) if s == source]
        numbers[f"cited_{source}"] = float(any(cited))
        numbers[f"asked_{source}"] = float(asked[mask].max()) if mask.any() else 0.0
        numbers[f"named_{source}"] = float(named[mask].max()) if mask.any() else 0.0
        for column in ("key_cover", "key_dense", "field_dense"):
            values = candidates.column(column)
            numbers[f"{column}_{source}"] = float(values[mask].max()) if mask.any() else 0.0
    ordered = np.sort(lexical)[::-1]
    numbers["lex_margin"] = (
        float(ordered[0] - ordered[1]) if len(ordered) > 1 else float(ordered[0] if len(ordered) else 0)
    )
    return numbers


def ranked_numbers(candidates: Candidates, scores: np.ndarray) -> dict[str, float]:
    """Numbers of the ranking for the policy head: the best item's score and margin, its source, its lexical cover
    and cosine, whether it holds the attribute asked for, and the best score per source."""
    numbers: dict[str, float] = {}
    if not len(scores):
        return {"top_score": 0.0, "no_candidates": 1.0}
    order = np.argsort(-scores, kind="stable")
    top = int(order[0])
    numbers["top_score"] = float(scores[top])
    numbers["top_margin"] = float(scores[top] - scores[order[1]]) if len(order) > 1 else float(scores[top])
    numbers["top_lex"] = float(candidates.column("lex_turn")[top])
    numbers["top_dense"] = float(candidates.column("dense_turn")[top])
    numbers["top_asked"] = float(candidates.column("asked_attribute")[top])
    numbers["top_named"] = float(candidates.column("named_turn")[top] or candidates.column("named_prev")[top])
    numbers["top_head_cover"] = float(candidates.column("head_cover_dialog")[top])
    numbers["top_number_cover"] = float(candidates.column("number_cover")[top])
    sources = [source_of(item) for item in candidates.items]
    for source in SOURCES:
        numbers[f"top_is_{source}"] = float(sources[top] == source)
        within = [scores[j] for j in range(len(scores)) if sources[j] == source]
        numbers[f"best_{source}"] = float(max(within)) if within else 0.0
    return numbers
