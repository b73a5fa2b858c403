"""The FutureDial-RAG organisers' MobileCS2 processing rules, re-implemented from a reading of their code.

Source read: ``futuredialchallenge/2024-RAG`` (``reader.py``: ``clean_utt``, ``clean_intent``, ``delex``,
``get_spoken``, ``get_new_qa``, ``read_data_api``, ``convert_to_sequences``; ``retrieve_kb.py``: ``evaluate_ret``;
``main.py``: ``decode_batch``; ``metrics.py``: ``split_api_result``). Nothing here is their code; the tests compare
our numbers with theirs on our own fixtures (``tests/fixtures/mobilecs2/official``).

- Text cleaning (:func:`clean_utt`) is applied to the lower-cased user and system utterances.
- The retrieval corpus ``ret_qa`` (:func:`retrieval_corpus`) is the global KB, then each ``qa.json`` entry as
  ``问题：{q}, 答案：{a}``, then one synthetic entry per ``[QA]`` turn of the dev and train dialogs (in that order),
  ``问题：{history}, 答案：{cleaned reply}``, the history being the rolling window of :class:`SpokenHistory`.
- A turn's track-1 label (:func:`api_label`): 0 user's services, 1 product, 2 other info (local), 3 ``[QA]``,
  4 not scored (``""``, ``办理``, ``取消``, ``验证`` and any multi-label query without ``查询用户已办理的业务``).
- Track-1 indexes address ``ret_qa`` followed by the dialog's ``local_kb``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

RULES_NAME = "organisers-2024"
QA = "[QA]"
HISTORY_WINDOW = 3  # cfg.retrieve_hist when ret_qa.json and the track-2 data are built
FAQ_TEXT = "问题：{question}, 答案：{answer}"
REFERENCE_PREFIX = "参考知识："

# clean_utt's removed strings, in their order.
_TOXICS = (
    "(涉敏话术)",
    "txt",
    "**$%",
    "^&**",
    "（*^▽^*）",
    "(*^▽^*)",
    "o(*￣-￣*)o",
    "\t",
    "？？",
    "? ? ?",
    "~",
    "（*^__^*）",
    "\\n",
    "*^__^*",
    "亲，请问还在吗？",
    "长时间不回复 系统会自动掉线哦",
    "（?￣ ? ￣?）",
    "“",
    "”",
    "online service",
    "亲，请问还在线吗？",
    "---",
    "--",
    "o（*￣-￣*）o",
    "（温馨提示：您可以通过稍后下发的短信链接查询问题解决进展哦）",
    "亲，对不起让您久等了！",
    " changjingzhi进人工入口",
)
_BRACKETED = re.compile(r"\[[^\[\]]*\]")
_URL = re.compile("http[^(\u4e00-\u9fa5)]+")
_YINYONG = re.compile(r"yinyong[^()]*yinyong")
_DETAILS = re.compile(r"详情页[^详情页查看]*查看")
_FLOW_ALERT = re.compile(r"【流量提醒】[^【】]*【中国移动】")


def clean_utt(text: str) -> str:
    """The organisers' ``clean_utt``: collapse ``。。``, drop emoticons, boilerplate and ``[...]`` tags, URLs become
    ``移动官网``."""
    out = text.replace("。。。", "。").replace("。。", "。").replace("??", "好的").replace("！。", "！")
    out = out.replace("？。", "。")
    for toxic in _TOXICS:
        out = out.replace(toxic, "")
    out = _BRACKETED.sub("", out)
    out = _URL.sub("移动官网", out)
    if "yinyong" in text:
        out = _YINYONG.sub("", out)
    if "详情页" in out:
        out = _DETAILS.sub("详情页查看", out)
    return out


def clean_intent(intent: str) -> str:
    """The organisers' ``clean_intent``: old api_query names mapped onto the released label set."""
    out = intent
    if "查询当前套餐" in intent:
        if "查询用户已办理的业务" in intent:
            out = out.replace("查询当前套餐，", "").replace("查询当前套餐；", "").replace("查询当前套餐", "")
        else:
            out = out.replace("查询当前套餐", "查询用户已办理的业务")
    if "查询本月月租" in intent:
        if "查询用户已办理的业务" in intent:
            out = out.replace("查询本月月租，", "").replace("查询本月月租；", "").replace("查询本月月租", "")
        else:
            out = out.replace("查询本月月租", "查询用户已办理的业务")
    if "查询定向流量信息" in intent:
        if "查询特定业务信息" in intent:
            out = (
                out.replace("查询定向流量信息，", "").replace("查询定向流量信息；", "").replace("查询特定业务信息", "")
            )
        else:
            out = out.replace("查询定向流量信息", "查询特定业务信息")
    if "查询剩余流量情况" in intent or "查询超出流量" in intent or "查询流量信息" in intent:
        out = out.replace("查询超出流量", "查询其他信息").replace("查询剩余流量情况", "查询其他信息")
        out = out.replace("查询流量信息", "查询其他信息")
    return out


def delex(query: str, result: str, response: str) -> tuple[str, str]:
    """The organisers' ``delex``: a data-alert SMS quoted in a flow query's reply is cut to ``【流量提醒】``."""
    if ("查询超出流量" in query or "查询流量信息" in query) and "【流量提醒】" in response:
        return _FLOW_ALERT.sub("【流量提醒】", result), _FLOW_ALERT.sub("【流量提醒】", response)
    return result, response


_SEPARATORS = (("，业务名称：", "业务名称："), ("。业务名称：", "业务名称："))
# Not in the organisers' code (Chinese only): the English release's separators are not public; we assume these.
_SEPARATORS_EN = ((", Service name: ", "Service name: "), (". Service name: ", "Service name: "))


def split_api_result(api_result: str) -> list[str]:
    """``reader.split_api_result``: on ``，业务名称：`` else ``。业务名称：``, later pieces re-prefixed, no repeats
    (then, our assumption for English files, on ``, Service name: `` / ``. Service name: ``)."""
    for separator, head in (*_SEPARATORS, *_SEPARATORS_EN):
        if separator in api_result:
            first, *rest = api_result.split(separator)
            return list(dict.fromkeys([first, *(head + piece for piece in rest)]))
    return [api_result]


class SpokenHistory:
    """``reader.get_spoken`` with ``retrieve_hist = window``: `` 用户：u 客服：s ...`` keeping the last ``window``
    user turns (the kept history is what the next call extends, so the window rolls)."""

    ROLES: ClassVar[dict[str, str]] = {"user": " 用户：", "system": " 客服："}

    def __init__(self, window: int = HISTORY_WINDOW) -> None:
        self.window = window
        self.text = ""

    def add(self, role: str, utterance: str) -> str:
        spoken = (self.text + self.ROLES[role] + utterance).replace("[UNK]", "")
        for marker in ("[EOS_K]", "[EOS_UI]", "[EOS_SI]", "[EOS_L]"):
            spoken = spoken.replace(marker, "")
        turns = spoken.split(" 用户：")
        if len(turns) > self.window + 1:
            spoken = " 用户：" + " 用户：".join(turns[-self.window :])
        self.text = spoken
        return spoken


# read_data_api's label of a cleaned api_query (api_label_dict + the two fall-backs).
_LABELS = {"查询用户已办理的业务": 0, "查询特定业务信息": 1, "查询其他信息": 2, QA: 3, "": 4}
LOCAL_LABELS = (0, 2)
PRODUCT_LABEL = 1
QA_LABEL = 3
NOT_SCORED = 4


# Our English api_query labels, read as the Chinese ones (the organisers' code knows only Chinese labels).
ENGLISH_LABELS = {
    "search for user's subscribed services": "查询用户已办理的业务",
    "search for products information": "查询特定业务信息",
    "search for other information": "查询其他信息",
    "subscribe": "办理",
    "cancel": "取消",
    "verify": "验证",
}


def chinese_labels(api_query: str) -> str:
    """An api_query with our English labels replaced by the organisers' Chinese ones."""
    for english, chinese in ENGLISH_LABELS.items():
        api_query = api_query.replace(english, chinese)
    return api_query


def api_label(api_query: str) -> int:
    """The organisers' track-1 label of a raw api_query (0-3 scored, 4 not)."""
    query = clean_intent(chinese_labels(api_query))
    if query in _LABELS:
        return _LABELS[query]
    if "查询用户已办理的业务" in query:
        return 0
    if query in ("查询流量信息", "查询其他信息"):
        return 2
    return NOT_SCORED


def clean_reply(system: str) -> str:
    """A system utterance as the organisers index and score it: ``clean_utt(system.lower())``."""
    return clean_utt(system.lower())


@dataclass
class SyntheticEntry:
    """One ``[QA]`` turn's entry in ``ret_qa``."""

    dialog_id: str
    turn_num: int
    question: str  # the history up to and including the user turn
    answer: str  # the cleaned reply

    @property
    def text(self) -> str:
        return FAQ_TEXT.format(question=self.question, answer=self.answer)


def synthetic_entries(
    dialogs: Iterable[tuple[str, Sequence[Mapping[str, object]]]], window: int = HISTORY_WINDOW
) -> list[SyntheticEntry]:
    """``get_new_qa``'s entries for the ``[QA]`` turns of ``(dialog id, log)`` pairs, in order."""
    entries = []
    for dialog_id, log in dialogs:
        history = SpokenHistory(window)
        for turn_num, turn in enumerate(log):
            question = history.add("user", clean_utt(str(turn.get("user", "")).lower()))
            reply = clean_reply(str(turn.get("system", "")))
            if turn.get("api_query") == QA:
                entries.append(SyntheticEntry(dialog_id, turn_num, question, reply))
            history.add("system", reply)
    return entries


@dataclass
class RetrievalCorpus:
    """``ret_qa``: products, FAQ strings, synthetic entries; ``reply_entry`` is ``kb_vs_des`` (cleaned reply →
    the text of the last synthetic entry with that reply)."""

    products: list[str]
    faq: list[tuple[str, str]]
    synthetic: list[SyntheticEntry]
    texts: list[str] = field(init=False)
    reply_entry: dict[str, str] = field(init=False)
    first_index: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.texts = [*self.products, *(FAQ_TEXT.format(question=q, answer=a) for q, a in self.faq)]
        self.texts += [entry.text for entry in self.synthetic]
        self.reply_entry = {entry.answer: entry.text for entry in self.synthetic}
        self.first_index = {}
        for index, text in enumerate(self.texts):
            self.first_index.setdefault(text, index)

    def qa_gold(self, system: str) -> int | None:
        """The index of a ``[QA]`` turn's gold entry, or ``None`` (their label ``-1``)."""
        text = self.reply_entry.get(clean_reply(system))
        return None if text is None else self.first_index.get(text)


def retrieval_corpus(
    products: Sequence[str],
    faq: Sequence[tuple[str, str]],
    qa_dialogs: Iterable[tuple[str, Sequence[Mapping[str, object]]]],
) -> RetrievalCorpus:
    """Build ``ret_qa`` as ``get_new_qa`` does (``qa_dialogs``: the dev dialogs, then the train dialogs)."""
    return RetrievalCorpus(list(products), list(faq), synthetic_entries(qa_dialogs))


def track1_gold(
    turn: Mapping[str, object], local_kb: Sequence[str], corpus: RetrievalCorpus
) -> tuple[int, list[int], list[str]]:
    """``read_data_api(ret_train=True)`` for one turn: (label, gold indexes into ``ret_qa + local_kb``, pieces found
    nowhere). Local pieces missing from ``local_kb`` (their code would stop with a ValueError) are reported as missing.
    """
    label = api_label(str(turn.get("api_query", "")))
    api_result = str(turn.get("api_result") or "")
    gold: list[int] = []
    missing: list[str] = []
    if label in LOCAL_LABELS and api_result:
        for piece in split_api_result(api_result):
            if piece in local_kb:
                gold.append(len(corpus.texts) + list(local_kb).index(piece))
            else:
                missing.append(piece)
    elif label == PRODUCT_LABEL and api_result:
        for piece in split_api_result(api_result):
            if piece in corpus.first_index:
                gold.append(corpus.first_index[piece])
            else:
                missing.append(piece)
    elif label == QA_LABEL:
        index = corpus.qa_gold(str(turn.get("system", "")))
        if index is None:
            missing.append(clean_reply(str(turn.get("system", ""))))
        else:
            gold.append(index)
    return label, gold, missing


# ---------------------------------------------------------------------------------------------- track 2


def decode_roundtrip(text: str) -> str:
    """What ``main.decode_batch`` gives back for an encoded string whose words are already lower case: bert-base-
    chinese's basic clean-up (control characters dropped, accents stripped) and every space removed. Characters
    outside that model's vocabulary would come back as ``[UNK]``; the vocabulary is not available offline, so this
    is not reproduced (no character of our fixtures is affected)."""
    out = "".join(c for c in text if not (unicodedata.category(c) in ("Cc", "Cf") and c not in "\t\n\r"))
    out = unicodedata.normalize("NFD", out)
    out = "".join(c for c in out if unicodedata.category(c) != "Mn")
    return unicodedata.normalize("NFC", "".join(out.split()))


def generated_form(text: str) -> str:
    """A generated reply as the organisers' pipeline scores it: lower case (the tokenizer's), then
    :func:`decode_roundtrip`."""
    return decode_roundtrip(text.lower())


@dataclass(frozen=True)
class Track2Gold:
    """The gold fields of one ``result.json`` turn as ``convert_to_sequences`` + ``decode_batch`` make them."""

    user: str
    response: str
    query: str
    knowledge: str


def track2_gold(log: Sequence[Mapping[str, object]], window: int = HISTORY_WINDOW) -> list[Track2Gold]:
    """Gold ``用户``/``客服``/``查询``/``查询结果`` of every turn of one dialog, as in the organisers' result file."""
    history = SpokenHistory(window)
    out = []
    for turn in log:
        user = clean_utt(str(turn.get("user", "")).lower())
        question = history.add("user", user)
        query = clean_intent(str(turn.get("api_query", "")))
        api_result, reply = delex(query, str(turn.get("api_result") or ""), clean_reply(str(turn.get("system", ""))))
        if query != QA:
            knowledge = REFERENCE_PREFIX + api_result.lower()
        else:
            knowledge = REFERENCE_PREFIX + FAQ_TEXT.format(question=question, answer=reply)
        # 查询 is kept as cleaned (Chinese labels have no spaces to lose; our English labels stay readable)
        out.append(
            Track2Gold(decode_roundtrip(user), decode_roundtrip(reply.lower()), query, decode_roundtrip(knowledge))
        )
        history.add("system", reply)
    return out


def inform_pieces(knowledge: str) -> list[str]:
    """``metrics.split_api_result``: the pieces Inform looks for in a reply, after dropping ``参考知识：``
    (``业务名称：`` heads removed, an FAQ string cut to its answer; English separators as in :func:`split_api_result`).
    An empty ``查询结果`` has no pieces."""
    knowledge = knowledge.replace(REFERENCE_PREFIX, "")
    if knowledge == "":
        return []
    for separator, head in (*_SEPARATORS, *_SEPARATORS_EN):
        if separator in knowledge:
            first, *rest = knowledge.split(separator)
            return list(dict.fromkeys([first.replace(head, ""), *rest]))
    if "答案：" in knowledge:
        return [knowledge.split("答案：")[-1]]
    return [knowledge.replace("业务名称：", "")]
