"""Shared by the generation benchmarks: data splits and (provisional) scoring.

Splits follow ../shared/data/README.md: DSTC11 val and Huawei valid are split into dialog-grouped folds by the text
of the first turn, fold = crc32(text) % 5; fold 0 is evaluated, folds 1-4 train. KdConv: film + music train, travel
evaluates.

Scoring is ``ragdial.evaluation.GenerationEvaluator`` (``score_dstc11`` with every turn detected for English,
``score_kdsd`` with the gold triples as the selection for Chinese).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ragdial.datasets import folds
from ragdial.schema import Dataset, Example, KnowledgeBase

FOLDS = 5


def split_folds(dataset: Dataset, eval_fold: int = 0) -> tuple[list[Example], list[Example]]:
    """(train, evaluate) by the data README's dialog-grouped fold rule (``ragdial.datasets.folds``)."""
    return folds.split_folds(dataset.examples, eval_fold, FOLDS)


def sample(examples: Sequence[Example], n: int | None, seed: int = 0) -> list[Example]:
    """A fixed random sample (sorted back into data order); all of them when ``n`` is None."""
    if n is None or n >= len(examples):
        return list(examples)
    chosen = sorted(random.Random(seed).sample(range(len(examples)), n))
    return [examples[i] for i in chosen]


def merged_kb(*datasets: Dataset) -> KnowledgeBase:
    return KnowledgeBase(item for d in datasets for item in d.kb)
