"""What one turn produces: the streaming events (``Prepared``, ``Piece``, ``Reply``), the ``TurnRecord`` a reply
carries for the session store, and the ``Session`` a caller keeps (the pipeline never mutates it)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol, TypedDict

from ragdial.jsontypes import JSONDict
from ragdial.retrieval.base import ScoredKnowledge
from ragdial.schema import Turn
from ragdial.understanding.decision import Decision

Citation = ScoredKnowledge  # a knowledge item an answer cites, with its retrieval score


class GroundingRecord(Protocol):
    """What a branch's grounding verdict offers the record (``ragdial.pipeline.grounded.Grounding``)."""

    def to_dict(self) -> JSONDict: ...


@dataclass(frozen=True)
class TurnRecord:
    """One exchange as it is stored: the user's turn, the system's turn (with the ids it cites), the citations
    (the items themselves), the decision, the grounding check's verdict (``None`` until one runs), the session's
    state after the turn, and how it went (branch, timings in ms, generated pieces)."""

    user: Turn
    system: Turn
    citations: list[ScoredKnowledge]
    decision: Decision
    state: JSONDict
    grounding: GroundingRecord | None = None
    branch: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    tokens: int = 0

    def meta(self) -> JSONDict:
        """The per-turn metadata stored beside the system turn."""
        meta: JSONDict = {"decision": self.decision.to_dict(), "timings": self.timings, "tokens": self.tokens}
        if self.branch:
            meta["branch"] = self.branch
        if self.grounding is not None:
            meta["grounding"] = self.grounding.to_dict()
        return meta


@dataclass
class Session:
    """One conversation: which user's profile it may look up (a scope in the KB), its language and history.
    ``state`` is JSON-serialisable data a stateful branch keeps between turns (stored with the session).
    The pipeline reads a session and never changes it; the caller keeps it with :meth:`add`."""

    id: str
    user: str | None = None
    language: str = "zh"
    history: list[Turn] = field(default_factory=list)
    state: JSONDict = field(default_factory=dict)

    @classmethod
    def new(cls, user: str | None = None, language: str = "zh") -> Session:
        return cls(uuid.uuid4().hex, user, language)

    def add(self, record: TurnRecord) -> None:
        """Keep a finished turn: its two turns join the history and its state becomes the session's."""
        self.history.extend([record.user, record.system])
        self.state = dict(record.state)


class Usage(TypedDict, total=False):
    """A turn's token counts: ``prompt_tokens`` read, ``completion_tokens`` written, ``counted`` by the model's
    tokenizer (``"model"``) or as words (``"words"``); empty where nothing was counted."""

    prompt_tokens: int
    completion_tokens: int
    counted: str


@dataclass
class Prepared:
    """First streaming event: the decision and the knowledge, before any text. ``usage`` is what the turn has
    read so far (``prompt_tokens`` as words of the context and knowledge given to the generator, ``counted:
    "words"``): the count of a turn that ends before its ``Reply``."""

    decision: Decision
    knowledge: list[ScoredKnowledge]
    timings: dict[str, float]
    usage: Usage = field(default_factory=lambda: Usage())


@dataclass
class Piece:
    """A piece of the reply text (a token or a word)."""

    text: str


@dataclass
class Reply:
    """A complete answer. Timings are milliseconds per stage; ``tokens`` counts the generator's pieces;
    ``knowledge`` is what the answer cites (the retriever's selection), ``ranking`` everything it ranked;
    ``record`` is the turn to store; ``usage``: ``prompt_tokens`` and ``completion_tokens``, counted by the model's
    tokenizer (``counted: "model"``) or, for a generator without one, as words (``counted: "words"``: the
    context and knowledge it read, the pieces it wrote)."""

    text: str
    knowledge: list[ScoredKnowledge]
    decision: Decision
    timings: dict[str, float]
    tokens: int
    language: str
    ranking: list[ScoredKnowledge] = field(repr=False)
    record: TurnRecord = field(repr=False)
    usage: Usage = field(default_factory=lambda: Usage())

    def to_dict(self) -> JSONDict:
        data: JSONDict = {
            "text": self.text,
            "knowledge": [c.to_dict() for c in self.knowledge],
            "decision": self.decision.to_dict(),
            "timings": self.timings,
            "tokens": self.tokens,
            "language": self.language,
        }
        grounding = self.record.grounding
        if grounding is not None:
            data["grounding"] = grounding.to_dict()
        return data


Event = Prepared | Piece | Reply


def last_reply(events: Iterator[Event]) -> Reply:
    """The final :class:`Reply` of an event stream (consuming it)."""
    reply = None
    for event in events:
        if isinstance(event, Reply):
            reply = event
    if reply is None:
        raise RuntimeError("the event stream ended without a reply")
    return reply
