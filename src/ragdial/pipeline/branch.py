"""The branches a turn can take: a ``Branch`` claims a turn (from the session's state and the user's turn) and
answers it as a stream of events ending in a ``Reply`` that carries the ``TurnRecord``.

- ``KnowledgeBranch``: understand (a detector's decision) → retrieve (ranking and selection, in the decision's scope
  and filter) → generate from the selected items. It claims every turn, so it comes last.
- ``TaskDialogBranch``: the travel booking dialog (``ragdial.task``); it claims a turn while a booking is under way
  or when the turn asks for travel. Its state lives under ``ragdial.task.STATE_KEY`` in the session's state.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Generator as PieceStream
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ragdial.generation.base import Exemplar, GenerationRequest, Generator
from ragdial.generation.exemplars import Exemplars
from ragdial.generation.extractive import asked_keys, item_fields, named_keys
from ragdial.jsontypes import JSONObject, JSONValue
from ragdial.metrics.grounding import knowledge_names
from ragdial.pipeline.answer_features import (
    SOCIAL_ACTS,
    Candidates,
    TurnView,
    candidate_features,
    catalogue_of,
    field_texts,
    item_name,
    item_types,
    ranked_numbers,
    turn_numbers,
    turn_terms,
)
from ragdial.pipeline.answer_model import ANSWER_ENCODER, AnswerModel, default_answer_model, policy_numbers
from ragdial.pipeline.answer_order import asks_how, asks_standalone, possession_first, reorder, sibling_asked
from ragdial.pipeline.grounded import (
    DEFAULT_MIN_RELEVANCE,
    Analysis,
    Embeddings,
    Grounding,
    Relevance,
    Verified,
    compares_with_own,
    evidence_for,
    policy_guidance,
    select_cited,
    stream_verified,
)
from ragdial.pipeline.turn import Event, Piece, Prepared, Reply, TurnRecord, Usage
from ragdial.retrieval.base import Retrieval, Retriever, ScoredKnowledge
from ragdial.schema import Knowledge, Speaker, Turn
from ragdial.text.tokenize import words
from ragdial.understanding.decision import LOOKUPS, Decision, Detector
from ragdial.understanding.policy import (
    ACTION,
    ANSWER,
    NOT_IN_KNOWLEDGE,
    OTHER_LANGUAGE,
    PROFILE,
    ROUTE_LABELS,
    SMALL_TALK,
    Rewrite,
    TurnIntent,
    classify_turn,
    other_language,
    rewrite_turn,
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
    speak_weight: float | None = None  # the plain path's speak rule (``speak``); None = the detector decides


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
        answer_model: AnswerModel | None = None,
    ) -> None:
        self.detector = detector
        self.exemplars = exemplars
        self.retriever = retriever
        self.generator = generator
        self.language = language
        self.settings = settings
        self.items = {item.id: item for item in items}
        self.profiles: dict[str, list[Knowledge]] = {}
        for item in self.items.values():
            if not item.is_global:
                self.profiles.setdefault(item.scope, []).append(item)
        self.names = knowledge_names(self.items.values())
        self.account_fields = account_fields(self.items.values())
        self.types = item_types(list(self.items.values()))
        self.catalogue = catalogue_of(list(self.items.values()))
        self.embeddings = Embeddings(ANSWER_ENCODER, retriever)
        self.relevance = Relevance(self.items.values(), self.embeddings.cosines, self.embeddings.text)
        self._answer_model = answer_model

    @property
    def answer_model(self) -> AnswerModel:
        """The answer model of the grounded path (the packaged one unless given), loaded at first use."""
        if self._answer_model is None:
            self._answer_model = default_answer_model()
        return self._answer_model

    def claims(self, state: JSONObject, turn: Turn) -> bool:
        return True

    def load_vectors(self) -> int:
        """The sentence vectors of what the answer model compares each turn with (every item's field names and
        fields), encoded now or read from the disk cache, not at the first turns; how many texts (none off the
        grounded path, which alone compares them)."""
        if not self.settings.grounded:
            return 0
        texts = [text for item in self.items.values() for part in field_texts(item) for text in part]
        return self.embeddings.preload(texts)

    def warm_up(self) -> None:
        """Prime the generator with the start of an answer turn's request (its instruction and guidance), so a
        local LLM has evaluated that head before the first user's turn."""
        greeting = "你好" if self.language == "zh" else "hello"
        request = GenerationRequest(
            context=[Turn(Speaker.USER, greeting)],
            language=self.language,
            temperature=self.settings.temperature,
            seed=self.settings.seed,
            policy=ANSWER,
            instruction=policy_guidance(self.language, ANSWER) if self.settings.grounded else "",
        )
        self.generator.prime(request)

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
        weight = self.settings.speak_weight
        decision = self.decide(request.context)
        if weight is not None:
            decision = open_to_speak(decision, weight)
        timings["understand_ms"] = ms(start)
        stage = time.perf_counter()
        found = self.retrieve(request.context, request.user, decision)
        if weight is not None:
            decision, found = speak(decision, found, weight)
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

    def analyse(self, context: Sequence[Turn], user: str | None, score: bool = True) -> Analysis:
        """The grounded path's view of the last turn of ``context``: the rewrite, the candidates (the retrieval of
        the rewritten query and of the turn alone, the user's profile, the items cited in the last two replies)
        with their features, and the answer model's route, ranking and policy (``ragdial.pipeline.answer_model``).
        A turn in a third language gets ``other_language`` without retrieval. ``score=False`` stops before the
        model (the candidates and features only, for training it)."""
        text = context[-1].text
        view = TurnView.of(context, user, self.language)
        if other_language(text):
            decision = Decision(False, (), label=OTHER_LANGUAGE, detector="policy")
            return Analysis(view, TurnIntent(OTHER_LANGUAGE), None, decision, Candidates((), np.zeros((0, 0))), [])
        cues = classify_turn(text, view.previous)
        # a trained reranker decides the ranking and its cut from the dialog itself: no rewrite
        trained = getattr(self.retriever, "reranker", None) is not None
        rewrite = Rewrite(text, text) if trained else rewrite_turn(context, cues, self.items.get, self.names)
        query_context = [*context[:-1], Turn(Speaker.USER, rewrite.text)]
        decision = self.decide(query_context)
        by_query = self.retrieve(query_context, user, decision)
        by_turn = self.retrieve(context, user, decision).ranked if rewrite.changed else by_query.ranked
        if trained:
            empty = Candidates((), np.zeros((0, 0)))
            selected = list(by_query.selected)
            return Analysis(view, cues, rewrite, decision, empty, list(by_query.ranked), reranked=selected)
        ranks = {c.id: (-1, i) for i, c in enumerate(by_query.ranked)}
        for i, c in enumerate(by_turn):
            ranks[c.id] = (i, ranks.get(c.id, (-1, -1))[1])
        pool: dict[str, Knowledge] = {c.id: c.item for c in [*by_query.ranked, *by_turn]}
        profile = self.profiles.get(user, []) if user is not None and decision.needs_knowledge else []
        for item in profile:
            pool.setdefault(item.id, item)
        for ids in view.cited[-2:]:
            for cited in ids:
                if cited in self.items and (self.items[cited].is_global or self.items[cited].scope == user):
                    pool.setdefault(cited, self.items[cited])
        asked_on = bool(view.last_cited) and (view.short or asks_standalone(text))  # what the turn goes on about
        last = self.items.get(view.last_cited[0]) if asked_on else None
        sibling = sibling_asked(text, last, self.catalogue) if last is not None else None
        if sibling is not None:  # "有大点的吗": the sibling asked for, even where retrieval did not find it
            pool.setdefault(sibling.id, sibling)
        mine = tuple(p.id for p in (self.catalogue.get(item_name(i).lower()) for i in profile) if p is not None)
        # "单独办的话多少钱", "跟我现在这个比": the catalogue products of the user's services are candidates
        if asks_standalone(text) or (cues.comparison and compares_with_own(text)):
            for product_id in mine:
                pool.setdefault(product_id, self.items[product_id])
        items = list(pool.values())
        cited_names = [item_name(self.items[i]) for i in view.last_cited if i in self.items]
        candidates = candidate_features(
            view,
            rewrite.text,
            items,
            ranks,
            self.relevance.lexical,
            self.relevance.dense,
            profile,
            self.types,
            cited_names,
            self.relevance.embed,
            self.catalogue,
            self.relevance.terms,
            self.relevance.unknown(text),
        )
        vector = self.relevance.embed(text) if self.relevance.embed is not None else None
        if not score:
            return Analysis(view, cues, rewrite, decision, candidates, [], vector=vector)
        model = self.answer_model
        terms = turn_terms(view)
        numbers = turn_numbers(view, candidates)
        route = model.route_probs(terms, numbers, vector)
        scores = model.rank_probs(candidates, route)
        numbers = policy_numbers(numbers, route, ranked_numbers(candidates, scores))
        policies = model.policy_probs(terms, numbers, vector)
        order = sorted(range(len(items)), key=lambda j: -scores[j])
        order = reorder(order, candidates, view, self.catalogue, rewrite.text)
        if cues.possession:  # "do I have X?": the user's record of X first, else X (no X spoken of: no yes or no)
            order, found = possession_first(order, candidates) if profile else (order, False)
            cues = replace(cues, possession=found)
        ranked = [ScoredKnowledge(items[j], float(scores[j])) for j in order]
        best_route = max(route, key=route.__getitem__)
        policy = max(policies, key=policies.__getitem__)
        policy = settle_small_talk(policy, numbers)
        if cues.services and profile:  # "which services do I have": the user's services answer it
            best_route = PROFILE
        guest_asks = user is None and asks_account_figure(text, self.account_fields)
        if policy == ANSWER and (not ranked or ((best_route == PROFILE or guest_asks) and user is None)):
            policy = NOT_IN_KNOWLEDGE  # nothing to answer from, or a guest's account question: no account data
        if (
            policy == NOT_IN_KNOWLEDGE
            and ranked
            and decision.needs_knowledge
            and decision.detector not in ("always", "")
        ):
            policy = ANSWER  # a trained detector decided the turn needs this knowledge (the model knows the demo KB)
        intent = replace(cues, policy=policy, route=best_route)
        return Analysis(
            view,
            intent,
            rewrite,
            decision,
            candidates,
            ranked,
            route,
            policies,
            vector=vector,
            sibling=sibling.id if sibling else "",
            mine=mine,
        )

    def _respond_grounded(self, request: TurnInput) -> Iterator[Event]:
        start = time.perf_counter()
        timings: dict[str, float] = {}
        context = list(request.context)
        analysis = self.analyse(context, request.user)
        intent, rewrite, decision = analysis.intent, analysis.rewrite, analysis.decision
        if intent.route and decision.detector == "always":
            decision = replace(decision, label=ROUTE_LABELS[intent.route])
        ranked = analysis.ranked
        settings = self.settings
        selected, cut = select_cited(
            analysis, self.relevance, settings.top_k, settings.min_relevance, self.answer_model.cite_min
        )
        timings["understand_ms"] = ms(start)
        timings["retrieve_ms"] = 0.0
        policy = intent.policy
        if policy == ANSWER and not selected:  # nothing relevant enough to answer from
            policy = NOT_IN_KNOWLEDGE
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
        grounding = Grounding(
            policy,
            intent,
            rewrite,
            verified.check,
            verified.attempts,
            verified.fallback,
            tuple(cut),
            analysis.policies,
        )
        system = Turn(Speaker.SYSTEM, text, knowledge_ids=[c.id for c in selected])
        record = TurnRecord(
            request.turn, system, selected, decision, dict(request.state), grounding, self.name, timings, count
        )
        usage = token_usage(generation, count)
        yield Reply(text, selected, decision, timings, count, self.language, ranked, record, usage)


def account_fields(items: Iterable[Knowledge]) -> frozenset[str]:
    """The field names only the users' own items have ("账户余额", "Data left"), read from the knowledge base."""
    mine = {k for item in items if not item.is_global for k in item_fields(item)}
    shared = {k for item in items if item.is_global for k in item_fields(item)}
    return frozenset(mine - shared)


_FIRST_PERSON = re.compile(r"我|\b(?:my|i|me|mine|i'?ve|i'?m)\b", re.I)


def asks_account_figure(text: str, fields: frozenset[str]) -> bool:
    """Whether ``text`` asks for one of the speaker's own account figures: it speaks in the first person, names a
    field only the users' own items have (``account_fields``; by the cue table or the field's own words) and does
    not ask how or where to look it up ("what's my balance", "我余额还剩多少"; not "how do I check my balance")."""
    if not fields or not _FIRST_PERSON.search(text) or asks_how(text):
        return False
    table = dict.fromkeys(fields, "")
    return bool(asked_keys(text, table) or named_keys(text, table))


def settle_small_talk(policy: str, acts: Mapping[str, float]) -> str:
    """The policy after two guards on a small-talk verdict (``acts``: the turn's dialog acts, ``dialog_acts``): a
    question with no greeting, thanks, goodbye or acknowledgement in it is not small talk but not in the knowledge;
    a turn with an account-changing verb beside its "ok" or "thanks" asks for an action ("ok, switch me to it")."""
    if policy != SMALL_TALK:
        return policy
    if acts.get("act_change"):
        return ACTION
    social = any(acts.get(act) for act in SOCIAL_ACTS)
    return NOT_IN_KNOWLEDGE if acts.get("act_question") and not social else policy


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


def open_to_speak(decision: Decision, weight: float) -> Decision:
    """Before retrieval under the speak rule: a turn whose detector probability p could still pass it
    (p * (1 + weight) >= 1, the reranker's probability being at most 1) is looked up."""
    p = decision.confidence
    if decision.needs_knowledge or p is None or p * (1 + weight) < 1:
        return decision
    return replace(decision, needs_knowledge=True, lookups=LOOKUPS)


def speak(decision: Decision, found: Retrieval, weight: float) -> tuple[Decision, Retrieval]:
    """The speak rule: state the selected facts only when p * (1 + weight * q) >= 1, p the detector's probability
    that the turn uses knowledge and q the reranker's probability of the best item. With weight 1 this is speaking
    when the expected triple P + R + F1 of the best item (about 3 p q for one gold triple) beats that of staying
    silent (3 (1 - p): a turn without gold triples scores 1 each when nothing is cited, the Huawei challenge's rule);
    a larger weight also counts what a stated fact adds to the reply's overlap. Needs reranker probabilities as
    scores (the triple and transfer rerankers); a decision without a probability is kept."""
    p = decision.confidence
    if p is None or not decision.needs_knowledge:
        return decision, found
    q = found.selected[0].score if found.selected else 0.0
    if p * (1 + weight * q) >= 1:
        return decision, found
    return replace(decision, needs_knowledge=False, lookups=()), Retrieval(ranked=found.ranked)
