"""Test doubles for the service tests: a tiny knowledge base, a word-overlap retriever and an echoing generator.

They stand in for the real components so the pipeline and the HTTP service are tested on their own; they are
named in configs by import path (``service_doubles:retriever``), the way a user plugs in their own component.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence

from ragdial.components import BuildContext
from ragdial.generation.base import GenerationRequest, Generator
from ragdial.generation.locking import locked_stream
from ragdial.pipeline.knowledge import KnowledgeSource
from ragdial.retrieval.base import KnowledgeFilter, Retrieval, Retriever, Scope, ScoredKnowledge, take
from ragdial.schema import Dataset, Dialog, Knowledge, KnowledgeBase, SourceKind, Speaker, Turn

ITEMS = {
    "zh": [
        Knowledge("p1", "业务名称：畅游套餐，月费：58元，流量：30GB", SourceKind.PRODUCT),
        Knowledge("p2", "业务名称：夜猫流量包，月费：10元，流量：夜间20GB", SourceKind.PRODUCT),
        Knowledge("f1", "问题：怎么查询话费余额？答案：发送短信YE到10086", SourceKind.FAQ),
        Knowledge("u1:plan", "用户已办理：畅游套餐，本月已用流量12GB", SourceKind.USER_PROFILE, scope="u1"),
        Knowledge("u2:plan", "用户已办理：夜猫流量包，余额3元", SourceKind.USER_PROFILE, scope="u2"),
    ],
    "en": [
        Knowledge("p1", "Plan: Roam Freely, monthly fee 58, data 30 GB", SourceKind.PRODUCT),
        Knowledge("p2", "Plan: Night Owl data pack, monthly fee 10, night data 20 GB", SourceKind.PRODUCT),
        Knowledge("f1", "Question: how do I check my balance? Answer: text BAL to 10086", SourceKind.FAQ),
        Knowledge("u1:plan", "The user has Roam Freely and used 12 GB this month", SourceKind.USER_PROFILE, scope="u1"),
        Knowledge(
            "u2:plan", "The user has the Night Owl data pack and a balance of 3", SourceKind.USER_PROFILE, scope="u2"
        ),
    ],
}


def knowledge(language: str) -> KnowledgeSource:
    kb = KnowledgeBase(ITEMS[language])
    dialogs = [Dialog("u1", [], {"name": "Alice"}), Dialog("u2", [], {"name": "Bob"})]
    return KnowledgeSource.of(Dataset("doubles", "demo", language, kb, dialogs, []))


def _tokens(text: str) -> set[str]:
    return {w for w in text.lower().replace(",", " ").replace("?", " ").split() if len(w) > 2} | {
        c for c in text if "\u4e00" <= c <= "\u9fff"
    }


class OverlapRetriever(Retriever):
    """Scores each candidate by the tokens (Chinese characters, English words) it shares with the last user turn."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def retrieve(
        self,
        context: Sequence[Turn],
        scope: Scope | str | None = None,
        k: int = 20,
        filter: KnowledgeFilter | None = None,
        select: int | None = None,
    ) -> Retrieval:
        query = _tokens(next((t.text for t in reversed(context) if t.speaker == Speaker.USER), ""))
        within = Scope.of(scope)
        scored = [
            ScoredKnowledge(item, float(len(query & _tokens(item.text)))) for item in self.kb if within.allows(item)
        ]
        scored.sort(key=lambda s: (-s.score, s.item.id))
        ranked = take(scored, filter, k)
        return Retrieval(ranked, ranked[: select or 1])


class EchoGenerator(Generator):
    """Replies with the user's words in order and the first knowledge item, one word per piece."""

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        user = next((t.text for t in reversed(request.context) if t.speaker == Speaker.USER), "")
        words = [f"[{user}]"]
        if request.knowledge:
            words += request.knowledge[0].text.split()
        for word in words[: request.max_tokens]:
            yield word + " "


class RecordingGenerator(EchoGenerator):
    """Echoes, and records that it was warmed, what it was primed with and every request it streamed."""

    def __init__(self) -> None:
        self.warmed = False
        self.requests: list[GenerationRequest] = []
        self.primed: list[GenerationRequest] = []

    def warm_up(self) -> None:
        self.warmed = True

    def prime(self, request: GenerationRequest) -> None:
        self.primed.append(request)

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        self.requests.append(request)
        return super().stream(request)


class FailingGenerator(Generator):
    """Fails after one piece, as a backend that breaks after start-up would (the service's two-token warm-up
    turn still passes)."""

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        yield "partial "
        if request.max_tokens > 2:
            raise RuntimeError("backend went away")


class SlowGenerator(Generator):
    """A slow LLM: one request at a time (a lock, as llama.cpp), numbered words ``delay`` seconds apart after
    ``first_delay`` (a long prompt evaluation). It waits at most ``wait`` seconds for its lock, so a lock never
    released fails, not hangs. Like llama.cpp it stops when ``request.cancel`` is set, also during the first delay,
    unless ``heeds_cancel`` is false (a call that cannot be interrupted)."""

    def __init__(
        self, delay: float, words: int, first_delay: float, wait: float = 20.0, heeds_cancel: bool = True
    ) -> None:
        self.delay, self.words, self.first_delay, self.wait = delay, words, first_delay, wait
        self.heeds_cancel = heeds_cancel
        self.lock = threading.Lock()

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        return locked_stream(self.lock, lambda: self._pieces(request), timeout=self.wait)

    def _sleep(self, seconds: float, request: GenerationRequest) -> bool:
        """Sleep; False as soon as the request is cancelled (when this double heeds it)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.heeds_cancel and request.cancelled:
                return False
            time.sleep(min(0.02, max(0.0, end - time.monotonic())))
        return not (self.heeds_cancel and request.cancelled)

    def _pieces(self, request: GenerationRequest) -> Iterator[str]:
        if not self._sleep(self.first_delay, request):
            return
        for number in range(min(self.words, request.max_tokens)):
            if not self._sleep(self.delay, request):
                return
            yield f"w{number} "


class LockedGenerator(Generator):
    """One request at a time (like llama.cpp), slowly: 40 pieces, ``delay`` seconds apart. It waits at most
    ``wait`` seconds for the model, so a lock an abandoned stream never released shows up as an error, not a hang."""

    def __init__(self, delay: float = 0.05, wait: float = 20.0) -> None:
        self.delay = delay
        self.wait = wait
        self.lock = threading.Lock()

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        return locked_stream(self.lock, lambda: self._pieces(request), timeout=self.wait)

    def _pieces(self, request: GenerationRequest) -> Iterator[str]:
        for n in range(40):
            time.sleep(self.delay)
            yield f"w{n} "


def retriever(ctx: BuildContext) -> Retriever:
    return OverlapRetriever(ctx.kb)


def locked_generator(ctx: BuildContext) -> Generator:
    return LockedGenerator()


def generator(ctx: BuildContext) -> Generator:
    return EchoGenerator()


def slow_generator(
    ctx: BuildContext, delay: float = 0.2, words: int = 200, first_delay: float = 0.0, heeds_cancel: bool = True
) -> Generator:
    return SlowGenerator(delay, words, first_delay, heeds_cancel=heeds_cancel)


def recording_generator(ctx: BuildContext) -> Generator:
    return RecordingGenerator()


class BrokenGenerator(Generator):
    """Fails at once, every time (a backend that is down)."""

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        raise RuntimeError("connection refused")


def broken_generator(ctx: BuildContext) -> Generator:
    return BrokenGenerator()


def failing_generator(ctx: BuildContext) -> Generator:
    return FailingGenerator()


CONFIG = {
    "languages": ["zh", "en"],
    "knowledge": "service_doubles:knowledge",
    "retriever": "service_doubles:retriever",
    "generator": "service_doubles:generator",
    "top_k": 2,
    "grounded": False,  # these tests check the service machinery (streaming, locks); the grounded path has its own
}
