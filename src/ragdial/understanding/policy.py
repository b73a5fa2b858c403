"""What a customer-service turn asks for, decided before retrieval and generation.

- the **policy**: ``answer`` (from knowledge), ``action`` (the user asks the agent to do something on the account it
  cannot do: never claim it is done, explain how or hand over), ``small_talk`` (greetings, thanks: no knowledge, no
  account data); ``not_in_knowledge`` is decided after retrieval, when no item is relevant enough.
- the **route**: which source answers it, as MobileCS2 ``api_query`` labels (the user's own data → the profile,
  products → products, how-to → the FAQ), mapped to look-ups by ``decision_for_api_query`` (the same mapping the
  trained api_query detector uses).
- the **rewrite**: a follow-up ("那这个多少钱？", "how do I cancel it?") gets the entity of the previous turns or of
  the item cited before, so retrieval sees a self-contained question. The rewrite is kept for inspection.

The cues are surface patterns of the two languages (no model); a turn none of them matches is routed everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ragdial.schema import Knowledge, Speaker, Turn
from ragdial.understanding.decision import Decision
from ragdial.understanding.detectors import decision_for_api_query

ANSWER, NOT_IN_KNOWLEDGE, ACTION, SMALL_TALK, TASK = "answer", "not_in_knowledge", "action", "small_talk", "task"
OTHER_LANGUAGE = "other_language"  # a turn in neither Chinese nor English: say so, answer nothing
POLICIES = (ANSWER, NOT_IN_KNOWLEDGE, ACTION, SMALL_TALK, TASK, OTHER_LANGUAGE)
PROFILE, PRODUCT, FAQ = "profile", "product", "faq"
# the MobileCS2 api_query label of each route (datasets.mobilecs2.query_source maps them to sources)
SHORT_WORDS, SHORT_CHARS = 6, 12  # a follow-up longer than this carries its own subject (tuned on dev)
ROUTE_LABELS = {PROFILE: "查询用户已办理的业务", PRODUCT: "查询特定业务信息", FAQ: "[QA]"}

_SMALL_TALK = re.compile(
    r"^\s*(?:你好|您好|hi|hello|hey|good (?:morning|afternoon|evening)|谢谢|多谢|谢了|感谢"
    r"|thanks?(?: you)?(?: a lot| so much)?|thx|cheers|ta|好的|好|行|嗯|ok(?:ay)?|bye|goodbye|再见|拜拜|没事了|没有了"
    r"|that'?s all|great|perfect|cool|明白了|知道了|了解了)"
    r"[\s,，!！.。~～啊呀哈啦了哦嘛的,]*(?:(?:你|谢谢|thanks?|哈|啦|bye|再见)[\s,，!！.。~～啊呀哈啦了哦嘛的]*)*$",
    re.IGNORECASE,
)
_ACTION = re.compile(
    r"(?:帮|替|给)我(?:把|直接|现在|马上)?.{0,12}?(?:开通|办理|办|订|退订|退掉|取消|关掉|关闭|充值|充|交|缴|改|换|升级|降级|注销|"
    r"挂失|停机|复机|约|预约|转|加|开|装|恢复|重置|退)"
    r"|(?:直接|现在|马上)(?:给我|帮我|为我)?(?:开通|办理|办|订|退订|取消|充值|改|换)"
    r"|给我(?:开|订|办|退|充|换|改|装)|(?:我要|我想)(?:马上|现在)?(?:退订|取消|注销)(?:掉)?(?:它|这个|那个)?$"
    r"|\b(?:please\s+)?(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:cancel|activate|subscribe|sign\s+me\s+up|add|"
    r"book|change|switch|top\s+up|turn\s+(?:on|off)|enable|disable|upgrade|downgrade|unsubscribe|close|reset|"
    r"schedule|set\s+up|renew|remove|stop|port|block|unblock|put|do\s+(?:it|that))\b"
    r"|^\s*(?:please\s+)?(?:cancel|activate|subscribe|add|book|change|switch|top\s+up|turn\s+off|turn\s+on|upgrade|"
    r"downgrade|unsubscribe|close|reset|schedule|renew|remove|stop|sign\s+me\s+up|do\s+it)\b.*(?:for\s+me|now|please|"
    r"it|that|this|my)\b"
    r"|帮我把|给我把|帮(?:她|他|我家人)(?:开|办)|\bopen\s+a\s+(?:line|number)\s+for\b|\bput\s+.{1,30}\bon\s+my\b"
    r"|\bpay\s+(?:it|that|the bill)\s+(?:from|with)\b"
    r"|\b(?:just\s+)?(?:do|sort|set)\s+(?:it|that)\s+(?:for\s+me|up|now)\b|\bi\s+want\s+you\s+to\s+\w+",
    re.IGNORECASE,
)
_PROFILE = re.compile(
    r"我(?:的|这个|现在|目前|这)|我还|还剩|剩(?:下|余)?多少|余额|话费还|用了多少|已用|扣了|花了|欠费|合约还|还有几|开始|什么时候(?:开|办)"
    r"|\bmy\b|\bi\s+(?:have|got|am|still|use|used|spent|owe|pay)|\bam\s+i\b|\bdo\s+i\s+have|\bleft\b|\bremaining\b"
    r"|\bbalance\b|\bused\b|\bspent\b|\bowe\b",
    re.IGNORECASE,
)
_HOW_TO = re.compile(
    r"怎么|如何|怎样|咋|哪里|在哪|多久|几天|为什么|为啥|能不能|可以.*吗|要不要|需要什么|什么条件|会不会|了怎么办|是什么流量"
    r"|\bhow\b|\bwhere\b|\bwhy\b|\bwhat (?:do|should|happens|if)\b|\bcan i\b|\bwhen\b|\bdo i need\b|\bis it possible\b",
    re.IGNORECASE,
)
_PRODUCT = re.compile(
    r"套餐|流量包|包|卡|宽带|漫游|多少钱|价格|资费|月租|费用|业务|彩铃|会员|副卡|亲情号|提醒|守护|分钟包"
    r"|\bplans?\b|\bpacks?\b|\bpass\b|\bcard\b|\bbroadband\b|\broaming\b|\bprice\b|\bcost\b|\bhow much\b|\bfee\b"
    r"|\bbundle\b|\boffer\b|\badd-on\b",
    re.IGNORECASE,
)
_PRODUCT_FACT = re.compile(
    r"多少钱|多少G|几个G|价格|资费|月租|怎么收|收多少|包含|含多少|多少分钟|几分钟|几点|哪些时间"
    r"|\bhow much\b|\bcost\b|\bprice\b|\bfee\b|\bhow many (?:minutes|gb)\b|\bcome with\b|\binclude|\bper day\b"
    r"|\bwhat hours\b",
    re.IGNORECASE,
)
_HOW_TO_CHECK = re.compile(
    r"(?:怎么|如何|怎样|咋)(?:查|看|知道)|\bhow (?:do|can|could) i (?:check|see|find|look)", re.I
)
_OWN_DATA = re.compile(
    r"剩(?:几|多少|下|余)|(?:快|已经|都)用完|还能打|(?:什么|啥)时候(?:办|开)|我(?:家)?(?:的|自己的)?(?:宽带|套餐|号码?|卡)(?:是|呢|里)|"
    r"余额|话费还剩|还剩|剩余|剩下|已用|扣了|花了|欠费|欠了|开始时间|什么时候开|合约还|返还|我(?:现在|目前)?(?:的|用的|办的|开的|是)(?:什么|哪个)?套餐"
    r"|我(?:开|办)了(?:哪些|什么)|我现在用的|我的套餐|我.*(?:几号|哪天|什么时候)(?:开始|办的|开通)"
    r"|\bsince when\b|\bwhen did i\b|\bdo i (?:already )?have\b"
    r"|\bbalance\b|\bleft\b|\bremaining\b|\bused\b|\bspent\b|\bcharges?\b|\bowe\b|\boverdue\b|\bmy (?:plan|services|"
    r"contract|bill|number|account|data|minutes)\b|\bwhat plan am i\b|\bmy current (?:plan|package)\b"
    r"|\bwhen did (?:i|my)\b|\bam i (?:on|paying)\b",
    re.IGNORECASE,
)
# the user asks which services/plans they have: a question about their own data, never an account action
_OWN_SERVICES = re.compile(
    r"我(?:现在|目前|当前|家|自己)?(?:都|已经|一共|总共)?(?:开通|办理|订购|订阅|开|办|订)(?:了|着|的|过)"
    r"(?:哪些|哪几个|什么|几个|啥|多少个)"
    r"|我(?:现在|目前|当前|名下)?(?:都|一共|总共)?有(?:哪些|哪几个|什么|几个|啥)(?:业务|套餐|服务|包|增值)"
    r"|\b(?:which|what)\s+(?:plans|services|packages|packs|add-?ons|bundles|subscriptions|products)\s+"
    r"(?:do|did|have|am)\s+i\b|\b(?:am\s+i|i'?m|i\s+am)\s+(?:currently\s+|already\s+)?(?:subscribed|signed\s+up)\b",
    re.IGNORECASE,
)
# the user's services named as a whole ("我已办理的业务", "my subscriptions"): their own data, whatever is asked
_SUBSCRIBED = re.compile(
    r"(?:已|已经)(?:开通|办理|订购|订阅|开|办|订)(?:了)?(?:的|过的)(?:业务|套餐|服务)"
    r"|\bmy\s+(?:subscriptions?|services|plans|packages|add-?ons)\b",
    re.IGNORECASE,
)
# "帮我查一下…", "show me …": a request to look something up, not to change the account
_LOOK_UP = re.compile(r"(?:帮|替|给)我(?:查|看|瞧|找)|\b(?:show|tell|list)\s+me\b", re.IGNORECASE)
_FOLLOW_UP = re.compile(
    r"^(?:那|那么|还有|这个|那个|它|这|再|还|呢|那要|那如果|如果)|这个|那个|它|该|这种|那种|呢[？?]?$"
    r"|^(?:and|what about|how about|so|then|also)\b|\b(?:it|that|this|them|those|these|one)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TurnIntent:
    """The policy and route of a turn (``route`` empty: every source); ``services``: it asks which services the user
    has (answered by all of them)."""

    policy: str
    route: str = ""
    follow_up: bool = False
    services: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "route": self.route, "follow_up": self.follow_up, "services": self.services}


@dataclass(frozen=True)
class Rewrite:
    """The query retrieval was asked (``text``), the turn it came from, and what was carried over."""

    original: str
    text: str
    carried: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return self.text != self.original

    def to_dict(self) -> dict[str, Any]:
        return {"original": self.original, "query": self.text, "carried": list(self.carried)}


_OTHER_SCRIPT = re.compile(r"[\u3040-\u30ff\uac00-\ud7af\u0400-\u04ff\u0600-\u06ff\u0e00-\u0e7f\u0900-\u097f]")
_OTHER_LATIN = re.compile(
    r"[àâäçéèêëîïôöùûüÿñßœ¿¡]|\b(?:quel|quelle|est|mon|ma|mes|combien|pourquoi|je|ich|ist|mein|meine|wie|viel|"
    r"cuánto|cuál|qué|mi|tengo|el|los|las|está|wieviel|guthaben|solde|saldo)\b",
    re.IGNORECASE,
)


def other_language(text: str) -> bool:
    """Whether ``text`` is in neither Chinese nor English (another script, or Latin text with French, Spanish or
    German marks and function words and no English one)."""
    if _OTHER_SCRIPT.search(text):
        return True
    if re.search(r"[\u4e00-\u9fff]", text):
        return False
    latin = _OTHER_LATIN.findall(text)
    english = re.findall(r"\b(?:the|is|my|what|how|much|do|i|you|can|a|of|to|it)\b", text, re.IGNORECASE)
    return len(latin) >= 2 and len(latin) > len(english)


def classify_turn(text: str, previous: Sequence[str] = ()) -> TurnIntent:
    """The policy and route of ``text``; ``previous`` are the earlier user turns (newest last), whose route a
    follow-up without its own cue inherits."""
    if other_language(text):
        return TurnIntent(OTHER_LANGUAGE)
    if _SMALL_TALK.match(text):
        return TurnIntent(SMALL_TALK)
    follow_up = bool(_FOLLOW_UP.search(text)) and len(text) <= 40
    # "你好，我现在办了哪些业务", "帮我查一下已办理的业务": asking which services one has is a question, whatever
    # verb it uses
    asks = _OWN_SERVICES.search(text) or (_LOOK_UP.search(text) and asks_own_services(text))
    policy = ACTION if _ACTION.search(text) and not asks else ANSWER
    route = _route(text)
    if not route and previous and (follow_up or len(text) <= 12):
        route = _route(previous[-1])
    return TurnIntent(policy, route, follow_up, services=asks_own_services(text))


def asks_own_services(text: str) -> bool:
    """Whether ``text`` asks which services, plans or packs the user has ("我现在办了哪些业务", "which plans do I
    have?"): answered by the user's profile service items, all of them."""
    return bool(_OWN_SERVICES.search(text) or _SUBSCRIBED.search(text))


def _route(text: str) -> str:
    if _HOW_TO_CHECK.search(text):
        return FAQ
    if _OWN_DATA.search(text) or asks_own_services(text):
        return PROFILE
    if _PRODUCT_FACT.search(text):
        return PRODUCT
    if _HOW_TO.search(text):
        return FAQ
    if _PRODUCT.search(text):
        return PRODUCT
    return ""


def route_decision(decision: Decision, route: str) -> Decision:
    """``decision`` narrowed to the route's source (the api_query mapping); unchanged without a route, or when the
    detector already decided (a trained model) or needs no knowledge."""
    if not route or not decision.needs_knowledge or decision.detector not in ("always", ""):
        return decision
    routed = decision_for_api_query([ROUTE_LABELS[route]])
    return Decision(True, routed.lookups, routed.sources, label=ROUTE_LABELS[route], detector="policy")


def rewrite_turn(
    context: Sequence[Turn], intent: TurnIntent, lookup: Callable[[str], Knowledge | None], names: Sequence[str]
) -> Rewrite:
    """The last user turn made self-contained: a follow-up that names no known plan/product gets the name of the
    item cited in the last system turn (``lookup`` by id), else the entity named in the previous user turn."""
    text = context[-1].text
    short = len(text.split()) <= SHORT_WORDS if re.search(r"[a-zA-Z]{2}", text) else len(text) <= SHORT_CHARS
    follow_up = intent.follow_up or intent.policy == ACTION  # "just do it for me": the thing talked about
    if intent.policy == SMALL_TALK or not follow_up or not short or _names_in(text, names):
        return Rewrite(text, text)
    carried: list[str] = []
    previous = [t.text for t in context[:-1] if t.speaker == Speaker.USER and not _SMALL_TALK.match(t.text)]
    for said in reversed(previous[-2:]):  # a plan/product the user named in the last two turns
        found = _names_in(said, names)
        if found:
            carried.append(found[0])
            break
    if not carried:  # else the product cited in the last reply
        last = next((t for t in reversed(context[:-1]) if t.speaker == Speaker.SYSTEM), None)
        item = lookup(last.knowledge_ids[0]) if last is not None and last.knowledge_ids else None
        name = _item_name(item) if item is not None and item.is_global and "name" in item.fields else ""
        if name:
            carried.append(name)
    if not carried and previous:  # else what the user asked last
        carried.append(previous[-1])
    if not carried:
        return Rewrite(text, text)
    return Rewrite(text, f"{carried[0]} {text}", tuple(carried))


def item_is_profile(item: Knowledge | None) -> bool:
    return item is not None and not item.is_global


def _item_name(item: Knowledge) -> str:
    name = item.fields.get("name") or item.fields.get("question")
    attributes = item.fields.get("attributes")
    if not name and isinstance(attributes, dict):
        name = attributes.get("业务名称") or attributes.get("Service name")
    return str(name) if name else ""


def _names_in(text: str, names: Sequence[str]) -> list[str]:
    lowered = text.lower()
    return [n for n in names if n.lower() in lowered]
