"""The evaluation layer's contract (sentence-transformers style): an evaluator is built from the data it scores on
and called with a model; it returns an :class:`EvaluationResult`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from ragdial.evaluation.latency import Latency
from ragdial.metrics.result import ChallengeScores

ModelT = TypeVar("ModelT", contravariant=True)


@dataclass
class EvaluationResult:
    """What an evaluation measured: flat scores (``primary`` names the main one), latency per stage, counts, the
    challenge score objects with their signatures, the files written and the per-example predictions."""

    name: str
    scores: dict[str, float]
    primary: str | None = None
    latency: dict[str, Latency] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    challenge_scores: list[ChallengeScores] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    predictions: Mapping[str, object] = field(default_factory=dict, repr=False)  # each evaluator's own kind
    seconds: float = 0.0
    checks: list[str] = field(default_factory=list)  # official-format checks of files written for unlabelled input

    @property
    def primary_score(self) -> float:
        """The value of the primary metric (the first score when none is named)."""
        if self.primary is not None:
            return self.scores[self.primary]
        return next(iter(self.scores.values()), 0.0)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready summary (without the per-example predictions)."""
        return {
            "name": self.name,
            "scores": self.scores,
            "primary": self.primary,
            "latency_ms": {stage: summary.to_dict() for stage, summary in self.latency.items()},
            "counts": self.counts,
            "challenge_scores": {s.challenge: s.to_dict() for s in self.challenge_scores},
            "files": [str(p) for p in self.files],
            "seconds": self.seconds,
        }


class Evaluator(ABC, Generic[ModelT]):
    """Built once over a labelled set, called with each model to compare: ``evaluator(model) -> EvaluationResult``."""

    name: str = ""
    primary: str | None = None

    @abstractmethod
    def __call__(self, model: ModelT) -> EvaluationResult:
        """Evaluate ``model`` on this evaluator's examples."""
