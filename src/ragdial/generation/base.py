"""The interface every generator backend implements."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field

from ragdial.jsontypes import JSONDict
from ragdial.schema import Knowledge, Turn


@dataclass
class Exemplar:
    """A training example shown to a model in context: the dialog, the knowledge it used and the gold reply."""

    context: list[Turn]
    knowledge: list[Knowledge]
    response: str


@dataclass
class GenerationRequest:
    """What a generator needs: the dialog so far and the knowledge to ground the reply in.

    ``exemplars`` are in-context examples (used by the LLM backends); ``stop`` ends the reply at any of these
    strings; setting ``cancel`` stops a running stream after the piece in flight. ``policy`` is the answer policy
    decided before generation (``answer``, ``not_in_knowledge``, ``action``, ``small_talk``); ``instruction`` is
    added to an LLM's system message (the policy's guidance, a constrained retry's reminder). A generator that runs
    a model fills ``usage`` with its tokenizer's counts (``prompt_tokens``: the whole prompt it evaluated,
    ``completion_tokens``: the tokens it generated).
    """

    context: list[Turn]
    knowledge: list[Knowledge] = field(default_factory=list)
    language: str = "zh"
    max_tokens: int = 256
    temperature: float = 0.0
    seed: int = 0
    exemplars: list[Exemplar] = field(default_factory=list)
    stop: list[str] = field(default_factory=list)
    cancel: threading.Event | None = None
    policy: str = "answer"
    instruction: str = ""
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()


class Generator(ABC):
    """A response generator; ``stream`` yields text pieces, ``generate`` joins them.

    A generator is a component (``warm_up``, ``close``, ``to_config``) and does its own locking: one that cannot
    serve two requests at once holds a lock inside ``stream`` that a closed stream releases
    (``ragdial.generation.locking``).
    """

    @abstractmethod
    def stream(self, request: GenerationRequest) -> Iterator[str]:
        """Yield the reply piece by piece (tokens or words)."""

    def generate(self, request: GenerationRequest) -> str:
        return "".join(self.stream(request))

    def warm_up(self) -> None:
        """Load the model now rather than on the first request; a no-op by default."""
        return None

    def prime(self, request: GenerationRequest) -> None:
        """Get ready for requests that begin like ``request`` before the first user's turn (a local LLM runs one
        short generation of it, keeping its prompt head); a no-op by default."""
        return None

    def close(self) -> None:
        """Release what the backend holds (a model, a connection); a no-op by default."""
        return None

    def to_config(self) -> JSONDict:
        """The component as plain config data; the import path of its class by default."""
        return {"name": f"{type(self).__module__}:{type(self).__name__}"}
