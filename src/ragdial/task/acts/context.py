"""The act and context records: one dialog act with its slots, and what the system just did."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ragdial.jsontypes import JSONDict, JSONObject, as_array, as_object, as_text_or_none


@dataclass
class Act:
    """One dialog act with its normalised slots (``{"price": "?"}`` for a requested attribute)."""

    act: str
    slots: JSONDict = field(default_factory=dict)
    corrects: bool = field(default=False, compare=False)  # said as a correction: its values win over earlier ones
    # the clause (as the reader read it: normalised) the act comes from; acts joined over clauses get them joined
    # with "，", so the manager can read a part of a compound turn without cutting the raw text again
    clause: str = field(default="", compare=False)

    def to_dict(self) -> JSONDict:
        return {"act": self.act, "slots": dict(self.slots)}


@dataclass
class Context:
    """What the system just did (the bank's ``context``): task under way, open question, offers, known slots."""

    domain: str | None = None
    open_question: str | None = None
    offers: list[Mapping[str, object]] = field(default_factory=list)
    state: JSONDict = field(default_factory=dict)
    bookings: list[Mapping[str, object]] = field(default_factory=list)
    suggestion: Mapping[str, object] | None = None

    @classmethod
    def from_dict(cls, data: JSONObject | None) -> Context:
        data = data or {}
        suggestion = data.get("suggestion")
        return cls(
            as_text_or_none(data.get("domain")),
            as_text_or_none(data.get("open_question")),
            [offer for offer in as_array(data.get("offers")) if isinstance(offer, dict)],
            dict(as_object(data.get("state"))),
            [booking for booking in as_array(data.get("bookings")) if isinstance(booking, dict)],
            suggestion if isinstance(suggestion, dict) else None,
        )


@dataclass
class _Clause:
    text: str
    question: bool
    act: str | None = None
    slots: JSONDict = field(default_factory=dict)
    extra: list[Act] = field(default_factory=list)
