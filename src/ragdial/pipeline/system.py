"""``DialogSystem``: the branches a turn can take (the task dialog, then knowledge: understand → retrieve →
generate), with cited knowledge, timings per stage, and a ``TurnRecord`` per reply.

One object answers a benchmark in batch (``answer``), a CLI chat and the HTTP service (``respond``/``stream`` on a
``Session``). Components come from the config through the registries (``ragdial.pipeline.components``). A turn's
data flows one way: session (read) → context → branch → events → ``Reply.record``; the caller stores the record.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from ragdial.components import close, warm_up
from ragdial.generation.base import Generator
from ragdial.generation.exemplars import Exemplars
from ragdial.jsontypes import JSONObject
from ragdial.pipeline.branch import Branch, KnowledgeBranch, Settings, TaskDialogBranch, TurnInput
from ragdial.pipeline.config import SystemConfig
from ragdial.pipeline.knowledge import KnowledgeSource, UserProfile
from ragdial.pipeline.turn import Citation, Event, Piece, Prepared, Reply, Session, TurnRecord, last_reply
from ragdial.retrieval.base import Retrieval, Retriever
from ragdial.schema import Speaker, Turn
from ragdial.understanding.decision import Decision, Detector

if TYPE_CHECKING:
    from ragdial.task.manager import TaskBranch

__all__ = [
    "Citation",
    "DialogSystem",
    "Event",
    "Piece",
    "Prepared",
    "Reply",
    "Session",
    "TurnRecord",
    "last_reply",
]


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
        task: TaskBranch | None = None,
        exemplars: Exemplars | None = None,
    ) -> None:
        """``task``: an optional ``ragdial.task.TaskBranch``; travel requests go there instead of retrieval.
        ``exemplars``: in-context examples the knowledge branch attaches to every generation request."""
        self.config = config
        self.language = language
        self.knowledge = knowledge
        self.task = task
        settings = Settings(
            config.retrieve_k,
            config.top_k,
            config.min_score,
            config.max_tokens,
            config.temperature,
            config.seed,
            config.grounded,
            config.min_relevance,
            config.speak_weight,
        )
        items = list(knowledge.dataset.kb)
        self.knowledge_branch = KnowledgeBranch(detector, retriever, generator, language, settings, items, exemplars)
        self.branches: list[Branch] = [self.knowledge_branch]
        if task is not None:
            self.branches.insert(0, TaskDialogBranch(task, language))

    @property
    def detector(self) -> Detector:
        return self.knowledge_branch.detector

    @property
    def retriever(self) -> Retriever:
        return self.knowledge_branch.retriever

    @property
    def generator(self) -> Generator:
        return self.knowledge_branch.generator

    @classmethod
    def from_config(cls, config: SystemConfig | None = None, language: str | None = None) -> DialogSystem:
        """Build the system for ``language`` (default: the config's first) from registered components."""
        from ragdial.pipeline.components import build_system

        config = config or SystemConfig()
        return build_system(config, language or config.languages[0])

    def components(self) -> list[object]:
        """The components this system holds (detector, retriever, generator, task branch if any)."""
        parts: list[object] = [self.detector, self.retriever, self.generator]
        return [*parts, self.task] if self.task is not None else parts

    def warm_up(self) -> None:
        """Load what components load lazily (models, query encoders) now, not on the first user's turn, and prime
        the generator with an answer turn's head. The generator warms in a second thread meanwhile: a local LLM
        loads and decodes outside Python's lock, so it overlaps the encoders' loading."""
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="warm-generator") as pool:
            generator = pool.submit(self.warm_generator)
            self.warm_components()
            generator.result()

    def warm_generator(self) -> None:
        """Load the generator and prime it with an answer turn's head (``KnowledgeBranch.warm_up``)."""
        warm_up(self.generator)
        self.knowledge_branch.warm_up()

    def warm_components(self) -> None:
        """Warm every component but the generator, load the answer model's vectors and retrieve once."""
        for component in self.components():
            if component is not self.generator:
                warm_up(component)
        self.knowledge_branch.load_vectors()
        user = self.users[0].id if self.users else None
        context = [Turn(Speaker.USER, "你好" if self.language == "zh" else "hello")]
        self.retrieve(context, user)

    def close(self) -> None:
        """Close every component (a shared one is closed once by whoever shares it: ``Components.close``)."""
        for component in self.components():
            close(component)

    @property
    def users(self) -> list[UserProfile]:
        return self.knowledge.users

    def new_session(self, user: str | None = None) -> Session:
        return Session.new(user, self.language)

    def decide(self, context: Sequence[Turn]) -> Decision:
        return self.knowledge_branch.decide(context)

    def retrieve(
        self, context: Sequence[Turn], user: str | None = None, decision: Decision | None = None, k: int | None = None
    ) -> Retrieval:
        """The knowledge for the next system turn, as chat would cite it: ``selected`` (at most ``k``, default
        ``top_k``) and ``ranked`` (up to ``retrieve_k``), within the decision's look-ups (default: the detector's)."""
        decision = decision or self.decide(context)
        return self.knowledge_branch.retrieve(context, user, decision, k)

    def context_for(self, history: Sequence[Turn], user_text: str) -> list[Turn]:
        """The last ``history_turns`` turns of ``history`` followed by the user's new turn."""
        recent = list(history[-self.config.history_turns :]) if self.config.history_turns else []
        return [*recent, Turn(Speaker.USER, user_text)]

    def branch_for(self, state: JSONObject, turn: Turn) -> Branch:
        """The first branch that claims ``turn`` (the knowledge branch claims every turn)."""
        return next(b for b in self.branches if b.claims(state, turn))

    def stream_context(
        self,
        context: Sequence[Turn],
        user: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        state: JSONObject | None = None,
        cancel: threading.Event | None = None,
        dialog_id: str | None = None,
    ) -> Iterator[Event]:
        """Answer the turn after ``context``: yields ``Prepared``, then ``Piece``s, then the ``Reply``. Setting
        ``cancel`` stops the generator after the token in flight (the stream then ends early). ``dialog_id``
        (batch runs) keeps the dialog's own turns out of the exemplars."""
        state = dict(state or {})
        request = TurnInput(list(context), user, state, max_tokens, temperature, cancel, dialog_id)
        yield from self.branch_for(state, request.turn).respond(request)

    def answer(self, context: Sequence[Turn], user: str | None = None, dialog_id: str | None = None) -> Reply:
        """The reply to the turn after ``context`` (batch use: no session; ``dialog_id``: the example's dialog)."""
        return last_reply(self.stream_context(context, user, dialog_id=dialog_id))

    def stream(
        self,
        session: Session,
        user_text: str,
        max_tokens: int | None = None,
        temperature: float | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[Event]:
        """Stream the answer to ``user_text`` in ``session`` (which is not changed: keep ``reply.record``)."""
        context = self.context_for(session.history, user_text)
        yield from self.stream_context(context, session.user, max_tokens, temperature, session.state, cancel)

    def respond(
        self,
        session: Session,
        user_text: str,
        max_tokens: int | None = None,
        temperature: float | None = None,
        cancel: threading.Event | None = None,
    ) -> Reply:
        """Answer ``user_text`` in ``session``; ``session.add(reply.record)`` keeps the turn."""
        return last_reply(self.stream(session, user_text, max_tokens, temperature, cancel))
