"""Scores that carry a signature: every choice that changes the number (and the ragdial version), in one string."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ragdial import __version__
from ragdial.jsontypes import JSONDict, JSONObject, JSONValue


def signature(name: str, **choices: object) -> str:
    """``name|key:value|...|ragdial:VERSION`` in the order given (sacrebleu style); booleans as yes/no."""
    parts = [name]
    for key, value in choices.items():
        if isinstance(value, bool):
            value = "yes" if value else "no"
        parts.append(f"{key}:{value}")
    return with_version("|".join(parts))


def with_version(text: str) -> str:
    """``text`` with the ragdial version appended (signatures built from another library's own signature)."""
    return f"{text}|ragdial:{__version__}"


@dataclass(frozen=True)
class Score:
    """One number and how it was computed."""

    name: str
    value: float
    signature: str

    def __float__(self) -> float:
        return float(self.value)

    def to_dict(self) -> JSONDict:
        return {"name": self.name, "value": self.value, "signature": self.signature}


class Metric(Protocol):
    """A corpus metric: hypotheses and references in, one :class:`Score` out (e.g. ``corpus_bleu``, ``meteor15``)."""

    def __call__(self, hypotheses: Sequence[str], references: Sequence[str], /) -> Score: ...


@dataclass
class ChallengeScores:
    """A challenge's scores in the organisers' JSON shape, with a signature per metric family."""

    challenge: str
    scores: JSONObject
    signatures: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    extra: JSONDict = field(default_factory=dict)  # e.g. a confusion matrix; not part of the score file

    def flat(self) -> dict[str, float]:
        """``{"detection.f1": 0.9, ...}`` for tables."""
        return dict(_flatten(self.scores))

    def to_dict(self) -> JSONDict:
        return {
            "challenge": self.challenge,
            "scores": self.scores,
            "signatures": self.signatures,
            "counts": self.counts,
        }


def _flatten(data: Mapping[str, JSONValue], prefix: str = "") -> Iterator[tuple[str, float]]:
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _flatten(value, f"{name}.")
        elif isinstance(value, int | float | str):
            yield name, float(value)
        else:
            raise TypeError(f"score {name!r} is not a number: {value!r}")
