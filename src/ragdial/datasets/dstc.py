"""DSTC9 track 1 and DSTC11 track 5: ``logs.json`` + ``labels.json`` + ``knowledge.json``.

Layout (the official ``--dataroot`` layout): ``ROOT/knowledge.json`` and ``ROOT/<split>/logs.json`` (+
``labels.json`` where labelled). DSTC9 knowledge is per-entity FAQ snippets (``docs`` with ``title``/``body``);
DSTC11 knowledge has per-entity ``faqs`` (``question``/``answer``) and ``reviews`` addressed down to the sentence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Required, TypedDict, cast

from ragdial.errors import DataFormatError
from ragdial.io import expect, field, read_json, write_json
from ragdial.jsontypes import JSONDict, JSONObject, JSONValue, as_object
from ragdial.schema import Dataset, Dialog, Example, Knowledge, KnowledgeBase, SourceKind, Speaker, Turn

SPEAKERS = {"U": Speaker.USER, "S": Speaker.SYSTEM}
LABEL_KEYS = ("target", "knowledge", "response")


class KnowledgeRef(TypedDict, total=False):
    """A knowledge reference of a ``labels.json`` entry (``doc_type``: DSTC11; ``sent_id``: DSTC11 reviews)."""

    domain: Required[str]
    entity_id: Required[int | str]
    doc_type: str
    doc_id: Required[int]
    sent_id: int


class LabelRecord(TypedDict, total=False):
    """A checked ``labels.json`` entry (gold or predicted): ``knowledge`` and ``response`` for targets; a file may
    carry further keys, which are kept as they are."""

    target: Required[bool]
    knowledge: list[KnowledgeRef]
    response: str


def knowledge_id(ref: Mapping[str, object]) -> str:
    """The stable id of an official knowledge reference (a ``labels.json`` knowledge entry)."""
    head = f"{ref['domain']}:{ref['entity_id']}"
    doc_type = ref.get("doc_type")
    if doc_type is None:
        return f"{head}:{ref['doc_id']}"
    if doc_type == "review":
        return f"{head}:review:{ref['doc_id']}:{ref['sent_id']}"
    return f"{head}:{doc_type}:{ref['doc_id']}"


def knowledge_ref(item: Knowledge) -> JSONDict:
    """The official reference of a knowledge item, keys in the organisers' order."""
    ref: JSONDict = {"domain": item.fields["domain"], "entity_id": item.fields["entity_id"]}
    if "doc_type" in item.fields:
        ref["doc_type"] = item.fields["doc_type"]
    ref["doc_id"] = item.fields["doc_id"]
    if "sent_id" in item.fields:
        ref["sent_id"] = item.fields["sent_id"]
    return ref


def _entity_id(raw: str) -> int | str:
    return int(raw) if raw.lstrip("-").isdigit() else raw


def _number(path: str | Path, record: str, key: str) -> int:
    if not key.lstrip("-").isdigit():
        raise DataFormatError(path, f"expected a numeric id, found {key!r}", record)
    return int(key)


def load_knowledge(path: str | Path) -> KnowledgeBase:
    """Read a DSTC9 or DSTC11 ``knowledge.json`` into global knowledge items."""
    data = expect(path, read_json(path), dict)
    kb = KnowledgeBase()
    for domain, entities in data.items():
        expect(path, entities, dict, record=domain)
        for raw_entity, entity in entities.items():
            record = f"{domain}/{raw_entity}"
            expect(path, entity, dict, record=record)
            entity_id = _entity_id(raw_entity)
            name = entity.get("name")
            base = {"domain": domain, "entity_id": entity_id, "entity": name}
            if "docs" in entity:  # DSTC9
                for doc_id, doc in field(path, record, entity, "docs", dict).items():
                    title = field(path, f"{record}/docs/{doc_id}", doc, "title", str)
                    body = field(path, f"{record}/docs/{doc_id}", doc, "body", str)
                    fields = {
                        **base,
                        "doc_id": _number(path, f"{record}/docs/{doc_id}", doc_id),
                        "title": title,
                        "body": body,
                    }
                    item_id = knowledge_id(fields)
                    kb.add(Knowledge(item_id, f"{title} {body}", SourceKind.SNIPPET, fields))
                continue
            for doc_id, faq in (entity.get("faqs") or {}).items():
                question = field(path, f"{record}/faqs/{doc_id}", faq, "question", str)
                answer = field(path, f"{record}/faqs/{doc_id}", faq, "answer", str)
                number = _number(path, f"{record}/faqs/{doc_id}", doc_id)
                fields = {**base, "doc_type": "faq", "doc_id": number, "title": question, "body": answer}
                kb.add(Knowledge(knowledge_id(fields), f"{question} {answer}", SourceKind.FAQ, fields))
            for doc_id, review in (entity.get("reviews") or {}).items():
                sentences = field(path, f"{record}/reviews/{doc_id}", review, "sentences", dict)
                for sent_id, sentence in sentences.items():
                    expect(path, sentence, str, record=f"{record}/reviews/{doc_id}/sentences/{sent_id}")
                    fields = {
                        **base,
                        "doc_type": "review",
                        "doc_id": _number(path, f"{record}/reviews/{doc_id}", doc_id),
                        "sent_id": _number(path, f"{record}/reviews/{doc_id}/sentences/{sent_id}", sent_id),
                        "traveler_type": review.get("traveler_type"),
                    }
                    kb.add(Knowledge(knowledge_id(fields), sentence, SourceKind.REVIEW, fields))
    return kb


def read_logs(path: str | Path) -> list[list[Turn]]:
    """Read ``logs.json``: a list of instances, each a list of ``{"speaker": "U"|"S", "text"}``."""
    logs = expect(path, read_json(path), list)
    instances = []
    for index, instance in enumerate(logs):
        expect(path, instance, list, record=index)
        turns = []
        for turn_index, turn in enumerate(instance):
            record = f"{index}, turn {turn_index}"
            speaker = field(path, record, turn, "speaker", str)
            if speaker not in SPEAKERS:
                raise DataFormatError(path, f"speaker must be 'U' or 'S', found {speaker!r}", record, "speaker")
            turns.append(Turn(SPEAKERS[speaker], field(path, record, turn, "text", str)))
        if not turns:
            raise DataFormatError(path, "empty dialog context", index)
        instances.append(turns)
    return instances


def read_labels(path: str | Path, kb: KnowledgeBase | None = None) -> list[LabelRecord]:
    """Read and check ``labels.json`` (gold or predicted): every knowledge reference must exist in ``kb``."""
    labels = expect(path, read_json(path), list)
    for index, label in enumerate(labels):
        target = field(path, index, label, "target", bool)
        if not target:
            continue
        knowledge = field(path, index, label, "knowledge", list)
        for ref_index, ref in enumerate(knowledge):
            record = f"{index}, knowledge {ref_index}"
            expect(path, ref, dict, record=record)
            for key in ("domain", "entity_id", "doc_id"):
                if key not in ref:
                    raise DataFormatError(path, "required field is missing", record, key)
            if kb is not None and knowledge_id(ref) not in kb:
                raise DataFormatError(path, f"unknown knowledge {knowledge_id(ref)!r}", record, "knowledge")
        if "response" in label:
            field(path, index, label, "response", str)
    return cast(list[LabelRecord], labels)  # checked above


def version_of(kb: KnowledgeBase) -> str:
    """``dstc11`` for knowledge with typed documents (FAQs, review sentences), else ``dstc9`` (snippets)."""
    typed = any(k.source == SourceKind.REVIEW for k in kb) or any("doc_type" in k.fields for k in kb)
    return "dstc11" if typed else "dstc9"


def load(root: str | Path, split: str = "val", knowledge: str | Path | None = None) -> Dataset:
    """Load one split of a DSTC9/DSTC11 data root; ``knowledge`` overrides ``ROOT/knowledge.json``."""
    root = Path(root)
    kb = load_knowledge(knowledge or root / "knowledge.json")
    version = version_of(kb)
    logs_path = root / split / "logs.json"
    labels_path = root / split / "labels.json"
    if not logs_path.exists():
        splits = sorted(p.parent.name for p in root.glob("*/logs.json"))
        if splits:  # the data has logs, just not for this split: a typo, not a knowledge-only folder
            raise DataFormatError(logs_path, f"no such split {split!r}; splits here: {', '.join(splits)}")
    instances = read_logs(logs_path) if logs_path.exists() else []
    labels = read_labels(labels_path, kb) if labels_path.exists() and instances else None
    if labels is not None and len(labels) != len(instances):
        raise DataFormatError(
            labels_path, f"{len(labels)} labels for {len(instances)} log instances in {logs_path}", field="length"
        )
    dialogs, examples = [], []
    for index, turns in enumerate(instances):
        dialog_id = str(index)
        dialogs.append(Dialog(dialog_id, turns))
        example = Example(dialog_id, dialog_id, len(turns), turns)
        if labels is not None:
            label = labels[index]
            example.needs_knowledge = bool(label["target"])
            example.knowledge_ids = [knowledge_id(ref) for ref in label.get("knowledge") or []]
            example.response = label.get("response")
            raw: JSONObject = cast(JSONObject, label)  # the record as read, with the keys the type does not name
            extra = {k: v for k, v in raw.items() if k not in LABEL_KEYS}
            if extra:
                example.meta["label_extra"] = extra
        examples.append(example)
    return Dataset(version, split, "en", kb, dialogs, examples, str(root))


def label_record(
    kb: KnowledgeBase,
    target: bool,
    knowledge_ids: Sequence[str] = (),
    response: str | None = None,
    extra: Mapping[str, JSONValue] | None = None,
) -> JSONDict:
    """One ``labels.json`` entry in the official format (ranked knowledge, most likely first)."""
    record: JSONDict = {"target": target}
    if target:
        record["knowledge"] = [knowledge_ref(kb.get(item_id)) for item_id in knowledge_ids]
        if response is not None:
            record["response"] = response
    if extra:
        record.update(extra)
    return record


def write_labels(path: str | Path, kb: KnowledgeBase, examples: Iterable[Example]) -> Path:
    """Write predictions (or gold) on ``examples`` as an official ``labels.json``."""
    records = [
        label_record(
            kb, bool(e.needs_knowledge), e.knowledge_ids, e.response, as_object(e.meta.get("label_extra")) or None
        )
        for e in examples
    ]
    return write_json(path, records)
