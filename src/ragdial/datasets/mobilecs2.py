"""MobileCS2 (FutureDial-RAG, SLT 2024), Chinese and English: dialogs + global KB + FAQ, and the track-1/2 files.

What the organisers release (``futuredialchallenge/2024-RAG``):

- a dialogs file (``data/<split>_final_processed.json``): ``{dial_id: {"log": [turn, ...], "local_kb": [str, ...]}}``,
  a turn being ``{"user", "system", "api_query", "api_result"}``. ``local_kb`` is the dialog's own knowledge (the
  user's subscribed services, balance, data used); unlabelled dialogs may be a bare list of turns without labels.
- the global KB ``global_kb.json``: a list of product strings (``业务名称：A，业务费用：...``);
- the FAQ ``qa.json``: the organisers' 39-entry FAQ, an object question → answer.

Under the organisers' rules (default; :mod:`ragdial.datasets.mobilecs2_rules`) the retrieval corpus is their
``ret_qa``: products ``product:<i>``, then each FAQ entry ``faq:<i>`` as ``问题：{q}, 答案：{a}``, then one
synthetic entry ``qa:<dial_id>:<turn_num>`` per ``[QA]`` turn of the dev and train dialogs,
``问题：{history}, 答案：{cleaned reply}``; user-profile items are ``<dial_id>:local:<i>`` (scope = the dialog).
A turn's gold is what their ``read_data_api`` labels: local pieces of ``查询用户已办理的业务``/``查询其他信息`` turns,
product pieces of ``查询特定业务信息`` turns found in ``ret_qa``, and for a ``[QA]`` turn the synthetic entry of its
cleaned reply; ``办理``/``取消``/``验证`` turns are not scored. The track-1 index of an item is its position in
``ret_qa`` followed by the dialog's local_kb (``retrieve_kb.evaluate_ret``: ``kb = ret_qa + local_kb``).

Track 1 file: ``[{"id": dial_id, "turn_num": "<i>", "top20_id": [index, ...]}]``; track 2 file: one record per
turn, ``{"id", "turn_num", "用户", "客服", "查询", "查询结果", "查询-生成", "客服-生成"}`` (the official result keys),
the gold fields as the organisers' result file holds them. Writers take gold from what was loaded, never from
``example.response``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Required, TypedDict, cast

from ragdial.datasets import mobilecs2_rules as rules_mod
from ragdial.errors import DataFormatError, OptionError
from ragdial.io import expect, field, read_json, write_json
from ragdial.jsontypes import JSONDict, JSONValue, as_object, as_text, as_text_or_none
from ragdial.schema import Dataset, Dialog, Example, Knowledge, KnowledgeBase, SourceKind, Speaker, Turn

GLOBAL_KB_FILES = ("global_kb.json", "global_kb_en.json")
FAQ_FILES = ("qa.json", "qa_en.json", "faq.json")
TURN_KEYS = ("user", "system", "api_query", "api_result")
TRACK1_TOP_K = 20

QA = "[QA]"
REFERENCE_PREFIX = "参考知识："


@dataclass(frozen=True)
class Markers:
    """The strings a language's files use to join knowledge pieces."""

    separators: tuple[str, ...]  # between products in an api_result, tried in order
    head: str  # what every product piece starts with
    answer: str  # an FAQ answer marker inside an api_result
    faq: str  # how an FAQ entry is written as one knowledge string

    def faq_text(self, question: str, answer: str) -> str:
        return self.faq.format(question=question, answer=answer)


MARKERS = {
    "zh": Markers(("，业务名称：", "。业务名称："), "业务名称：", "答案：", "问题：{question}, 答案：{answer}"),
    # The English release's separators are not public; these mirror the Chinese ones (documented in docs/formats.md).
    "en": Markers(
        (", Service name: ", ". Service name: "), "Service name: ", "Answer: ", "Question: {question}, Answer: {answer}"
    ),
}

# api_query labels, and which knowledge source the organisers score each against (reader.read_data_api).
LOCAL_QUERIES_ZH = ("查询用户已办理的业务", "查询其他信息", "查询流量信息")
GLOBAL_QUERY_ZH = "查询特定业务信息"
API_QUERIES = {
    "zh": ("查询用户已办理的业务", "查询特定业务信息", "查询其他信息", "办理", "取消", "验证"),
    "en": (
        "search for user's subscribed services",
        "search for products information",
        "search for other information",
        "subscribe",
        "cancel",
        "verify",
    ),
}


def split_api_result(api_result: str, language: str = "zh") -> list[str]:
    """The gold knowledge pieces of an ``api_result``, split exactly as the organisers' ``reader.split_api_result``."""
    markers = MARKERS[language]
    for separator in markers.separators:
        if separator in api_result:
            first, *rest = api_result.split(separator)
            pieces = [first, *(markers.head + piece for piece in rest)]
            return list(dict.fromkeys(pieces))
    return [api_result]


def inform_pieces(knowledge: str, language: str = "zh") -> list[str]:
    """The pieces the track-2 Inform rate looks for in a response (the organisers' ``metrics.split_api_result``).

    Unlike :func:`split_api_result` the ``业务名称：`` heads are dropped and an FAQ string keeps only its answer.
    ``knowledge`` is a ``查询结果`` value; a leading ``参考知识：`` is removed first, as ``eval_end_to_end`` does.
    """
    markers = MARKERS[language]
    knowledge = knowledge.replace(REFERENCE_PREFIX, "")
    pieces: list[str] = []
    for separator in markers.separators:
        if separator in knowledge:
            first, *rest = knowledge.split(separator)
            for piece in [first.replace(markers.head, ""), *rest]:
                if piece not in pieces:
                    pieces.append(piece)
            return pieces
    if markers.answer in knowledge:
        return [knowledge.split(markers.answer)[-1]]
    return [knowledge.replace(markers.head, "")]


def query_source(api_query: str | None) -> SourceKind | None:
    """The knowledge source the organisers score a turn's gold against, or ``None`` where they score nothing."""
    if not api_query:
        return None
    if api_query == QA:
        return SourceKind.FAQ
    if "查询用户已办理的业务" in api_query or api_query in LOCAL_QUERIES_ZH:
        return SourceKind.USER_PROFILE
    if api_query == GLOBAL_QUERY_ZH:
        return SourceKind.PRODUCT
    lowered = api_query.lower()
    if "subscribed" in lowered or lowered == "search for other information":
        return SourceKind.USER_PROFILE
    if lowered == "search for products information":
        return SourceKind.PRODUCT
    return None


_FIELD_SPLIT = re.compile(r"(?:[，,]\s*)(?=[^，,：:]{1,24}[：:])")


def text_fields(text: str) -> dict[str, str]:
    """``{"业务名称": "A", "业务费用": "58元"}`` from ``业务名称：A，业务费用：58元`` (empty without keys)."""
    result: dict[str, str] = {}
    for part in _FIELD_SPLIT.split(text.strip().rstrip("。.")):
        key, sep, value = re.split(r"([：:])", part, maxsplit=1) if re.search(r"[：:]", part) else (part, "", "")
        if sep and key.strip() and key.strip() not in result:
            result[key.strip()] = value.strip()
    return result


_BRACKETED = re.compile(r"\[[^\[\]]*\]")
_URL = re.compile(r"https?://[^\u4e00-\u9fa5\s]+")
_SPACE = re.compile(r"\s+")


def loose_text(text: str) -> str:
    """A loose form of a response for pairing a ``[QA]`` turn with its FAQ answer, close to what the organisers'
    ``reader.clean_utt`` does to the lower-cased text before they pair them: lower case, ``[...]`` tags, URLs and
    spaces dropped, repeated ``。`` collapsed."""
    text = _URL.sub("", _BRACKETED.sub("", text.lower()))
    return re.sub("。+", "。", _SPACE.sub("", text))


def _name_of(text: str, language: str) -> str | None:
    head = MARKERS[language].head
    return text[len(head) :].split("，")[0].split(", ")[0] if text.startswith(head) else None


# ---------------------------------------------------------------------------------------------- reading files


def read_global_kb(path: str | Path) -> list[str]:
    """Read ``global_kb.json``: a JSON list of product strings."""
    data = expect(path, read_json(path), list)
    for index, item in enumerate(data):
        expect(path, item, str, record=index)
    return data


def read_faq(path: str | Path) -> list[tuple[str, str]]:
    """Read ``qa.json``: an object question → answer (kept in file order)."""
    data = expect(path, read_json(path), dict)
    for question, answer in data.items():
        expect(path, answer, str, record=question)
    return list(data.items())


class LogTurn(TypedDict, total=False):
    """One turn of a dialog's ``log`` as ``read_dialogs`` checked it (other keys are kept as they are)."""

    user: Required[str]
    system: Required[str]
    api_query: str
    api_result: str


# a track-2 record as ``read_track2`` checked it: ``客服-生成`` and, where present, the other TRACK2_KEYS are strings
Track2Record = TypedDict(
    "Track2Record",
    {
        "id": str,
        "turn_num": str | int,
        "用户": str,
        "客服": str,
        "查询": str,
        "查询结果": str,
        "查询-生成": str,
        "客服-生成": Required[str],
    },
    total=False,
)


@dataclass
class RawDialog:
    """One dialog as it stands in the file."""

    id: str
    log: list[LogTurn]
    local_kb: list[str]
    bare: bool = False  # the file gives the log alone (unlabelled data)
    has_local_kb: bool = True  # False where the dialog object has no "local_kb" key
    extra: JSONDict | None = None


def read_dialogs(path: str | Path) -> list[RawDialog]:
    """Read a MobileCS2 dialogs file and check every turn."""
    data = expect(path, read_json(path), dict)
    dialogs = []
    for dial_id, value in data.items():
        if isinstance(value, list):
            raw = RawDialog(dial_id, value, [], bare=True)
        else:
            expect(path, value, dict, record=dial_id)
            log = field(path, dial_id, value, "log", list)
            local_kb = value.get("local_kb", [])
            expect(path, local_kb, list, record=f"{dial_id}, local_kb")
            for index, item in enumerate(local_kb):
                expect(path, item, str, record=f"{dial_id}, local_kb {index}")
            extra = {k: v for k, v in value.items() if k not in ("log", "local_kb")}
            raw = RawDialog(dial_id, log, local_kb, has_local_kb="local_kb" in value, extra=extra or None)
        if not raw.log:
            raise DataFormatError(path, "empty dialog: no turns", dial_id, "log")
        for turn_num, turn in enumerate(raw.log):
            record = f"{dial_id}, turn {turn_num}"
            field(path, record, turn, "user", str)
            field(path, record, turn, "system", str)
            for key in ("api_query", "api_result"):
                if key in turn and not isinstance(turn[key], str):
                    raise DataFormatError(path, f"expected str, found {type(turn[key]).__name__}", record, key)
        dialogs.append(raw)
    return dialogs


def _beside(path: Path, names: Sequence[str], what: str, option: str) -> Path:
    folders = [path.parent, path.parent.parent] if path.is_file() or not path.exists() else [path, path.parent]
    for folder in folders:
        for name in names:
            if (folder / name).is_file():
                return folder / name
    looked = ", ".join(str(f / n) for f in folders for n in names)
    raise DataFormatError(path, f"no {what} found (looked for {looked}); pass {option}=PATH")


def _dialogs_file(path: Path, split: str | None) -> Path:
    if path.is_dir():
        name = split or "test"
        for candidate in (f"{name}_final_processed.json", f"{name}.json", f"{name}_processed.json"):
            if (path / candidate).is_file():
                return path / candidate
        raise DataFormatError(path, f"no dialogs file for split {name!r} ({name}_final_processed.json or {name}.json)")
    return path


def _detect_language(dialogs: Sequence[RawDialog]) -> str:
    from ragdial.text.tokenize import detect_language

    sample = " ".join(t.get("user", "") + " " + t.get("system", "") for d in dialogs[:20] for t in d.log[:6])
    return detect_language(sample) if sample.strip() else "zh"


# ---------------------------------------------------------------------------------------------- the knowledge base


def product_id(index: int) -> str:
    return f"product:{index}"


def faq_id(index: int) -> str:
    return f"faq:{index}"


def local_id(dialog_id: str, index: int) -> str:
    return f"{dialog_id}:local:{index}"


def qa_id(dialog_id: str, turn_num: int) -> str:
    return f"qa:{dialog_id}:{turn_num}"


def build_kb(
    products: Sequence[str],
    faq: Sequence[tuple[str, str]],
    dialogs: Sequence[RawDialog],
    language: str,
    synthetic: Sequence[rules_mod.SyntheticEntry] = (),
    organisers: bool = False,
) -> KnowledgeBase:
    """Global products, FAQ entries, the organisers' synthetic ``[QA]`` entries (in ``ret_qa`` order) and each
    dialog's local items as knowledge. Under the organisers' rules FAQ strings use their Chinese framing."""
    markers = MARKERS[language]
    kb = KnowledgeBase()
    for index, text in enumerate(products):
        fields: JSONDict = {"index": index, "attributes": text_fields(text)}
        name = _name_of(text, language)
        if name:
            fields["name"] = name
        kb.add(Knowledge(product_id(index), text, SourceKind.PRODUCT, fields))
    for index, (question, answer) in enumerate(faq):
        fields = {"index": index, "question": question, "answer": answer}
        official = rules_mod.FAQ_TEXT.format(question=question, answer=answer) if organisers else None
        kb.add(Knowledge(faq_id(index), official or markers.faq_text(question, answer), SourceKind.FAQ, fields))
    for entry in synthetic:
        fields = {"question": entry.question, "answer": entry.answer, "synthetic": True, "turn_num": entry.turn_num}
        fields["dialog"] = entry.dialog_id
        item_id = qa_id(entry.dialog_id, entry.turn_num)
        while item_id in kb:  # the same dialog read twice: ret_qa keeps both entries
            item_id += "+"
        kb.add(Knowledge(item_id, entry.text, SourceKind.FAQ, fields))
    for dialog in dialogs:
        for index, text in enumerate(dialog.local_kb):
            fields = {"index": index, "attributes": text_fields(text)}
            kb.add(Knowledge(local_id(dialog.id, index), text, SourceKind.USER_PROFILE, fields, scope=dialog.id))
    return kb


class _GoldIndex:
    """Exact-text lookup of gold pieces, in the order the organisers search the sources."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.products: dict[str, str] = {}
        self.faq_texts: dict[str, str] = {}
        self.faq_answers: dict[str, str] = {}
        self.faq_answers_loose: dict[str, str] = {}
        for item in kb.global_items:
            if item.source == SourceKind.PRODUCT:
                self.products.setdefault(item.text, item.id)
            else:
                self.faq_texts.setdefault(item.text, item.id)
                answer = as_text(item.fields["answer"])
                self.faq_answers.setdefault(answer, item.id)
                self.faq_answers_loose.setdefault(loose_text(answer), item.id)
        self.kb = kb

    def local(self, dialog_id: str) -> dict[str, str]:
        index: dict[str, str] = {}
        for item in self.kb.local_items(dialog_id):
            index.setdefault(item.text, item.id)
        return index

    def match(self, piece: str, local: Mapping[str, str], source: SourceKind | None, markers: Markers) -> str | None:
        order = [self.products, local] if source == SourceKind.PRODUCT else [local, self.products]
        for table in [*order, self.faq_texts]:
            if piece in table:
                return table[piece]
        if markers.answer in piece:
            return self.answer(piece.split(markers.answer)[-1])
        return None

    def answer(self, response: str) -> str | None:
        """The FAQ entry answering with ``response``: exact text, else equal after :func:`loose_text`."""
        found = self.faq_answers.get(response)
        return found if found is not None else self.faq_answers_loose.get(loose_text(response))


RULES = ("organisers", "faq-answer")


def _qa_dialog_files(path: Path, qa_dialogs: str | Sequence[str | Path] | None) -> list[Path]:
    """The dialogs files whose ``[QA]`` turns become ``ret_qa`` entries: given, else dev then train beside ``path``
    (as ``get_new_qa``), then ``path`` itself when it is neither (our rule for a test file)."""
    if isinstance(qa_dialogs, str):  # from the command line: files joined by commas
        qa_dialogs = [part for part in qa_dialogs.split(",") if part]
    if qa_dialogs is not None:
        return [Path(p) for p in qa_dialogs]
    files = []
    for name in ("dev", "train"):
        for candidate in (f"{name}_final_processed.json", f"{name}.json"):
            if (path.parent / candidate).is_file():
                files.append(path.parent / candidate)
                break
    if not any(f.resolve() == path.resolve() for f in files):
        files.append(path)
    return files


def load(
    path: str | Path,
    split: str | None = None,
    global_kb: str | Path | None = None,
    faq: str | Path | None = None,
    language: str | None = None,
    rules: str = "organisers",
    qa_dialogs: str | Sequence[str | Path] | None = None,
) -> Dataset:
    """Load a MobileCS2 dialogs file (or a folder holding ``<split>_final_processed.json``).

    ``global_kb`` and ``faq`` default to ``global_kb.json`` and ``qa.json`` beside the dialogs file (or one folder
    up); ``language`` (``"zh"``/``"en"``) is detected from the text when not given.

    ``rules="organisers"`` (default) follows the organisers' code (:mod:`ragdial.datasets.mobilecs2_rules`): the
    knowledge base is their ``ret_qa`` (products, FAQ strings, one synthetic entry per ``[QA]`` turn of the
    ``qa_dialogs`` files: by default dev then train beside the file, then the file itself when it is another one),
    a turn's gold is what ``read_data_api`` labels, and the track-2 gold fields are cleaned as in their result file.
    ``rules="faq-answer"`` is for knowledge bases of our own whose FAQ answers are the replies (the demo KB): a
    ``[QA]`` turn's gold is the FAQ entry whose answer equals its reply, every ``api_result`` piece is gold.
    """
    if rules not in RULES:
        raise OptionError(f"rules must be one of {', '.join(RULES)}, not {rules!r}")
    path = _dialogs_file(Path(path), split)
    dialogs = read_dialogs(path)
    language = language or _detect_language(dialogs)
    if language not in MARKERS:
        raise OptionError(f"language must be one of {', '.join(MARKERS)}, not {language!r}")
    products = read_global_kb(global_kb or _beside(path, GLOBAL_KB_FILES, "global KB", "global_kb"))
    faq_entries = read_faq(faq or _beside(path, FAQ_FILES, "FAQ file", "faq"))
    out_dialogs, examples = [], []
    read: Callable[[RawDialog], tuple[list[Turn], list[Example]]]
    if rules == "organisers":
        qa_pairs: list[tuple[str, list[LogTurn]]] = []
        for file in _qa_dialog_files(path, qa_dialogs):
            source = dialogs if file.resolve() == path.resolve() else read_dialogs(file)
            qa_pairs.extend((d.id, d.log) for d in source)
        corpus = rules_mod.retrieval_corpus(products, faq_entries, qa_pairs)
        kb = build_kb(products, faq_entries, dialogs, language, corpus.synthetic, organisers=True)
        read = partial(_organisers_turns, kb=kb, context=(corpus, Track1Index(kb)), language=language)
    else:
        kb = build_kb(products, faq_entries, dialogs, language)
        read = partial(_faq_answer_turns, kb=kb, gold=_GoldIndex(kb), language=language)
    for raw in dialogs:
        turns, dialog_examples = read(raw)
        for example in dialog_examples:
            example.meta["rules"] = rules
        meta: JSONDict = {"bare_log": True} if raw.bare else {}
        if not raw.has_local_kb:
            meta["no_local_kb"] = True
        if raw.extra:
            meta["extra"] = raw.extra
        out_dialogs.append(Dialog(raw.id, turns, meta))
        examples.extend(dialog_examples)
    name = split or path.stem.replace("_final_processed", "")
    return Dataset("mobilecs2", name, language, kb, out_dialogs, examples, str(path))


def _example(raw: RawDialog, turn_num: int, turns: list[Turn], ids: list[str], meta: JSONDict) -> Example:
    record = raw.log[turn_num]
    api_query = record.get("api_query")
    extra: JSONDict = {k: cast(JSONValue, v) for k, v in record.items() if k not in TURN_KEYS}  # read from JSON
    if extra:
        meta["turn_extra"] = extra
    meta["turn_num"] = turn_num
    meta["gold_response"] = record["system"]
    return Example(
        f"{raw.id}:{turn_num}",
        raw.id,
        len(turns) - 1,
        turns[:-1],
        needs_knowledge=None if api_query is None else api_query != "",
        knowledge_ids=ids,
        response=record["system"],
        api_query=api_query,
        meta=meta,
    )


_LABEL_SOURCE = {0: SourceKind.USER_PROFILE, 1: SourceKind.PRODUCT, 2: SourceKind.USER_PROFILE, 3: SourceKind.FAQ}


def _organisers_turns(
    raw: RawDialog, kb: KnowledgeBase, context: tuple[rules_mod.RetrievalCorpus, Track1Index], language: str
) -> tuple[list[Turn], list[Example]]:
    corpus, index = context
    gold2 = rules_mod.track2_gold(raw.log) if not raw.bare else None
    turns: list[Turn] = []
    examples = []
    for turn_num, record in enumerate(raw.log):
        api_query = record.get("api_query")
        api_result = record.get("api_result")
        meta: JSONDict = {"api_result": api_result}
        ids: list[str] = []
        if api_query is not None:
            label, gold, missing = rules_mod.track1_gold(record, raw.local_kb, corpus)
            ids = list(dict.fromkeys(str(index.item_id(raw.id, i)) for i in gold))
            source = _LABEL_SOURCE.get(label)
            meta.update(api_label=label, unmatched_gold=missing, scored_source=source.value if source else None)
            meta["gold_pieces"] = rules_mod.split_api_result(api_result) if api_result else []
        if gold2 is not None:
            g = gold2[turn_num]
            meta["track2_gold"] = {"用户": g.user, "客服": g.response, "查询": g.query, "查询结果": g.knowledge}
        turns.append(Turn(Speaker.USER, record["user"]))
        turns.append(Turn(Speaker.SYSTEM, record["system"], ids, api_query, api_result))
        examples.append(_example(raw, turn_num, turns, ids, meta))
    return turns, examples


def _faq_answer_turns(
    raw: RawDialog, kb: KnowledgeBase, gold: _GoldIndex, language: str
) -> tuple[list[Turn], list[Example]]:
    markers = MARKERS[language]
    local = gold.local(raw.id)
    turns: list[Turn] = []
    examples = []
    for turn_num, record in enumerate(raw.log):
        api_query = record.get("api_query")
        api_result = record.get("api_result")
        source = query_source(api_query)
        ids: list[str] = []
        pieces: list[str] = []
        unmatched: list[str] = []
        if api_result:
            pieces = split_api_result(api_result, language)
            for piece in pieces:
                item_id = gold.match(piece, local, source, markers)
                if item_id is None:
                    unmatched.append(piece)
                elif item_id not in ids:
                    ids.append(item_id)
        elif api_query == QA:
            item_id = gold.answer(record["system"])
            if item_id is None:
                unmatched.append(record["system"])
            else:
                ids.append(item_id)
        turns.append(Turn(Speaker.USER, record["user"]))
        turns.append(Turn(Speaker.SYSTEM, record["system"], ids, api_query, api_result))
        meta: JSONDict = {"api_result": api_result, "gold_pieces": pieces, "unmatched_gold": unmatched}
        meta["scored_source"] = source.value if source else None
        examples.append(_example(raw, turn_num, turns, ids, meta))
    return turns, examples


# ---------------------------------------------------------------------------------------------- writing the data


def dialogs_record(dataset: Dataset) -> JSONDict:
    """The dialogs file content for a dataset (the inverse of :func:`load`)."""
    examples = {(e.dialog_id, e.meta.get("turn_num")): e for e in dataset.examples}
    out: JSONDict = {}
    for dialog in dataset.dialogs:
        log = []
        for turn_num in range(len(dialog.turns) // 2):
            user, system = dialog.turns[2 * turn_num], dialog.turns[2 * turn_num + 1]
            record: JSONDict = {"user": user.text, "system": system.text}
            if system.api_query is not None:
                record["api_query"] = system.api_query
            if system.api_result is not None:
                record["api_result"] = system.api_result
            example = examples.get((dialog.id, turn_num))
            if example is not None:
                record.update(as_object(example.meta.get("turn_extra")))
            log.append(record)
        if dialog.meta.get("bare_log"):
            out[dialog.id] = log
            continue
        value: JSONDict = {"log": log}
        if not dialog.meta.get("no_local_kb"):
            value["local_kb"] = [item.text for item in dataset.kb.local_items(dialog.id)]
        value.update(as_object(dialog.meta.get("extra")))
        out[dialog.id] = value
    return out


def write_dataset(folder: str | Path, dataset: Dataset, dialogs_name: str | None = None) -> Path:
    """Write a dataset back as a dialogs file, ``global_kb.json`` and ``qa.json`` in ``folder``."""
    folder = Path(folder)
    products = [k.text for k in dataset.kb.global_items if k.source == SourceKind.PRODUCT]
    faq = {
        k.fields["question"]: k.fields["answer"]
        for k in dataset.kb.global_items
        if k.source == SourceKind.FAQ and not k.fields.get("synthetic")
    }
    write_json(folder / "global_kb.json", products)
    write_json(folder / "qa.json", faq)
    return write_json(folder / (dialogs_name or f"{dataset.split}.json"), dialogs_record(dataset))


# ---------------------------------------------------------------------------------------------- track 1


def track1_candidates(kb: KnowledgeBase, dialog_id: str) -> list[Knowledge]:
    """The official index order of a dialog's candidates (``retrieve_kb.evaluate_ret``: ``kb = ret_qa + local_kb``):
    products, FAQ strings, the synthetic ``[QA]`` entries, then the dialog's local_kb."""
    return [*kb.global_items, *kb.local_items(dialog_id)]


class Track1Index:
    """Index ↔ knowledge id of every dialog's track-1 candidates, the global part computed once (``ret_qa`` has
    thousands of entries on the real data)."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.global_ids = [item.id for item in kb.global_items]
        self.global_positions = {item_id: i for i, item_id in enumerate(self.global_ids)}

    def position(self, dialog_id: str, item_id: str) -> int | None:
        """The index of ``item_id`` among the dialog's candidates (None: not a candidate)."""
        if item_id in self.global_positions:
            return self.global_positions[item_id]
        for i, item in enumerate(self.kb.local_items(dialog_id)):
            if item.id == item_id:
                return len(self.global_ids) + i
        return None

    def item_id(self, dialog_id: str, position: int) -> str | None:
        """The knowledge id at ``position`` of the dialog's candidates (None: out of range)."""
        if 0 <= position < len(self.global_ids):
            return self.global_ids[position]
        local = self.kb.local_items(dialog_id)
        offset = position - len(self.global_ids)
        return local[offset].id if 0 <= offset < len(local) else None

    def size(self, dialog_id: str) -> int:
        return len(self.global_ids) + len(self.kb.local_items(dialog_id))


def _turn_num(example: Example) -> int:
    turn_num = example.meta.get("turn_num")
    return int(as_text(turn_num)) if turn_num is not None else (example.turn_index - 1) // 2


def write_track1(
    path: str | Path,
    kb: KnowledgeBase,
    examples: Iterable[Example],
    rankings: Mapping[str, Sequence[str]] | None = None,
) -> Path:
    """Write the track-1 submission: the top-20 ranking of each example (``rankings[example.id]``, else its
    ``knowledge_ids``) as indexes into products + FAQ + the dialog's local_kb."""
    index = Track1Index(kb)
    records = []
    for example in examples:
        ranked = rankings[example.id] if rankings is not None else example.knowledge_ids
        top = []
        for item_id in list(ranked)[:TRACK1_TOP_K]:
            position = index.position(example.dialog_id, item_id)
            if position is None:
                message = f"knowledge {item_id!r} is not a candidate of this dialog"
                raise DataFormatError(path, message, example.id, "top20_id")
            top.append(position)
        records.append({"id": example.dialog_id, "turn_num": str(_turn_num(example)), "top20_id": top})
    return write_json(path, records)


def _turn_number(path: str | Path, index: int, record: object) -> int:
    value = field(path, index, record, "turn_num", (str, int))
    if isinstance(value, str) and not value.isdigit():
        raise DataFormatError(path, f"expected a turn number, found {value!r}", index, "turn_num")
    return int(value)


def read_track1(path: str | Path, dataset: Dataset | None = None) -> dict[str, list[str]]:
    """Read a track-1 file into ``{example id: [knowledge id, ...]}``; with ``dataset``, every dialog, turn and index
    must exist (without it, ids are ``"<index>"`` strings)."""
    data = expect(path, read_json(path), list)
    examples = {e.id for e in dataset.examples} if dataset is not None else None
    positions = Track1Index(dataset.kb) if dataset is not None else None
    result: dict[str, list[str]] = {}
    for index, record in enumerate(data):
        dial_id = field(path, index, record, "id", str)
        turn_num = _turn_number(path, index, record)
        top = field(path, index, record, "top20_id", list)
        if len(top) > TRACK1_TOP_K:
            raise DataFormatError(path, f"{len(top)} indexes, at most {TRACK1_TOP_K} allowed", index, "top20_id")
        example_id = f"{dial_id}:{turn_num}"
        if examples is not None and example_id not in examples:
            raise DataFormatError(path, f"no turn {turn_num} in dialog {dial_id!r}", index, "turn_num")
        if example_id in result:
            raise DataFormatError(path, f"turn {turn_num} of dialog {dial_id!r} appears twice", index, "turn_num")
        ids = []
        for position in top:
            if not isinstance(position, int) or isinstance(position, bool):
                raise DataFormatError(path, f"expected integer indexes, found {position!r}", index, "top20_id")
            if positions is None:
                ids.append(str(position))
                continue
            item_id = positions.item_id(dial_id, position)
            if item_id is None:
                size = positions.size(dial_id)
                raise DataFormatError(
                    path, f"unknown knowledge index {position} (dialog has {size})", index, "top20_id"
                )
            ids.append(item_id)
        result[example_id] = ids
    return result


# ---------------------------------------------------------------------------------------------- track 2

TRACK2_KEYS = ("用户", "客服", "查询", "查询结果", "查询-生成", "客服-生成")


def gold_fields(kb: KnowledgeBase, example: Example) -> dict[str, str]:
    """The gold ``用户``/``客服``/``查询``/``查询结果`` of a turn, from what was loaded (never ``example.response``).

    Organisers' rules: as their result file holds them (``convert_to_sequences`` + ``decode_batch``: lower case,
    ``clean_utt``, ``参考知识：`` + the lower-cased ``api_result``, or for a ``[QA]`` turn its own
    ``问题：{history}, 答案：{reply}``, spaces removed). ``faq-answer`` rules: the raw texts, ``查询结果`` being the
    ``api_result`` or the gold FAQ string."""
    if "track2_gold" in example.meta:
        return {key: as_text(value) for key, value in as_object(example.meta["track2_gold"]).items()}
    api_result = example.meta.get("api_result")
    knowledge = str(api_result) if api_result else ""
    if not knowledge:
        faq = [kb.get(i).text for i in example.knowledge_ids if i in kb and kb.get(i).source == SourceKind.FAQ]
        knowledge = faq[0] if faq else ""
    response = as_text_or_none(example.meta.get("gold_response", example.response))
    return {
        "用户": example.last_user_text,
        "客服": response or "",
        "查询": example.api_query or "",
        "查询结果": knowledge,
    }


def rules_of(dataset: Dataset) -> str:
    """The rules a MobileCS2 dataset was loaded with (``organisers`` or ``faq-answer``)."""
    return str(dataset.examples[0].meta.get("rules", "organisers")) if dataset.examples else "organisers"


def gold_knowledge_text(kb: KnowledgeBase, example: Example) -> str:
    """The gold ``查询结果`` of a turn (see :func:`gold_fields`)."""
    return gold_fields(kb, example)["查询结果"]


def gold_response(kb: KnowledgeBase, example: Example) -> str:
    """The gold ``客服`` of a turn (see :func:`gold_fields`)."""
    return gold_fields(kb, example)["客服"]


def track2_record(kb: KnowledgeBase, example: Example, generated: str, generated_query: str | None = None) -> JSONDict:
    """One track-2 turn: the official result keys, gold (as loaded) beside generated."""
    return {
        "id": example.dialog_id,
        "turn_num": str(_turn_num(example)),
        **gold_fields(kb, example),
        "查询-生成": generated_query if generated_query is not None else "",
        "客服-生成": generated,
    }


def write_track2(
    path: str | Path,
    kb: KnowledgeBase,
    examples: Iterable[Example],
    generated: Mapping[str, str],
    generated_queries: Mapping[str, str] | None = None,
) -> Path:
    """Write the track-2 file: for every example its generated response (``generated[example.id]``)."""
    records = []
    for example in examples:
        if example.id not in generated:
            raise DataFormatError(path, "no generated response for this turn", example.id, "客服-生成")
        query = generated_queries.get(example.id) if generated_queries is not None else None
        records.append(track2_record(kb, example, generated[example.id], query))
    return write_json(path, records)


def _check_track2_values(path: str | Path, record_name: str | int, record: object) -> Track2Record:
    """``record`` as a ``Track2Record`` (a copy) once its values are checked."""
    field(path, record_name, record, "客服-生成", str)
    checked = expect(path, record, dict, record_name)
    for key in TRACK2_KEYS:
        if key in checked and not isinstance(checked[key], str):
            raise DataFormatError(path, f"expected str, found {type(checked[key]).__name__}", record_name, key)
    return cast(Track2Record, dict(checked))


def read_track2(path: str | Path, dataset: Dataset | None = None) -> dict[str, Track2Record]:
    """Read a track-2 file into ``{example id: record}``; each record needs ``id``, ``turn_num`` and ``客服-生成``.

    The organisers' own ``result.json`` (a list of dialogs, each a list of turns without ids) is read too; its
    turns are keyed ``"<dialog index>:<turn index>"`` and cannot be checked against a dataset.
    """
    data = expect(path, read_json(path), list)
    if data and all(isinstance(dialog, list) for dialog in data):
        return _read_result_dialogs(path, data)
    examples = {e.id for e in dataset.examples} if dataset is not None else None
    result: dict[str, Track2Record] = {}
    for index, record in enumerate(data):
        dial_id = field(path, index, record, "id", str)
        turn_num = _turn_number(path, index, record)
        checked = _check_track2_values(path, index, record)
        example_id = f"{dial_id}:{turn_num}"
        if examples is not None and example_id not in examples:
            raise DataFormatError(path, f"no turn {turn_num} in dialog {dial_id!r}", index, "turn_num")
        if example_id in result:
            raise DataFormatError(path, f"turn {turn_num} of dialog {dial_id!r} appears twice", index, "turn_num")
        result[example_id] = checked
    return result


def _read_result_dialogs(path: str | Path, data: list[list[object]]) -> dict[str, Track2Record]:
    result: dict[str, Track2Record] = {}
    for dialog_index, dialog in enumerate(data):
        for turn_index, record in enumerate(dialog):
            result[f"{dialog_index}:{turn_index}"] = _check_track2_values(
                path, f"{dialog_index}, turn {turn_index}", record
            )
    return result


# ---------------------------------------------------------------------------------------------- the demo KB

DEMO_PACKAGE = "ragdial.resources.demo_kb"


def demo_paths(language: str = "zh") -> tuple[Path, Path, Path]:
    """The bundled demo files: (dialogs, global KB, FAQ) for ``language``."""
    if language not in MARKERS:
        raise OptionError(f"language must be 'zh' or 'en', not {language!r}")
    root = Path(str(resources.files(DEMO_PACKAGE).joinpath(language)))
    return root / "dialogs.json", root / "global_kb.json", root / "qa.json"


def load_demo(language: str = "zh") -> Dataset:
    """The bundled demo knowledge base of a fictional carrier (Greenleaf Mobile / 青禾移动), with its demo dialogs
    (``faq-answer`` rules: its FAQ is of our own writing and the demo replies are its answers)."""
    dialogs, products, faq = demo_paths(language)
    return load(dialogs, split="demo", global_kb=products, faq=faq, language=language, rules="faq-answer")
