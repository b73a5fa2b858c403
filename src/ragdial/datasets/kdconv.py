"""KdConv and the 2022 Huawei knowledge-driven spoken dialogue challenge (the same dialog format).

A dialog is ``{"name"?, "messages": [{"message", "attrs"?: [{"name", "attrname", "attrvalue"}]}]}``; the attrs of a
message are the knowledge triples it uses. Speakers alternate, the user first, so system turns have odd indices.
The knowledge base is a KdConv ``kb_<domain>.json`` (``{entity: [[entity, attr, value], ...]}``) where one exists,
and otherwise every triple seen in the data. Huawei ``test_contexts.json`` maps an id to a context (a list of
messages) whose next message is to be generated; the submission is ``result.json``:
``{id: {"message": str, "attrs": [...]}}``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Required, TypedDict

from ragdial.errors import DataFormatError, OptionError
from ragdial.io import expect, field, read_json, write_json
from ragdial.jsontypes import JSONDict, as_text
from ragdial.schema import Dataset, Dialog, Example, Knowledge, KnowledgeBase, SourceKind, Speaker, Turn

TEST_CONTEXTS = "test_contexts.json"


class Attr(TypedDict):
    """One triple a message uses (``attrvalue`` a number in some KdConv files; ``result.json`` wants a string)."""

    name: str
    attrname: str
    attrvalue: str | int | float


class Message(TypedDict, total=False):
    """One message of a dialog."""

    message: Required[str]
    attrs: list[Attr]


class DialogRecord(TypedDict, total=False):
    """One dialog of a KdConv/Huawei dialogs file."""

    name: str
    messages: Required[list[Message]]


class ResultAttr(TypedDict):
    """One triple a ``result.json`` reply cites (all strings)."""

    name: str
    attrname: str
    attrvalue: str


class ResultRecord(TypedDict, total=False):
    """One ``result.json`` record."""

    message: Required[str]
    attrs: list[ResultAttr]


def triple_id(entity: str, attribute: str, value: str) -> str:
    """A stable id for a triple, from its content."""
    digest = hashlib.sha1(f"{entity}\t{attribute}\t{value}".encode()).hexdigest()[:16]
    return f"kg:{digest}"


def triple(entity: str, attribute: str, value: str) -> Knowledge:
    fields = {"entity": entity, "attribute": attribute, "value": value}
    return Knowledge(triple_id(entity, attribute, value), f"{entity} {attribute} {value}", SourceKind.KG_TRIPLE, fields)


def attrs_of(item: Knowledge) -> dict[str, str]:
    """The official ``attrs`` entry of a triple."""
    fields = item.fields
    return {
        "name": as_text(fields["entity"]),
        "attrname": as_text(fields["attribute"]),
        "attrvalue": as_text(fields["value"]),
    }


def load_kb_file(path: str | Path) -> KnowledgeBase:
    """Read a KdConv ``kb_<domain>.json``."""
    data = expect(path, read_json(path), dict)
    kb = KnowledgeBase()
    for entity, triples in data.items():
        expect(path, triples, list, record=entity)
        for index, row in enumerate(triples):
            if not (isinstance(row, list) and len(row) == 3 and all(isinstance(x, str) for x in row)):
                raise DataFormatError(path, "expected [entity, attribute, value] strings", f"{entity}/{index}")
            kb.add(triple(*row))
    return kb


def _read_messages(path: Path, record: str, messages: object) -> list[Turn]:
    messages = expect(path, messages, list, record=record)
    turns = []
    for index, message in enumerate(messages):
        where = f"{record}, message {index}"
        text = field(path, where, message, "message", str)
        ids = []
        for attr_index, attr in enumerate(message.get("attrs") or []):
            at = f"{where}, attr {attr_index}"
            ids.append(
                triple_id(
                    field(path, at, attr, "name", str),
                    field(path, at, attr, "attrname", str),
                    str(field(path, at, attr, "attrvalue", (str, int, float))),
                )
            )
        turns.append(Turn(Speaker.USER if index % 2 == 0 else Speaker.SYSTEM, text, ids))
    return turns


def _triples_in(path: Path, raw: list[DialogRecord]) -> Iterable[Knowledge]:
    for dialog in raw:
        for message in dialog.get("messages") or []:
            for attr in message.get("attrs") or []:
                yield triple(attr["name"], attr["attrname"], str(attr["attrvalue"]))


def load(path: str | Path, kb_path: str | Path | None = None, targets: str = "system", split: str = "") -> Dataset:
    """Load a KdConv/Huawei dialogs file (or a Huawei ``test_contexts.json``).

    ``targets`` chooses the examples: ``"system"`` (odd-index messages, the challenge setting) or ``"all"``
    (every message after the first, the KdConv generation setting).
    """
    path = Path(path)
    if targets not in ("system", "all"):
        raise OptionError(f"targets must be 'system' or 'all', not {targets!r}")
    raw = read_json(path)
    if path.name == TEST_CONTEXTS or (isinstance(raw, dict) and raw and "messages" not in raw):
        return _load_contexts(path, raw, kb_path)
    raw = expect(path, raw, list)
    dialogs, examples = [], []
    for index, dialog in enumerate(raw):
        expect(path, dialog, dict, record=index)
        turns = _read_messages(path, str(index), field(path, index, dialog, "messages", list))
        if not turns:
            raise DataFormatError(path, "empty dialog: no messages", index, "messages")
        dialog_id = str(index)
        dialogs.append(Dialog(dialog_id, turns, {"name": dialog["name"]} if "name" in dialog else {}))
        for turn_index in range(1, len(turns)):
            if targets == "system" and turns[turn_index].speaker != Speaker.SYSTEM:
                continue
            target = turns[turn_index]
            examples.append(
                Example(
                    f"{dialog_id}:{turn_index}",
                    dialog_id,
                    turn_index,
                    turns[:turn_index],
                    needs_knowledge=bool(target.knowledge_ids),
                    knowledge_ids=list(dict.fromkeys(target.knowledge_ids)),
                    response=target.text,
                )
            )
    kb = load_kb_file(kb_path) if kb_path else KnowledgeBase(_triples_in(path, raw))
    if kb_path:  # a KB file may miss triples the dialogs use; they are knowledge all the same
        for item in _triples_in(path, raw):
            kb.add(item)
    return Dataset("kdconv", split or path.stem, "zh", kb, dialogs, examples, str(path))


def _load_contexts(path: Path, raw: object, kb_path: str | Path | None) -> Dataset:
    raw = expect(path, raw, dict)
    dialogs, examples = [], []
    for key, messages in raw.items():
        turns = _read_messages(path, key, messages)
        if not turns:
            raise DataFormatError(path, "empty context", key)
        dialogs.append(Dialog(key, turns))
        examples.append(Example(key, key, len(turns), turns))
    kb = load_kb_file(kb_path) if kb_path else KnowledgeBase()
    return Dataset("kdconv", "test", "zh", kb, dialogs, examples, str(path))


def result_record(kb: KnowledgeBase, example: Example) -> JSONDict:
    """One ``result.json`` entry: the generated message and, where knowledge was selected, its triples."""
    record: JSONDict = {"message": example.response or ""}
    if example.knowledge_ids:
        record["attrs"] = [attrs_of(kb.get(item_id)) for item_id in example.knowledge_ids]
    return record


def write_result(path: str | Path, kb: KnowledgeBase, examples: Iterable[Example]) -> Path:
    """Write predictions as a Huawei ``result.json`` keyed by example id."""
    return write_json(path, {e.id: result_record(kb, e) for e in examples})


def read_result(path: str | Path) -> dict[str, ResultRecord]:
    """Read and check a Huawei ``result.json``."""
    data: Mapping[str, ResultRecord] = expect(path, read_json(path), dict)  # each record checked below
    for key, record in data.items():
        field(path, key, record, "message", str)
        for index, attr in enumerate(record.get("attrs") or []):
            for name in ("name", "attrname", "attrvalue"):
                field(path, f"{key}, attr {index}", attr, name, str)
    return dict(data)
