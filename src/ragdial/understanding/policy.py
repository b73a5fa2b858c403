"""What a customer-service turn asks for: the names and cues the grounded path shares.

- the **policies**: ``answer`` (from knowledge), ``not_in_knowledge``, ``action`` (the user asks the agent to do
  something on the account it cannot do: never claim it is done, explain how or hand over), ``small_talk``
  (greetings, thanks: no knowledge, no account data), ``other_language``. The policy and the route of a turn are
  decided by the learned answer model (``ragdial.pipeline.answer_model``) from the turn and its retrieval; a third
  language is recognised here by its script and words.
- the **routes**: which source answers it (the user's own data → the profile, products → products, how-to → the
  FAQ), named by MobileCS2 ``api_query`` labels in the decision the API shows.
- the **rewrite**: a follow-up ("那这个多少钱？", "how do I cancel it?") gets the entity of the previous turns or of
  the item cited before, so retrieval sees a self-contained question (one of the queries the candidates come from);
  the rewrite is kept for inspection.
- the **services** cue: a question about which services the user has is answered by all their services.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragdial.jsontypes import JSONDict
from ragdial.schema import Knowledge, Speaker, Turn, name_attribute

ANSWER, NOT_IN_KNOWLEDGE, ACTION, SMALL_TALK, TASK = "answer", "not_in_knowledge", "action", "small_talk", "task"
OTHER_LANGUAGE = "other_language"  # a turn in neither Chinese nor English: say so, answer nothing
POLICIES = (ANSWER, NOT_IN_KNOWLEDGE, ACTION, SMALL_TALK, TASK, OTHER_LANGUAGE)
PROFILE, PRODUCT, FAQ = "profile", "product", "faq"
# the MobileCS2 api_query label of each route (datasets.mobilecs2.query_source maps them to sources)
SHORT_WORDS, SHORT_CHARS = 6, 12  # a follow-up longer than this carries its own subject (tuned on dev)
ROUTE_LABELS = {PROFILE: "查询用户已办理的业务", PRODUCT: "查询特定业务信息", FAQ: "[QA]"}

_HOW_TO_CHECK = re.compile(
    r"(?:怎么|如何|怎样|咋)(?:查|看|知道)|\bhow (?:do|can|could) i (?:check|see|find|look)", re.I
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
    r"|\bmy\s+(?:subscriptions?|services|plans|packages|add-?ons)\b"
    r"|(?:每个?月)?(?:都)?(?:在)?(?:交|付|扣)(?:了)?(?:哪些|什么)(?:钱|费|业务)"
    r"|\b(?:what|everything)(?:\s+else)?\s+(?:am\s+i|i'?m|im|i\s+am)\s+(?:paying|charged)\s+for\b",
    re.IGNORECASE,
)
# the user asks whether they have a given service ("我开通国际漫游了吗", "do I have the 5G plan?"): answered yes or no
# from their own services, with the value; a question about a figure they have ("do I have any data left") is not one
_POSSESSION = re.compile(
    r"我(?:是不是|是否|有没有|有没)(?:已经)?(?:开通?|办理?|订购?|订|加|有|用)"
    r"|我(?:已经|现在|目前)?(?:开通|办理|订购|开|办|订|加)(?:了|过)?[^，,。？?]{1,16}?(?:了吗|过吗|了没有?|了不|没有?)[？?]?\s*$"
    r"|我(?:现在|目前|已经)?有[^，,。？?多少几]{1,12}(?:吗|没有?)[？?]?\s*$"
    r"|\b(?:do|did)\s+i\s+(?:already\s+|still\s+)?(?:have|own|pay\s+for|subscribe\s+to)\b"
    r"|\bhave\s+i\s+(?:already\s+)?(?:got|added|subscribed|signed\s+up|activated)\b"
    r"|\bam\s+i\s+(?:already\s+)?(?:on|subscribed\s+to|signed\s+up\s+for|paying\s+for)\s+(?:the|a|an|that|this)\b"
    r"|\bis\s+(?:the\s+)?[a-z0-9 -]{2,30}\s+(?:on|active\s+on)\s+my\s+(?:account|line|number)\b",
    re.IGNORECASE,
)
_FIGURE = re.compile(r"多少|几[个块分G]|剩|余额|欠|how\s+(?:much|many)|\bleft\b|remaining|\benough\b|balance", re.I)
_FOLLOW_UP = re.compile(
    r"^(?:那|那么|还有|这个|那个|它|这|再|还|呢|那要|那如果|如果)|这个|那个|它|该|这种|那种|呢[？?]?$"
    r"|^(?:and|what about|how about|so|then|also)\b|\b(?:it|that|this|them|those|these|one)\b",
    re.IGNORECASE,
)


# the turn compares two things ("哪个便宜", "各多少", "A和B差多少", "which is cheaper", "vs"): function words and
# comparison words of the two languages, no product names
_COMPARE = re.compile(
    r"哪(?:个|一个|种)[^，,。？?多少]{0,6}(?:更|比较)?(?:便宜|贵|划算|好|多(?!少)|少|大|快|合适|省|值)|还是|区别|差别|不同|相比|对比|比(?:一下|起来)?"
    r"|划算|差多少|差几|多多少|少多少|各(?:是|有|多少|自)|分别|两个|俩"
    r"|difference|differ\b|compare|compared|\bbetter\b|\bcheaper\b|more expensive|versus|\bvs\.?\b"
    r"|which one|which is|\bboth\b|the two|\beach (?:cost|have|include|give)"
    r"|\b(?:more|less|fewer)\b[^?.!]{0,30}\bthan\b",  # not "anything bigger than that?" (another one)
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TurnIntent:
    """The policy and route of a turn (``route`` empty: every source); ``services``: it asks which services the user
    has (answered by all of them); ``comparison``: it compares two items (both are cited and stated);
    ``possession``: it asks whether the user has a given service (answered yes or no from their services)."""

    policy: str
    route: str = ""
    follow_up: bool = False
    services: bool = False
    comparison: bool = False
    possession: bool = False

    def to_dict(self) -> JSONDict:
        return {
            "policy": self.policy,
            "route": self.route,
            "follow_up": self.follow_up,
            "services": self.services,
            "comparison": self.comparison,
            "possession": self.possession,
        }


@dataclass(frozen=True)
class Rewrite:
    """The query retrieval was asked (``text``), the turn it came from, and what was carried over."""

    original: str
    text: str
    carried: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return self.text != self.original

    def to_dict(self) -> JSONDict:
        return {"original": self.original, "query": self.text, "carried": list(self.carried)}


_OTHER_SCRIPT = re.compile(r"[\u3040-\u30ff\uac00-\ud7af\u0400-\u04ff\u0600-\u06ff\u0e00-\u0e7f\u0900-\u097f]")
_OTHER_LATIN = re.compile(  # letters and function words of French, German, Spanish, Italian, Portuguese that are no
    # English words (so "die", "me", "per", "hat" are left out)
    r"[àáâãäåçéèêëìíîïòóôõöùúûüÿñßœæø¿¡]|\b(?:quel|quelle|est|mon|ma|mes|combien|pourquoi|je|vous|nous|ich|ist|"
    r"mein|meine|meinen|wie|viel|wann|nicht|oder|und|der|das|heute|kann|bitte|cuánto|cuántos|cuál|qué|mi|tengo|el|"
    r"los|las|está|hay|puedo|dónde|cómo|quedan|cuesta|quanto|quanti|quando|dove|sono|della|il|di|che|ho|costa|mio|"
    r"mia|posso|meu|minha|você|não|onde|wieviel|guthaben|solde|saldo)\b",
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
    """The cues of ``text`` before the answer model decides: another language (its policy), a follow-up (the
    rewrite carries the entity talked about), a question about which services the user has. The policy is
    ``answer`` until the model decides (``previous``: the earlier user turns, newest last; kept for callers)."""
    if other_language(text):
        return TurnIntent(OTHER_LANGUAGE)
    follow_up = bool(_FOLLOW_UP.search(text)) and len(text) <= 40
    services = asks_own_services(text) and not _HOW_TO_CHECK.search(text)
    possession = not services and asks_possession(text)
    return TurnIntent(ANSWER, "", follow_up, services, asks_comparison(text), possession)


def asks_comparison(text: str) -> bool:
    """Whether ``text`` compares things ("百兆和千兆差多少钱", "is the weekend pack better value than that?")."""
    return bool(_COMPARE.search(text))


def asks_possession(text: str) -> bool:
    """Whether ``text`` asks if the user has a given service ("我开通国际漫游了吗", "我有亲情号吗", "do I already have
    one?", "am I on the 5G plan?"), not a figure they have ("do I have any data left", "我还有多少话费")."""
    return bool(_POSSESSION.search(text)) and not _FIGURE.search(text)


def asks_own_services(text: str) -> bool:
    """Whether ``text`` asks which services, plans or packs the user has ("我现在办了哪些业务", "which plans do I
    have?"): answered by the user's profile service items, all of them."""
    return bool(_OWN_SERVICES.search(text) or _SUBSCRIBED.search(text))


def rewrite_turn(
    context: Sequence[Turn], intent: TurnIntent, lookup: Callable[[str], Knowledge | None], names: Sequence[str]
) -> Rewrite:
    """The last user turn made self-contained: a follow-up that names no known plan/product gets the name of the
    item cited in the last system turn (``lookup`` by id), else the entity named in the previous user turn."""
    text = context[-1].text
    short = len(text.split()) <= SHORT_WORDS if re.search(r"[a-zA-Z]{2}", text) else len(text) <= SHORT_CHARS
    if intent.policy != ANSWER or not intent.follow_up or not short or _names_in(text, names):
        return Rewrite(text, text)
    carried: list[str] = []
    said_before = [t.text for t in context[:-1] if t.speaker == Speaker.USER]
    for said in reversed(said_before[-2:]):  # a plan/product the user named in the last two turns
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
    previous = _answered(context[:-1])
    if not carried and previous:  # else what the user asked last (a question whose reply cited something)
        carried.append(previous[-1])
    if not carried:
        return Rewrite(text, text)
    return Rewrite(text, f"{carried[0]} {text}", tuple(carried))


def _answered(context: Sequence[Turn]) -> list[str]:
    """The user turns of ``context`` whose reply cited knowledge (a greeting or thanks carries nothing over)."""
    said = []
    for i, turn in enumerate(context):
        reply = context[i + 1] if i + 1 < len(context) else None
        if turn.speaker == Speaker.USER and (reply is None or reply.speaker != Speaker.SYSTEM or reply.knowledge_ids):
            said.append(turn.text)
    return said


def item_is_profile(item: Knowledge | None) -> bool:
    return item is not None and not item.is_global


def _item_name(item: Knowledge) -> str:
    name = item.fields.get("name") or item.fields.get("question")
    attributes = item.fields.get("attributes")
    if not name and isinstance(attributes, dict):
        name = name_attribute(attributes)
    return str(name) if name else ""


def _names_in(text: str, names: Sequence[str]) -> list[str]:
    lowered = text.lower()
    return [n for n in names if n.lower() in lowered]
