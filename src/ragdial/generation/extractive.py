"""The extractive generator: the sentence or field of the top item that answers the question, realised as a short
Chinese or English reply; and the fixed replies of the answer policies (not in the knowledge, an account action the
system cannot perform, small talk). It copies values verbatim, so every claim it makes is in a cited item; it is
the fallback of the LLM path when a reply fails the grounding check.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import pairwise

from ragdial.generation.base import GenerationRequest, Generator
from ragdial.jsontypes import JSONDict
from ragdial.schema import NAME_KEYS, Knowledge, SourceKind, Speaker, Turn, name_attribute
from ragdial.text.tokenize import chinese_words
from ragdial.understanding.policy import asks_comparison, asks_own_services, asks_possession

# question cue → the field keys (zh, en) that answer it, most specific first
_FIELD_CUES: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (
        re.compile(
            r"余额|还剩.*钱|剩.*块|话费还|(?:还有|剩)多少话费|欠|balance|credit|how much money|\bowe\b|overdue|"
            r"behind on|unpaid|arrears",
            re.I,
        ),
        ("账户余额", "状态", "Balance", "Status"),  # the account's standing goes with its balance
    ),
    (
        re.compile(r"扣了|花了|已产生|费用.*本月|本月.*费用|charges?|spent|bill|what'?s the total", re.I),
        ("本月已产生费用", "Charges this month"),
    ),
    (re.compile(r"晚上|夜间|night", re.I), ("剩余夜间流量", "Night data left")),
    (re.compile(r"定向|校园|app-specific|campus", re.I), ("剩余定向流量", "App-specific data left")),
    (
        re.compile(
            r"(?:流量|数据|G).*(?:剩|还有)|剩.*(?:流量|G)|data left|data.*(?:left|remaining)|how much data (?:do|have)",
            re.I,
        ),
        ("剩余通用流量", "Data left"),
    ),
    (
        re.compile(r"用了多少流量|已用.*流量|流量.*用了|data (?:have i )?used|how much (?:have|did) i use", re.I),
        ("本月已用通用流量", "Data used this month"),
    ),
    (
        re.compile(r"(?:通话|分钟|电话).*(?:剩|还有|能打)|还剩几分钟|minutes left|minutes.*(?:left|remaining)", re.I),
        ("剩余通话", "Minutes left"),
    ),
    (
        re.compile(r"打了多少|已用.*通话|用了.*分钟|minutes.*used|used.*minutes", re.I),
        ("本月已用通话", "Minutes used this month"),
    ),
    (
        re.compile(r"合约.*(?:剩|还有|几个月)|months? left|contract.*left", re.I),
        ("合约剩余月数", "Contract months left"),
    ),
    (re.compile(r"返还|返多少|credit back|monthly credit", re.I), ("每月返还", "Monthly credit")),
    (re.compile(r"什么时候|啥时候|哪天|几号|开始|since when|when did|start", re.I), ("开始时间", "Start date")),
    (
        re.compile(
            r"条件|限制|能不能|可以.*吗|能.*吗|够.*吗|资格|年龄|岁|规则|怎么算|收钱|超出|超了|结转|几点|时间段|清零|生效"
            r"|eligible|qualif|can i|who can|rules?|condition|only|over|under|extra|after|expire|roll|hours|per day",
            re.I,
        ),
        ("业务规则", "Rules"),
    ),
    (re.compile(r"流量|多少G|几个G|data|gb", re.I), ("流量总量", "Data")),
    (re.compile(r"通话|分钟|语音|minutes|calls?", re.I), ("通话时长", "Minutes")),
    (
        re.compile(
            r"怎么办|怎么开|怎么订|在哪|哪里|渠道|如何办|办理|订"
            r"|how do i (?:get|add|order|subscribe|apply)|where|sign up"
            r"|subscribe",
            re.I,
        ),
        ("办理渠道", "Channels"),
    ),
    (
        re.compile(
            r"叫什么|(?:什么|啥|哪个|哪种)(?:套餐|卡|业务)|(?:用|办|开)的(?:是|哪)|名字"
            r"|what plan|which plan|called|name|\bam i on\b",
            re.I,
        ),
        NAME_KEYS,
    ),
    (re.compile(r"多少钱|价格|资费|月租|费用|贵|便宜|how much|cost|price|fee|charge", re.I), ("业务费用", "Fee")),
)
_KEY_FIELDS = {  # what a product answer says when no cue picks a field
    "zh": ("业务费用", "流量总量", "通话时长", "业务规则"),
    "en": ("Fee", "Data", "Minutes", "Rules"),
}
# the question asks what a product holds ("包含什么", "送不送", "does it include caller ID", "what comes with it"): its
# data, minutes and rules (where extras are stated), beside any field it names
_INCLUDES = re.compile(
    r"包含|包括|含|送|附带|带不带|include|come[s]? with|included|what do (?:i|you) get|extras?\b", re.I
)
_HOW_MUCH = re.compile(r"多少|几|how (?:much|many)", re.I)
_FIELD_SPLIT = re.compile(r"(?:[，,]\s*)(?=[^，,：:]{1,24}[：:])")

POLICY_REPLIES = {
    "zh": {
        "greeting": "您好！请问有什么可以帮您？",
        "thanks": "不客气！还有其他问题随时问我。",
        "bye": "好的，祝您生活愉快，再见！",
        "not_in_knowledge": "抱歉，这个问题我在现有资料里没有查到，不能给您准确答复。"
        "您可以在官方APP中查询、拨打客服热线，"
        "或者我为您转接人工客服。",
        "action": "这项操作我无法直接为您办理，也不会替您提交。",
        "action_how": "您可以这样自己办理：{how}",
        "action_none": "您可以通过官方APP或营业厅自助办理，或者我为您转接人工客服，由人工核实身份后办理。",
        "handover": "如需人工办理，我可以为您转接人工客服。",
        "other_language": "抱歉，我只能用中文或英文回答。Sorry, I can only answer in Chinese or English.",
    },
    "en": {
        "greeting": "Hello! How can I help you today?",
        "thanks": "You're welcome! Let me know if there is anything else.",
        "bye": "Goodbye, and have a nice day!",
        "not_in_knowledge": "Sorry, I could not find that in the information I have, so I can't give you an exact "
        "answer. You can check the official app, call the customer service hotline, or I can put you through to a "
        "human agent.",
        "action": "I can't make that change on your account from here, and I haven't submitted anything.",
        "action_how": "You can do it yourself: {how}",
        "action_none": "You can do it yourself in the official app or at a store, or I can put you through to a human "
        "agent who will verify your identity and do it for you.",
        "handover": "If you'd rather have it done for you, I can put you through to a human agent.",
        "other_language": "Sorry, I can only answer in English or Chinese. 抱歉，我只能用英文或中文回答。",
    },
}
_THANKS = re.compile(r"谢|thank|thx|cheers|\bta\b", re.I)
_BYE = re.compile(r"再见|拜拜|bye|that'?s all|没事了|没有了", re.I)


class ExtractiveGenerator(Generator):
    """Answers from the top cited item: its field or sentence that answers the question, in a short sentence of
    the request's language; policy turns get the policy's fixed reply."""

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        yield extractive_reply(request)

    def to_config(self) -> JSONDict:
        return {"name": "extractive"}


def extractive_reply(request: GenerationRequest) -> str:
    """The reply for ``request`` (see :class:`ExtractiveGenerator`)."""
    language = "zh" if request.language == "zh" else "en"
    texts = POLICY_REPLIES[language]
    question = _last_user(request.context)
    if request.policy == "other_language":
        return texts["other_language"]
    if request.policy == "small_talk":
        key = "thanks" if _THANKS.search(question) else "bye" if _BYE.search(question) else "greeting"
        return texts[key]
    if request.policy == "not_in_knowledge" or (not request.knowledge and request.policy != "action"):
        return texts["not_in_knowledge"]
    if request.policy == "action":
        how = _how_to(request.knowledge, language)
        tail = texts["action_how"].format(how=how) + texts["handover"] if how else texts["action_none"]
        return texts["action"] + (" " if language == "en" else "") + tail
    items = request.knowledge
    if asks_own_services(question) and len(items) > 1 and all(is_service_item(i) for i in items):
        return own_services(items, language)  # "which plans do I have?": every service cited
    compared = comparison_reply(items, question, language)
    if compared is None:
        compared = possession_reply(items, question, language)
    return (
        compared if compared is not None else answer_from(items[0], question, language, _user_before(request.context))
    )


_WH = re.compile(r"^\s*(?:what|which|who|where|when|why|how)\b|哪|什么|啥|多少|几", re.I)


def possession_reply(items: Sequence[Knowledge], question: str, language: str) -> str | None:
    """Yes or no to "do I have X?" (``asks_possession``, not a which/what question) when the question names X in
    part (a word or character pair of its name): yes when the first item is the user's own record of X (its fee
    and start, verbatim); no when it is the catalogue product X and the other items are the user's services, none
    of that name (they are listed, then what the product is). ``None`` otherwise."""
    if not items or not asks_possession(question) or _WH.search(question) or items[0].source == SourceKind.FAQ:
        return None
    top = items[0]
    name = _service_name(top)
    if not name or not key_terms(name) & key_terms(question):
        return None
    if not top.is_global:
        fields = item_fields(top)
        details = [
            v
            for v in (fields.get("业务费用") or fields.get("Fee"), fields.get("开始时间") or fields.get("Start date"))
            if v
        ]
        if language == "zh":
            return f"是的，您有{name}" + (f"（{'，开始时间'.join(details)}）" if details else "") + "。"
        detail = f" ({details[0]}, since {details[1]})" if len(details) == 2 else f" ({details[0]})" if details else ""
        return f"Yes, you have the {name}{detail}."
    services = [i for i in items[1:] if not i.is_global and is_service_item(i)]
    if not services or any(_service_name(i) == name for i in services):
        return None
    owned = [_service_name(i) for i in services]
    product = answer_from(top, question, language)
    if language == "zh":
        return f"您目前的业务里没有{name}（您有{'、'.join(owned)}）。{product}"
    listed = ", ".join(f"the {n}" for n in owned[:-1]) + (" and " if len(owned) > 1 else "") + f"the {owned[-1]}"
    return f"No, the {name} is not among your services (you have {listed}). {product}"


def _service_name(item: Knowledge) -> str:
    return _name_field(item_fields(item))


def _name_field(fields: dict[str, str]) -> str:
    """The plan/product/service name among an item's fields ("" when it has none)."""
    return name_attribute(fields)


def comparison_reply(items: Sequence[Knowledge], question: str, language: str) -> str | None:
    """Both sides of a comparison ("is the weekend pack better value than that?"), each named with its asked
    value(s) (else its key fields): when ``question`` compares and the first two items are named plans, products
    or services; else ``None``. Values are copied verbatim."""
    named = [i for i in items[:2] if i.source != SourceKind.FAQ and _service_name(i)]
    if not asks_comparison(question) or len(named) != 2:
        return None
    return " ".join(answer_from(item, question, language) for item in named).replace("。 ", "。")


def answer_from(item: Knowledge, question: str, language: str, context: str = "") -> str:
    """The part of ``item`` that answers ``question``, as a sentence (``context``: the user's turn before, which
    settles which of the user's figures a bare "how much is left?" asks for)."""
    if item.source == SourceKind.FAQ:
        answer = str(item.fields.get("answer") or _after(item.text, ("答案：", "Answer:")))
        return _sentence(answer, language)
    fields = item_fields(item)
    if not fields:
        return _sentence(item.text, language)
    name = _name_field(fields)
    keys = asked_keys(question, fields) or (named_keys(question, fields, context) if item.scope and not name else [])
    if not keys:
        keys = [k for k in _KEY_FIELDS[language] if k in fields] if name and not item.scope else list(fields)
    elif name and not item.scope and _INCLUDES.search(question) and not _HOW_MUCH.search(question):
        # "does it include caller ID?": what it holds (not "包含多少通话", which names its field)
        keys = [*keys, *(k for k in _KEY_FIELDS[language][1:] if k in fields and k not in keys)]
    if name and not item.scope:  # a field whose value holds what the question says or asks for ("1GB", "几点")
        keys = [*keys, *(k for k in said_in_values(question, fields) if k not in keys and fields[k] != name)]
    fee = "业务费用" if language == "zh" else "Fee"
    if name and not item.scope and fee in fields and fee not in keys:  # a product answer always says its price
        keys = [fee, *keys]
    if item.scope and not name:  # the user's own figures: the asked one(s), else all
        return _join([_own(k, fields[k], language) for k in keys], language)
    return _join([_product(name, k, fields[k], language, bool(item.scope)) for k in keys], language)


_AMOUNT = re.compile(r"\d+(?:\.\d+)?\s*(?:gb|g|mb|m|mbps|元|yuan|分钟|minutes?|个月|months?|天|days?)\b", re.I)
_CLOCK = re.compile(r"\d{1,2}:\d{2}")
_ASKS_CLOCK = re.compile(r"几点|什么时[候间]段|\bwhat (?:hours|time)\b|\bwhich hours\b|\bfrom when\b", re.I)
_WORD = re.compile(r"[a-z]{5,}")


def said_in_values(question: str, fields: dict[str, str]) -> list[str]:
    """The keys whose value holds what ``question`` says or asks for, read from the values themselves (no cue
    for any field name): an amount it says ("what happens after the 1GB"), a clock time when it asks for hours
    ("几点到几点能用"), an English word of five letters or more it shares with one value alone by its first five
    ("any install fee" → "free installation")."""
    lowered = question.lower()
    amounts = {re.sub(r"\s+", "", a.lower()) for a in _AMOUNT.findall(lowered)}
    stems = {w[:5] for w in _WORD.findall(lowered)}
    owners: dict[str, list[str]] = {}
    for key, value in fields.items():
        for word in {w[:5] for w in _WORD.findall(value.lower())} - {w[:5] for w in _WORD.findall(key.lower())}:
            owners.setdefault(word, []).append(key)
    found = []
    for key, value in fields.items():
        text = value.lower()
        spaced = re.sub(r"\s+", "", text)
        if (
            any(a in spaced for a in amounts)
            or (_ASKS_CLOCK.search(question) and _CLOCK.search(text))
            or any(owners.get(stem) == [key] for stem in stems)
        ):
            found.append(key)
    return found


def is_service_item(item: Knowledge) -> bool:
    """Whether ``item`` is one of the user's own services (a profile item with a service name)."""
    return not item.is_global and bool(_service_name(item))


def own_services(items: Sequence[Knowledge], language: str) -> str:
    """The user's services (profile items with a service name) listed with their fees, values verbatim."""
    listed = []
    for item in items:
        fields = item_fields(item)
        name = _name_field(fields)
        fee = fields.get("业务费用") or fields.get("Fee")
        if language == "zh":
            listed.append(f"{name}（{fee}）" if fee else name)
        else:
            listed.append(f"the {name} ({fee})" if fee else f"the {name}")
    if language == "zh":
        return "您目前办理的业务有：" + "、".join(listed) + "。"
    return (
        "You currently have " + (", ".join(listed[:-1]) + " and " + listed[-1] if len(listed) > 1 else listed[0]) + "."
    )


def item_fields(item: Knowledge) -> dict[str, str]:
    """The item's attributes (``业务名称`` → value ...), from its fields or parsed from ``key：value`` text."""
    attributes = item.fields.get("attributes")
    if isinstance(attributes, dict) and attributes:
        return {str(k): str(v) for k, v in attributes.items()}
    result: dict[str, str] = {}
    for part in _FIELD_SPLIT.split(item.text.strip().rstrip("。.")):
        key, sep, value = part.partition("：") if "：" in part else part.partition(":")
        if sep and key.strip() and value.strip():
            result[key.strip()] = value.strip().rstrip("，,;；")
    return result


def asked_keys(question: str, fields: dict[str, str], first_match: bool = False) -> list[str]:
    """The field keys of ``fields`` the question asks for (the first cue that names a present field; with
    ``first_match``, only the first cue the question matches at all)."""
    for pattern, keys in _FIELD_CUES:
        if pattern.search(question):
            present = [k for k in keys if k in fields]
            if present or first_match:
                return present
    return []


_KEY_FILLERS = frozenset({"the", "this", "per", "and", "for", "with", "your", "name"})


def key_terms(text: str) -> set[str]:
    """The terms a field name is matched by: English words of three letters or more (no fillers such as "this"),
    Chinese character pairs."""
    lowered = text.lower()
    pairs = {a + b for run in re.findall(r"[\u4e00-\u9fff]+", lowered) for a, b in pairwise(run)}
    return pairs | {w for w in re.findall(r"[a-z]{3,}", lowered) if w not in _KEY_FILLERS}


def key_match(key: str, question: str, context: str = "") -> tuple[int, int, int]:
    """How well ``question`` names the field ``key`` by the key's own words (the knowledge base's schema, no cue
    list): terms of the key in the question, then in ``context`` (the turn before), then minus the key's terms in
    neither; ``(0, 0, 0)`` when the question names none of them."""
    terms, said, before = key_terms(key), key_terms(question), key_terms(context)
    hit = len(terms & said)
    if not hit:
        return (0, 0, 0)
    return (hit, len((terms - said) & before), -len(terms - said - before))


def named_keys(question: str, fields: dict[str, str], context: str = "") -> list[str]:
    """The keys of ``fields`` the question names by their own words (``key_match``): of the keys with the most
    words in the question, those whose every word is said in the question or the turn before (the most said
    before first); [] when none is (a key half said may be the wrong one: "how many minutes can I still call
    this month" is not ``Minutes used this month``). "how much is left?" after a data question → ``Data left``,
    not ``Night data left``. A Chinese question that says no key whole names the one key that a character pair
    of it names alone (a pair no other key of ``fields`` has: "账户里还有多少钱" → ``账户余额``, "合约还剩几个月" →
    ``合约剩余月数``)."""
    scored = {k: key_match(k, question, context) for k in fields}
    hit = max((v[0] for v in scored.values()), default=0)
    full = {k: v for k, v in scored.items() if hit and v[0] == hit and not v[2]}
    if not full:
        return _named_alone(question, list(fields))
    best = max(full.values(), default=(0, 0, 0))
    return [k for k, v in full.items() if v == best]


def _named_alone(question: str, keys: Sequence[str]) -> list[str]:
    """The one Chinese key that a word of it (jieba, two characters or more) found in no other of ``keys`` is said
    in ``question`` names."""

    def own(word: str, key: str) -> bool:  # in no other key's text
        return not any(word in other for other in keys if other != key)

    alone = [k for k in keys if any(w in question and own(w, k) for w in _key_words(k))]
    return alone if len(alone) == 1 else []


@lru_cache(maxsize=1024)
def _key_words(key: str) -> frozenset[str]:
    if not re.search(r"[\u4e00-\u9fff]", key):
        return frozenset()
    return frozenset(w for w in chinese_words(key) if len(w) > 1 and re.fullmatch(r"[\u4e00-\u9fff]+", w))


def _own(key: str, value: str, language: str) -> str:
    if language == "zh":
        return f"您的{key}是{value}"
    return f"Your {key[0].lower() + key[1:]}: {value}"


_EN_FIELD = {
    "Fee": "The {name} costs {value}",
    "Data": "The {name} includes {value}",
    "Minutes": "The {name} includes {value}",
    "Rules": "For the {name}: {value}",
    "Channels": "You can get the {name} through {value}",
    "Type": "The {name} is a {value}",
    "Start date": "Your {name} started on {value}",
    "Service name": "It is the {name}",
}
_ZH_FIELD = {
    "业务费用": "{name}的费用是{value}",
    "流量总量": "{name}包含{value}",
    "通话时长": "{name}的通话：{value}",
    "业务规则": "{name}的规则：{value}",
    "办理渠道": "{name}可以通过{value}办理",
    "业务类型": "{name}属于{value}",
    "开始时间": "您的{name}开始时间是{value}",
    "业务名称": "是{name}",
}


def _product(name: str, key: str, value: str, language: str, own: bool) -> str:
    if language == "zh":
        if own and key == "业务费用":
            return f"您的{name}费用是{value}"
        return _ZH_FIELD.get(key, "{name}的{key}：{value}").format(name=name, key=key, value=value)
    if own and key == "Fee":
        return f"Your {name} costs {value}"
    return _EN_FIELD.get(key, "{key} of the {name}: {value}").format(name=name, key=key, value=value)


def _how_to(items: Sequence[Knowledge], language: str) -> str:
    for item in items:
        if item.source == SourceKind.FAQ:
            return _sentence(str(item.fields.get("answer") or _after(item.text, ("答案：", "Answer:"))), language)
        fields = item_fields(item)
        channel = fields.get("办理渠道") or fields.get("Channels")
        name = _name_field(fields)
        if channel:
            return _sentence(
                _product(name, "办理渠道" if language == "zh" else "Channels", channel, language, False), language
            )
    return ""


def _after(text: str, markers: Sequence[str]) -> str:
    for marker in markers:
        if marker in text:
            return text.split(marker, 1)[1].strip()
    return text


def _sentence(text: str, language: str) -> str:
    text = text.strip().rstrip("，,;；")
    if not text:
        return text
    end = "。" if language == "zh" else "."
    return text if text[-1] in "。.!！?？" else text + end


def _join(parts: Sequence[str], language: str) -> str:
    if language == "zh":
        return "，".join(p.rstrip("。") for p in parts) + "。"
    return " ".join(_sentence(p[0].upper() + p[1:], language) for p in parts)


def _user_before(context: Sequence[Turn]) -> str:
    """The user's turn before the last one ("" if none)."""
    said = [t.text for t in context if t.speaker == Speaker.USER]
    return said[-2] if len(said) > 1 else ""


def _last_user(context: Sequence[Turn]) -> str:
    return next((t.text for t in reversed(context) if t.speaker == Speaker.USER), "")
