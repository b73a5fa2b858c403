"""Shared by the generation benchmarks: data splits and (provisional) scoring.

Splits follow ../shared/data/README.md: DSTC11 val and Huawei valid are split into dialog-grouped folds by the text
of the first turn, fold = crc32(text) % 5; fold 0 is evaluated, folds 1-4 train. KdConv: film + music train, travel
evaluates.

Scoring uses ``ragdial.metrics.challenges`` (``score_dstc11`` with every turn detected, ``score_kdsd`` with the gold
triples as the selection).
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


# --- scoring: the official implementations in ragdial.metrics ------------------------------------------------------


def dstc_scores(predictions: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """DSTC11 generation scores with every turn detected (detection weighting 1): BLEU, METEOR 1.5, ROUGE-1/2/L."""
    from ragdial.metrics.challenges.dstc import score_dstc11

    gold = [{"target": True, "knowledge": [], "response": r} for r in references]
    hyps = [{"target": True, "knowledge": [], "response": p} for p in predictions]
    generation = score_dstc11(gold, hyps).scores["generation"]
    names = {"bleu": "BLEU", "meteor": "METEOR", "rouge_1": "ROUGE-1", "rouge_2": "ROUGE-2", "rouge_l": "ROUGE-L"}
    return {names[k]: v for k, v in generation.items()}


def char_scores(predictions: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """Huawei/KdConv generation scores and the challenge score with gold triples (selection P = R = F1 = 1)."""
    from ragdial.metrics.challenges.kdsd import score_kdsd

    triples = [[i] for i in range(len(references))]
    scores = score_kdsd(triples, triples, list(references), list(predictions)).scores
    generation = scores["generation"]
    return {
        "BLEU-1": generation["bleu-1"],
        "BLEU-2": generation["bleu-2"],
        "DISTINCT-1": generation["distinct-1"],
        "DISTINCT-2": generation["distinct-2"],
        "F1": generation["f1"],
        "score (gold triples)": scores["score"],
    }
