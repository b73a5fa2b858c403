"""The branches a turn can take: a ``Branch`` claims a turn (from the session's state and the user's turn) and
answers it as a stream of events ending in a ``Reply`` that carries the ``TurnRecord``.

- ``KnowledgeBranch``: understand (a detector's decision) → retrieve (ranking and selection, in the decision's scope
  and filter) → generate from the selected items. It claims every turn, so it comes last.
- ``TaskDialogBranch``: the travel booking dialog (``ragdial.task``); it claims a turn while a booking is under way
  or when the turn asks for travel. Its state lives under ``ragdial.task.STATE_KEY`` in the session's state.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator as PieceStream
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from ragdial.generation.base import Exemplar, GenerationRequest, Generator
from ragdial.generation.exemplars import Exemplars
from ragdial.jsontypes import JSONObject, JSONValue
from ragdial.metrics.grounding import knowledge_names
from ragdial.pipeline.grounded import (
    DEFAULT_MIN_RELEVANCE,
    HARD_ROUTES,
    Grounding,
    Relevance,
    Verified,
    dense_of,
    evidence_for,
    policy_of,
    rank_for_turn,
    stream_verified,
    user_turns,
)
from ragdial.pipeline.turn import Event, Piece, Prepared, Reply, TurnRecord, Usage
from ragdial.retrieval.base import Retrieval, Retriever, ScoredKnowledge
from ragdial.schema import Knowledge, Speaker, Turn
from ragdial.text.tokenize import words
from ragdial.understanding.decision import Decision, Detector
from ragdial.understanding.policy import (
    NOT_IN_KNOWLEDGE,
    OTHER_LANGUAGE,
    ROUTE_LABELS,
    SMALL_TALK,
    Rewrite,
    classify_turn,
    rewrite_turn,
    route_decision,
)

if TYPE_CHECKING:
    from ragdial.task.manager import TaskBranch


@dataclass(frozen=True)
class TurnInput:
    """What a branch answers: the context (recent history, then the user's turn), the session's user (whose
    profile is their local knowledge scope), the session's state (read only) and generation options."""

    context: list[Turn]
    user: str | None = None
    state: JSONObject = field(default_factory=dict)
    max_tokens: int | None = None
    temperature: float | None = None
    cancel: threading.Event | None = None  # set by the caller to stop the generation after the token in flight
    dialog_id: str | None = None  # a batch example's dialog: its own turns are never its exemplars

    @property
    def turn(self) -> Turn:
        return self.context[-1]


class Branch(Protocol):
    """One way of answering a turn."""

    name: str

    def claims(self, state: JSONObject, turn: Turn) -> bool:
        """Whether this branch answers ``turn`` in a session whose state is ``state``."""
        ...

    def respond(self, request: TurnInput) -> Iterator[Event]:
        """``Prepared``, then ``Piece``s, then the ``Reply`` (with its ``TurnRecord``)."""
        ...


def ms(start: float) -> float:
    """Milliseconds since ``start`` (a ``time.perf_counter()``)."""
    return round((time.perf_counter() - start) * 1000.0, 3)


@dataclass(frozen=True)
class Settings:
    """The knowledge branch's numbers (from the system config)."""

    retrieve_k: int = 20
    top_k: int = 3
    min_score: float | None = None
    max_tokens: int = 256
    temperature: float = 0.0
    seed: int = 0
    grounded: bool = True
    min_relevance: float = DEFAULT_MIN_RELEVANCE


class KnowledgeBranch:
    """Understand → retrieve → generate, citing the retriever's selection. With ``settings.grounded`` (the
    default) the turn gets an answer policy, a rewrite, routing and a relevance cut before generation and a
    verified reply after it (``ragdial.pipeline.grounded``); ``items`` is the knowledge base (names, idf, ids)."""

    name = "knowledge"

    def __init__(
        self,
        detector: Detector,
        retriever: Retriever,
        generator: Generator,
        language: str,
        settings: Settings,
        items: Sequence[Knowledge] = (),
        exemplars: Exemplars | None = None,
    ) -> None:
        self.detector = detector
        self.exemplars = exemplars
        self.retriever = retriever
        self.generator = generator
        self.language = language
        self.settings = settings
        self.items = {item.id: item for item in items}
        self.names = knowledge_names(self.items.values())
        self.relevance = Relevance(self.items.values(), dense_of(retriever))

    def claims(self, state: JSONObject, turn: Turn) -> bool:
        return True

    def shots(self, request: TurnInput) -> list[Exemplar]:
        """The in-context exemplars of the turn (none without an exemplar source)."""
        if self.exemplars is None:
            return []
        return self.exemplars.for_context(request.context, request.dialog_id)

    def decide(self, context: Sequence[Turn]) -> Decision:
        return self.detector.decide(context, self.language)

    def retrieve(
        self, context: Sequence[Turn], user: str | None, decision: Decision, select: int | None = None
    ) -> Retrieval:
        """Ranking and selection within the decision's look-ups for a session of ``user``."""
        if not decision.needs_knowledge:
            return Retrieval()
        return self.retriever.retrieve(
            context,
            decision.scope(user),
            self.settings.retrieve_k,
            decision.knowledge_filter(self.settings.min_score),
            self.settings.top_k if select is None else select,
        )

    def respond(self, request: TurnInput) -> Iterator[Event]:
        if self.settings.grounded:
            yield from self._respond_grounded(request)
            return
        start = time.perf_counter()
        timings: dict[str, float] = {}
        decision = self.decide(request.context)
        timings["understand_ms"] = ms(start)
        stage = time.perf_counter()
        found = self.retrieve(request.context, request.user, decision)
        timings["retrieve_ms"] = ms(stage)
        settings = self.settings
        generation = GenerationRequest(
            context=list(request.context),
            knowledge=found.items,
            language=self.language,
            max_tokens=request.max_tokens or settings.max_tokens,
            temperature=settings.temperature if request.temperature is None else request.temperature,
            seed=settings.seed,
            exemplars=self.shots(request),
            cancel=request.cancel,
        )
        yield Prepared(decision, found.selected, dict(timings), token_usage(generation, 0))
        stage = time.perf_counter()
        pieces: list[str] = []
        with closing(_stream(self.generator, generation)) as stream:
            for piece in stream:
                if not piece:
                    continue
                if not pieces:
                    timings["first_token_ms"] = ms(stage)
                pieces.append(piece)
                yield Piece(piece)
        timings["generate_ms"] = ms(stage)
        timings.setdefault("first_token_ms", timings["generate_ms"])
        timings["total_ms"] = ms(start)
        text = "".join(pieces).strip()
        system = Turn(Speaker.SYSTEM, text, knowledge_ids=[c.id for c in found.selected])
        record = TurnRecord(
            request.turn, system, found.selected, decision, dict(request.state), None, self.name, timings, len(pieces)
        )
        usage = token_usage(generation, len(pieces))
        yield Reply(text, found.selected, decision, timings, len(pieces), self.language, found.ranked, record, usage)

    def _respond_grounded(self, request: TurnInput) -> Iterator[Event]:
        start = time.perf_counter()
        timings: dict[str, float] = {}
        context = list(request.context)
        intent = classify_turn(request.turn.text, user_turns(context[:-1]))
        rewrite = None
        ranked: list[ScoredKnowledge] = []
        selected: list[ScoredKnowledge] = []
        cut: list[str] = []
        if intent.policy in (SMALL_TALK, OTHER_LANGUAGE):
            decision = Decision(False, (), label=intent.policy, detector="policy")
            timings["understand_ms"] = ms(start)
            timings["retrieve_ms"] = 0.0
        else:
            # a trained reranker decides the ranking and its cut from the dialog itself: no rewrite, routing or cut
            trained = getattr(self.retriever, "reranker", None) is not None
            text = request.turn.text
            rewrite = Rewrite(text, text) if trained else rewrite_turn(context, intent, self.items.get, self.names)
            query_context = [*context[:-1], Turn(Speaker.USER, rewrite.text)]
            decision = self.decide(query_context)
            if intent.route and decision.detector == "always":
                decision = replace(decision, label=ROUTE_LABELS[intent.route])
            timings["understand_ms"] = ms(start)
            stage = time.perf_counter()
            found = self.retrieve(query_context, request.user, decision)
            ranked = found.ranked
            hard = intent.route in HARD_ROUTES and not trained
            routed = route_decision(decision, intent.route) if hard else decision
            if routed is not decision:  # the route's source searched on its own too, its items first
                within = self.retrieve(query_context, request.user, routed).ranked
                seen = {c.id for c in within}
                ranked = [*within, *(c for c in ranked if c.id not in seen)]
            settings = self.settings
            if trained:
                selected, cut = list(found.selected), []
            else:
                selected, cut = rank_for_turn(
                    ranked, rewrite.text, intent, self.relevance, settings.top_k, settings.min_relevance
                )
            timings["retrieve_ms"] = ms(stage)
        policy = policy_of(intent, selected, rewrite.text if rewrite else "", request.user)
        if policy == NOT_IN_KNOWLEDGE:
            selected = []
        settings = self.settings
        generation = GenerationRequest(
            context=context,
            knowledge=[c.item for c in selected],
            language=self.language,
            max_tokens=request.max_tokens or settings.max_tokens,
            temperature=settings.temperature if request.temperature is None else request.temperature,
            seed=settings.seed,
            exemplars=self.shots(request),
            policy=policy,
            cancel=request.cancel,
        )
        yield Prepared(decision, selected, dict(timings), token_usage(generation, 0))
        stage = time.perf_counter()
        evidence = evidence_for(generation.knowledge, context, self.names)
        verified = Verified()
        with closing(stream_verified(self.generator, generation, evidence, verified)) as sentences:
            for sentence in sentences:
                timings.setdefault("first_token_ms", ms(stage))
                yield Piece(sentence)
        text, count = verified.text, verified.pieces
        timings["generate_ms"] = ms(stage)
        timings.setdefault("first_token_ms", timings["generate_ms"])
        timings["total_ms"] = ms(start)
        grounding = Grounding(policy, intent, rewrite, verified.check, verified.attempts, verified.fallback, tuple(cut))
        system = Turn(Speaker.SYSTEM, text, knowledge_ids=[c.id for c in selected])
        record = TurnRecord(
            request.turn, system, selected, decision, dict(request.state), grounding, self.name, timings, count
        )
        usage = token_usage(generation, count)
        yield Reply(text, selected, decision, timings, count, self.language, ranked, record, usage)


def token_usage(request: GenerationRequest, completion: int) -> Usage:
    """Prompt and completion tokens of a generation: the model's own counts where the generator reports them,
    else words (``ragdial.text.tokenize.words``) of the context and knowledge read, and ``completion`` pieces."""
    if "prompt_tokens" in request.usage:
        generated = request.usage.get("completion_tokens", completion)
        return {"prompt_tokens": request.usage["prompt_tokens"], "completion_tokens": generated, "counted": "model"}
    read = [t.text for t in request.context] + [k.text for k in request.knowledge]
    return words_usage(read, request.language, completion)


def words_usage(read: Sequence[str], language: str, completion: int) -> Usage:
    """Usage counted as words (``ragdial.text.tokenize.words``) of the texts read, and ``completion`` pieces."""
    prompt = sum(len(words(text, language)) for text in read)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "counted": "words"}


def _stream(generator: Generator, request: GenerationRequest) -> PieceStream[str, None, None]:
    """The generator's stream as a closable generator (a user's generator may return a plain iterator)."""
    yield from generator.stream(request)


class TaskDialogBranch:
    """The travel booking dialog as a branch; its state is ``state[ragdial.task.STATE_KEY]``."""

    name = "task"

    def __init__(self, task: TaskBranch, language: str) -> None:
        self.task = task
        self.language = language

    def claims(self, state: JSONObject, turn: Turn) -> bool:

        return self.task.claims(_task_state(state), turn.text)

    def respond(self, request: TurnInput) -> Iterator[Event]:
        from ragdial.task.manager import STATE_KEY

        start = time.perf_counter()
        turn = self.task.respond(_task_state(request.state), request.turn.text)
        state = {k: v for k, v in request.state.items() if k != STATE_KEY}
        if not turn.done or turn.state.get("bookings"):  # the session's bookings outlive a finished dialog
            state[STATE_KEY] = turn.state
        label = f"task:{turn.state.get('domain') or 'none'}"
        decision = Decision(False, (), label=label, detector="task")
        timings = {"task_ms": ms(start)}
        usage = words_usage([t.text for t in request.context], self.language, 0)
        yield Prepared(decision, [], dict(timings), usage)
        yield Piece(turn.reply)
        timings["total_ms"] = ms(start)
        system = Turn(Speaker.SYSTEM, turn.reply)
        record = TurnRecord(request.turn, system, [], decision, state, None, self.name, timings, 1)
        yield Reply(turn.reply, [], decision, timings, 1, self.language, [], record, {**usage, "completion_tokens": 1})


def _task_state(state: JSONObject) -> dict[str, JSONValue] | None:
    """The task dialog's part of a session's state (``None`` when no task dialog ran in it)."""
    from ragdial.task.manager import STATE_KEY

    value = state.get(STATE_KEY)
    return dict(value) if isinstance(value, Mapping) else None
