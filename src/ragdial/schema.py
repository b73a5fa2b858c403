"""The one schema shared by every part of ragdial.

Nothing else defines a dialog, a turn or a knowledge item. Loaders read each challenge format into these
classes; writers turn predictions on them back into official submission files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict, JSONObject, JSONValue, as_array, as_object, as_text, as_text_or_none, as_texts


class SourceKind(StrEnum):
    """Where a knowledge item comes from."""

    USER_PROFILE = "user_profile"
    PRODUCT = "product"
    FAQ = "faq"
    KG_TRIPLE = "kg_triple"
    SNIPPET = "snippet"
    REVIEW = "review"


class Speaker(StrEnum):
    USER = "user"
    SYSTEM = "system"


GLOBAL_SCOPE = ""
# the attribute that names a structured item (a plan, product or service) in the formats read: MobileCS2's 业务名称 and
# its English release's "Service name" (``datasets.mobilecs2``): the format's words, not any knowledge base's
NAME_KEYS = ("业务名称", "Service name")


def name_attribute(attributes: Mapping[str, JSONValue]) -> str:
    """The name among a structured item's attributes (``NAME_KEYS``; "" when it has none)."""
    return next((str(attributes[k]) for k in NAME_KEYS if attributes.get(k)), "")


# the attribute that types a structured item (main plan, data pack, roaming ...) in the same formats: MobileCS2's
# 业务类型 and "Type"
TYPE_KEYS = ("业务类型", "Type")


def type_attribute(attributes: Mapping[str, JSONValue]) -> str:
    """The type among a structured item's attributes (``TYPE_KEYS``; "" when it has none)."""
    return next((str(attributes[k]) for k in TYPE_KEYS if attributes.get(k)), "")


@dataclass(frozen=True)
class Knowledge:
    """One knowledge item.

    ``id`` is stable across runs (built from the item's official address or content). ``fields`` holds the
    structured parts a format has (``entity``, ``attribute``, ``value``, ``domain``, ``title``, ``entity_id``,
    ``doc_id`` ...). ``scope`` is ``""`` for global knowledge or the id of the one dialog it belongs to.
    """

    id: str
    text: str
    source: SourceKind
    fields: Mapping[str, JSONValue] = field(default_factory=dict)
    scope: str = GLOBAL_SCOPE

    @property
    def is_global(self) -> bool:
        return self.scope == GLOBAL_SCOPE

    def to_dict(self) -> JSONDict:
        return {
            "id": self.id,
            "text": self.text,
            "source": self.source.value,
            "fields": dict(self.fields),
            "scope": self.scope,
        }

    @classmethod
    def from_dict(cls, data: JSONObject) -> Knowledge:
        return cls(
            id=str(data["id"]),
            text=str(data["text"]),
            source=SourceKind(as_text(data["source"])),
            fields=dict(as_object(data.get("fields"))),
            scope=str(data.get("scope") or GLOBAL_SCOPE),
        )


class UnknownKnowledgeError(KeyError, RagdialError):
    """A knowledge id that is not in the knowledge base (a ``KeyError``, and a user error the CLI reports)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown knowledge id"


class KnowledgeBase:
    """Global items plus each dialog's own (local) items, addressable by id."""

    def __init__(self, items: Iterable[Knowledge] = ()) -> None:
        self._by_id: dict[str, Knowledge] = {}
        self._global: list[Knowledge] = []
        self._local: dict[str, list[Knowledge]] = {}
        for item in items:
            self.add(item)

    def add(self, item: Knowledge) -> None:
        """Add an item; an id seen before must carry the same item."""
        known = self._by_id.get(item.id)
        if known is not None:
            if known != item:
                raise ValueError(f"knowledge id {item.id!r} is used for two different items")
            return
        self._by_id[item.id] = item
        if item.is_global:
            self._global.append(item)
        else:
            self._local.setdefault(item.scope, []).append(item)

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._by_id

    def __iter__(self) -> Iterator[Knowledge]:
        return iter(self._by_id.values())

    def get(self, item_id: str) -> Knowledge:
        try:
            return self._by_id[item_id]
        except KeyError:
            raise UnknownKnowledgeError(f"unknown knowledge id {item_id!r}") from None

    @property
    def global_items(self) -> list[Knowledge]:
        return list(self._global)

    def local_items(self, dialog_id: str) -> list[Knowledge]:
        return list(self._local.get(dialog_id, ()))

    def candidates(self, dialog_id: str | None = None) -> list[Knowledge]:
        """The candidate set for a dialog: its local items followed by every global item."""
        local = self._local.get(dialog_id, []) if dialog_id is not None else []
        return [*local, *self._global]

    def by_source(self, source: SourceKind) -> list[Knowledge]:
        return [k for k in self._by_id.values() if k.source == source]


@dataclass
class Turn:
    """One utterance. ``knowledge_ids`` are the items this turn uses (gold, where the format says)."""

    speaker: Speaker
    text: str
    knowledge_ids: list[str] = field(default_factory=list)
    api_query: str | None = None
    api_result: str | None = None

    def to_dict(self) -> JSONDict:
        data = asdict(self)
        data["speaker"] = self.speaker.value
        return data

    @classmethod
    def from_dict(cls, data: JSONObject) -> Turn:
        return cls(
            speaker=Speaker(as_text(data["speaker"])),
            text=str(data["text"]),
            knowledge_ids=as_texts(data.get("knowledge_ids")),
            api_query=as_text_or_none(data.get("api_query")),
            api_result=as_text_or_none(data.get("api_result")),
        )


@dataclass
class Dialog:
    id: str
    turns: list[Turn]
    meta: JSONDict = field(default_factory=dict)


@dataclass
class Example:
    """One prediction target: the context before a system turn and what should happen at it.

    ``needs_knowledge``, ``response`` and the labels are ``None`` where the split is unlabelled.
    """

    id: str
    dialog_id: str
    turn_index: int
    context: list[Turn]
    needs_knowledge: bool | None = None
    knowledge_ids: list[str] = field(default_factory=list)
    response: str | None = None
    api_query: str | None = None
    intent: str | None = None
    meta: JSONDict = field(default_factory=dict)

    @property
    def last_user_text(self) -> str:
        for turn in reversed(self.context):
            if turn.speaker == Speaker.USER:
                return turn.text
        return ""

    def to_dict(self) -> JSONDict:
        return {
            "id": self.id,
            "dialog_id": self.dialog_id,
            "turn_index": self.turn_index,
            "context": [t.to_dict() for t in self.context],
            "needs_knowledge": self.needs_knowledge,
            "knowledge_ids": list(self.knowledge_ids),
            "response": self.response,
            "api_query": self.api_query,
            "intent": self.intent,
            "meta": self.meta,
        }

    @classmethod
    def from_dict(cls, data: JSONObject) -> Example:
        return cls(
            id=str(data["id"]),
            dialog_id=str(data["dialog_id"]),
            turn_index=int(as_text(data["turn_index"])),
            context=[Turn.from_dict(as_object(t)) for t in as_array(data.get("context"))],
            needs_knowledge=None if data.get("needs_knowledge") is None else bool(data.get("needs_knowledge")),
            knowledge_ids=as_texts(data.get("knowledge_ids")),
            response=as_text_or_none(data.get("response")),
            api_query=as_text_or_none(data.get("api_query")),
            intent=as_text_or_none(data.get("intent")),
            meta=dict(as_object(data.get("meta"))),
        )


@dataclass
class Dataset:
    """What a loader returns: one split of one format, read into the schema."""

    format: str
    split: str
    language: str
    kb: KnowledgeBase
    dialogs: list[Dialog]
    examples: list[Example]
    source_path: str = ""

    def stats(self) -> dict[str, int]:
        return {
            "dialogs": len(self.dialogs),
            "examples": len(self.examples),
            "knowledge_seeking": sum(1 for e in self.examples if e.needs_knowledge),
            "knowledge_items": len(self.kb),
            "turns": sum(len(d.turns) for d in self.dialogs),
            "turn_knowledge_links": sum(len(t.knowledge_ids) for d in self.dialogs for t in d.turns),
        }

    def iter_jsonl(self) -> Iterator[str]:
        """The unified schema as JSON lines: knowledge items first, then examples."""
        for item in self.kb:
            yield json.dumps({"type": "knowledge", **item.to_dict()}, ensure_ascii=False)
        for example in self.examples:
            yield json.dumps({"type": "example", **example.to_dict()}, ensure_ascii=False)
