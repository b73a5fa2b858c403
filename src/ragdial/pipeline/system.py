"""``DialogSystem``: understand → retrieve → generate, with cited knowledge and timings per stage.

One object answers a benchmark in batch (``answer``), a CLI chat and the HTTP service (``respond``/``stream`` on a
``Session``). Components come from the config through the registries (``ragdial.pipeline.components``).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragdial.generation.base import GenerationRequest, Generator
from ragdial.pipeline.config import SystemConfig
from ragdial.pipeline.decision import Decision, Detector
from ragdial.pipeline.knowledge import KnowledgeSource, UserProfile
from ragdial.retrieval.base import Retriever
from ragdial.schema import Knowledge, Speaker, Turn


@dataclass
class Session:
    """One conversation: which user's profile it may look up (a scope in the KB), its language and history.
    ``state`` is JSON-serialisable data a stateful component keeps between turns (stored with the session)."""

    id: str
    user: str | None = None
    language: str = "zh"
    history: list[Turn] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def new(cls, user: str | None = None, language: str = "zh") -> Session:
        return cls(uuid.uuid4().hex, user, language)


@dataclass(frozen=True)
class Citation:
    """A knowledge item an answer used: id, source kind, text and its retrieval score."""

    id: str
    source: str
    text: str
    score: float
    scope: str = ""

    @classmethod
    def of(cls, item: Knowledge, score: float) -> Citation:
        return cls(item.id, item.source.value, item.text, float(score), item.scope)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "source": self.source, "text": self.text, "score": self.score, "scope": self.scope}


@dataclass
class Prepared:
    """First streaming event: the decision and the knowledge, before any text."""

    decision: Decision
    knowledge: list[Citation]
    timings: dict[str, float]


@dataclass
class Piece:
    """A piece of the reply text (a token or a word)."""

    text: str


@dataclass
class Reply:
    """A complete answer. Timings are milliseconds per stage; ``tokens`` counts the generator's pieces;
    ``knowledge`` is what the answer cites (the top ``top_k`` of ``ranking``)."""

    text: str
    knowledge: list[Citation]
    decision: Decision
    timings: dict[str, float]
    tokens: int
    language: str
    ranking: list[Citation] = field(default_factory=list, repr=False)  # all retrieved (top ``retrieve_k``)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "knowledge": [c.to_dict() for c in self.knowledge],
            "decision": self.decision.to_dict(),
            "timings": self.timings,
            "tokens": self.tokens,
            "language": self.language,
        }


Event = Prepared | Piece | Reply

_LOCKS: dict[int, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _lock_for(component: object) -> threading.Lock:
    """One lock per component object: components built once are shared by threads (llama.cpp is not reentrant)."""
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(id(component), threading.Lock())


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)


class DialogSystem:
    """The dialog system for one language over one knowledge source."""

    def __init__(
        self,
        config: SystemConfig,
        language: str,
        knowledge: KnowledgeSource,
        detector: Detector,
        retriever: Retriever,
        generator: Generator,
        task: Any = None,
    ) -> None:
        """``task``: an optional ``ragdial.task.TaskBranch``; travel requests go there instead of retrieval."""
        self.config = config
        self.task = task
        self.language = language
        self.knowledge = knowledge
        self.detector = detector
        self.retriever = retriever
        self.generator = generator

    @classmethod
    def from_config(cls, config: SystemConfig | None = None, language: str | None = None) -> DialogSystem:
        """Build the system for ``language`` (default: the config's first) from registered components."""
        from ragdial.pipeline.components import build_system

        config = config or SystemConfig()
        return build_system(config, language or config.languages[0])

    def warm_up(self) -> None:
        """Load what components load lazily (models, query encoders) now, not on the first user's turn."""
        for component in (self.detector, self.retriever, self.generator):
            warm = getattr(component, "warm_up", None)
            if callable(warm):
                warm()
        user = self.users[0].id if self.users else None
        context = [Turn(Speaker.USER, "你好" if self.language == "zh" else "hello")]
        self.decide(context)
        self.rank(context, user)

    @property
    def users(self) -> list[UserProfile]:
        return self.knowledge.users

    def new_session(self, user: str | None = None) -> Session:
        return Session.new(user, self.language)

    def decide(self, context: Sequence[Turn]) -> Decision:
        return self.detector.decide(context, self.language)

    def retrieve(
        self, context: Sequence[Turn], user: str | None, decision: Decision | None = None, k: int | None = None
    ) -> list[Citation]:
        """The cited knowledge for the next system turn (``k`` items, default ``top_k``), within the decision's
        look-ups."""
        return self.rank(context, user, decision)[: k or self.config.top_k]

    def rank(self, context: Sequence[Turn], user: str | None, decision: Decision | None = None) -> list[Citation]:
        """Up to ``retrieve_k`` items within the decision's look-ups, best first (``min_score`` applied)."""
        decision = decision or self.decide(context)
        if not decision.needs_knowledge:
            return []
        local = len(self.knowledge.dataset.kb.local_items(user)) if user else 0
        with _lock_for(self.retriever):
            hits = self.retriever.retrieve(context, dialog_id=user, k=self.config.retrieve_k + local)
        ranked = []
        for hit in hits:
            if not decision.allows(hit.item, user):
                continue
            if self.config.min_score is not None and hit.score < self.config.min_score:
                continue
            ranked.append(Citation.of(hit.item, hit.score))
            if len(ranked) == self.config.retrieve_k:
                break
        return ranked

    def cite(self, ranking: list[Citation]) -> list[Citation]:
        """The items to cite and generate from: a trained reranker's cut (several items where its threshold keeps
        them) or the first ``top_k``."""
        reranker = getattr(self.retriever, "reranker", None)
        if reranker is None or not ranking:
            return ranking[: self.config.top_k]
        return reranker.cut(ranking, self.config.top_k)

    def context_for(self, history: Sequence[Turn], user_text: str) -> list[Turn]:
        """The last ``history_turns`` turns of ``history`` followed by the user's new turn."""
        recent = list(history[-self.config.history_turns :]) if self.config.history_turns else []
        return [*recent, Turn(Speaker.USER, user_text)]

    def stream_context(
        self,
        context: Sequence[Turn],
        user: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Iterator[Event]:
        """Answer the turn after ``context``: yields ``Prepared``, then ``Piece``s, then the ``Reply``."""
        start = time.perf_counter()
        timings: dict[str, float] = {}
        stage = time.perf_counter()
        decision = self.decide(context)
        timings["understand_ms"] = _ms(stage)
        stage = time.perf_counter()
        ranking = self.rank(context, user, decision)
        knowledge = self.cite(ranking)
        timings["retrieve_ms"] = _ms(stage)
        yield Prepared(decision, knowledge, dict(timings))
        request = GenerationRequest(
            context=list(context),
            knowledge=[self.knowledge.dataset.kb.get(c.id) for c in knowledge],
            language=self.language,
            max_tokens=max_tokens or self.config.max_tokens,
            temperature=self.config.temperature if temperature is None else temperature,
            seed=self.config.seed,
        )
        stage = time.perf_counter()
        pieces: list[str] = []
        with _lock_for(self.generator):
            for piece in self.generator.stream(request):
                if not piece:
                    continue
                if not pieces:
                    timings["first_token_ms"] = _ms(stage)
                pieces.append(piece)
                yield Piece(piece)
        timings["generate_ms"] = _ms(stage)
        timings.setdefault("first_token_ms", timings["generate_ms"])
        timings["total_ms"] = _ms(start)
        yield Reply("".join(pieces).strip(), knowledge, decision, timings, len(pieces), self.language, ranking)

    def answer(self, context: Sequence[Turn], user: str | None = None) -> Reply:
        """The reply to the turn after ``context`` (batch use: no session)."""
        return last_reply(self.stream_context(context, user))

    def stream(self, session: Session, user_text: str, **options: Any) -> Iterator[Event]:
        """Stream the answer to ``user_text`` in ``session``; the session's history grows once the reply is done."""
        if self.task is not None and _task_routed(self.task, session.state.get("task"), user_text):
            yield from _task_events(self.task, session, user_text, self.language)
            return
        context = self.context_for(session.history, user_text)
        for event in self.stream_context(context, session.user, **options):
            if isinstance(event, Reply):
                session.history.append(context[-1])
                session.history.append(Turn(Speaker.SYSTEM, event.text, knowledge_ids=[c.id for c in event.knowledge]))
            yield event

    def respond(self, session: Session, user_text: str, **options: Any) -> Reply:
        """Answer ``user_text`` in ``session`` and add both turns to its history."""
        return last_reply(self.stream(session, user_text, **options))


def _task_routed(task: Any, state: dict[str, Any] | None, text: str) -> bool:
    """A turn goes to the task branch while a booking is under way, or when it asks for travel."""
    under_way = bool(state) and any(state.get(k) for k in ("pending", "offers", "asked", "suggest"))
    return under_way or task.understands(text)


def _task_events(task: Any, session: Session, user_text: str, language: str) -> Iterator[Event]:
    """One task-branch turn as pipeline events; its state is kept in the session (``session.state['task']``)."""
    start = time.perf_counter()
    turn = task.respond(session.state.get("task"), user_text)
    if turn.done:
        session.state.pop("task", None)
    else:
        session.state["task"] = turn.state
    label = f"task:{turn.state.get('domain') or 'none'}"
    decision = Decision(False, (), label=label, detector="task")
    timings = {"task_ms": _ms(start)}
    yield Prepared(decision, [], dict(timings))
    yield Piece(turn.reply)
    session.history.append(Turn(Speaker.USER, user_text))
    session.history.append(Turn(Speaker.SYSTEM, turn.reply))
    timings["total_ms"] = _ms(start)
    yield Reply(turn.reply, [], decision, timings, 1, language)


def last_reply(events: Iterator[Event]) -> Reply:
    """The final :class:`Reply` of an event stream (consuming it)."""
    reply = None
    for event in events:
        if isinstance(event, Reply):
            reply = event
    assert reply is not None
    return reply
