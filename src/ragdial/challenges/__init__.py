"""One object per challenge family: load its data, pick folds, write the official files, score, default paths.

``CHALLENGES`` by family name, ``for_format`` from a data format, and ``BENCHMARKS``: the names ``ragdial run``
takes (a challenge with the data it runs on by default).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Unpack

from ragdial.challenges.base import Challenge, Prediction, Predictions, ScoreOptions, Track, predicted_examples
from ragdial.challenges.dstc import DSTC9, DSTC11
from ragdial.challenges.futuredial import FUTUREDIAL
from ragdial.challenges.kdsd import KDSD
from ragdial.challenges.smp2017 import SMP2017
from ragdial.datasets import FileOptions
from ragdial.errors import RagdialError
from ragdial.schema import Dataset

CHALLENGES: dict[str, Challenge] = {c.name: c for c in (FUTUREDIAL, DSTC9, DSTC11, KDSD, SMP2017)}


def get(name: str) -> Challenge:
    """The challenge called ``name``."""
    try:
        return CHALLENGES[name]
    except KeyError:
        raise RagdialError(f"unknown challenge {name!r}; known: {', '.join(CHALLENGES)}") from None


def for_format(format: str) -> Challenge:
    """The challenge whose official files a data ``format`` is written as."""
    for challenge in CHALLENGES.values():
        if format in challenge.formats:
            return challenge
    known = ", ".join(f for c in CHALLENGES.values() for f in c.formats)
    raise RagdialError(f"unknown format {format!r}; known: {known}")


@dataclass(frozen=True)
class Benchmark:
    """A runnable benchmark: a challenge, the data format it reads and how its data is found by default."""

    name: str
    help: str
    challenge: Challenge
    format: str

    def load(
        self, path: Path | None = None, split: str | None = None, language: str = "zh", **options: Unpack[FileOptions]
    ) -> Dataset:
        """The benchmark's split (``path``: default under ``$RAGDIAL_DATA``; the demo: bundled, in ``language``);
        ``options`` go to the format's loader."""
        if self.name == "demo":
            return FUTUREDIAL.load_demo(language)
        dataset = self.challenge.load(path, split, self.format, **options)
        if self.format in ("dstc9", "dstc11"):
            from ragdial.datasets.dstc import version_of

            found = version_of(dataset.kb)
            if found != self.format:  # DSTC9 snippets (no doc_type) given to DSTC11, or the reverse
                where = path or dataset.source_path
                raise RagdialError(f"{where} holds {found} data, not {self.format}: use ragdial run {found}")
        return dataset


BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        Benchmark("demo", "the bundled demo dialogs (MobileCS2 format): track 1 + track 2", FUTUREDIAL, "mobilecs2"),
        Benchmark("mobilecs2", "a MobileCS2 dialogs file (PATH): track 1 + track 2", FUTUREDIAL, "mobilecs2"),
        Benchmark("dstc11", "DSTC11 track 5 (default: $RAGDIAL_DATA/dstc11_track5, val, fold 0)", DSTC11, "dstc11"),
        Benchmark(
            "dstc9", "DSTC9 track 1: a data root with knowledge.json and <split>/logs.json, labels.json", DSTC9, "dstc9"
        ),
        Benchmark("huawei", "Huawei knowledge-driven dialogue valid.json (result.json)", KDSD, "huawei"),
        Benchmark("kdconv", "a KdConv domain folder (default: travel)", KDSD, "kdconv"),
    )
}


def benchmark(name: str) -> Benchmark:
    """The runnable benchmark called ``name``."""
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise RagdialError(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}") from None


__all__ = [
    "BENCHMARKS",
    "CHALLENGES",
    "DSTC9",
    "DSTC11",
    "FUTUREDIAL",
    "KDSD",
    "SMP2017",
    "Benchmark",
    "Challenge",
    "Prediction",
    "Predictions",
    "ScoreOptions",
    "Track",
    "benchmark",
    "for_format",
    "get",
    "predicted_examples",
]
