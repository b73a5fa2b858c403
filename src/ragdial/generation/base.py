"""The interface every generator backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field

from ragdial.schema import Knowledge, Turn


@dataclass
class GenerationRequest:
    """What a generator needs: the dialog so far and the knowledge to ground the reply in."""

    context: list[Turn]
    knowledge: list[Knowledge] = field(default_factory=list)
    language: str = "zh"
    max_tokens: int = 256
    temperature: float = 0.0
    seed: int = 0


class Generator(ABC):
    """A response generator; ``stream`` yields text pieces, ``generate`` joins them."""

    @abstractmethod
    def stream(self, request: GenerationRequest) -> Iterator[str]:
        """Yield the reply piece by piece (tokens or words)."""

    def generate(self, request: GenerationRequest) -> str:
        return "".join(self.stream(request))
