"""Shared by the generation benchmarks: data splits and (provisional) scoring.

Splits follow ../shared/data/README.md: DSTC11 val and Huawei valid are split into dialog-grouped folds by the text
of the first turn, fold = crc32(text) % 5; fold 0 is evaluated, folds 1-4 train. KdConv: film + music train, travel
evaluates.

Scoring here is provisional until ``ragdial.metrics`` lands on main (the metrics helper owns the official
implementations): DSTC11 BLEU is sacrebleu corpus BLEU / 100 (what the official summ_eval BleuMetric computes),
ROUGE-1/2/L the mean rouge-score F-measure with the Porter stemmer (as the official script), METEOR the Java
METEOR 1.5 corpus score via pycocoevalcap (the official script runs the same jar through summ_eval).
Huawei/KdConv: DuConv-style character metrics (BLEU-1/2 with corpus clipped n-gram precisions and brevity penalty,
corpus DISTINCT-1/2, character F1 over bags of characters), spaces removed.
"""

from __future__ import annotations

import math
import random
import statistics
import zlib
from collections import Counter
from collections.abc import Sequence

from ragdial.schema import Dataset, Example, KnowledgeBase

FOLDS = 5


def fold_of(example: Example, dataset: Dataset) -> int:
    """The dialog-grouped fold of an example: crc32 of its dialog's first turn, modulo 5."""
    dialog = next(d for d in dataset.dialogs if d.id == example.dialog_id)
    return zlib.crc32(dialog.turns[0].text.encode("utf-8")) % FOLDS


def split_folds(dataset: Dataset, eval_fold: int = 0) -> tuple[list[Example], list[Example]]:
    firsts = {d.id: d.turns[0].text for d in dataset.dialogs}
    train, evaluate = [], []
    for example in dataset.examples:
        fold = zlib.crc32(firsts[example.dialog_id].encode("utf-8")) % FOLDS
        (evaluate if fold == eval_fold else train).append(example)
    return train, evaluate


def sample(examples: Sequence[Example], n: int | None, seed: int = 0) -> list[Example]:
    """A fixed random sample (sorted back into data order); all of them when ``n`` is None."""
    if n is None or n >= len(examples):
        return list(examples)
    chosen = sorted(random.Random(seed).sample(range(len(examples)), n))
    return [examples[i] for i in chosen]


def merged_kb(*datasets: Dataset) -> KnowledgeBase:
    return KnowledgeBase(item for d in datasets for item in d.kb)


# --- DSTC11 (English) ---------------------------------------------------------------------------------------------


def dstc_scores(predictions: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    import sacrebleu
    from rouge_score import rouge_scorer

    bleu = sacrebleu.corpus_bleu(list(predictions), [list(references)]).score / 100.0
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    rouge = [scorer.score(r, p) for p, r in zip(predictions, references, strict=True)]
    scores = {
        "BLEU": bleu,
        "METEOR": _meteor(predictions, references),
        "ROUGE-1": statistics.fmean(s["rouge1"].fmeasure for s in rouge),
        "ROUGE-2": statistics.fmean(s["rouge2"].fmeasure for s in rouge),
        "ROUGE-L": statistics.fmean(s["rougeL"].fmeasure for s in rouge),
    }
    return scores


def _meteor(predictions: Sequence[str], references: Sequence[str]) -> float:
    """METEOR 1.5 (the Java jar bundled with pycocoevalcap, as summ_eval runs it): the corpus score."""
    from pycocoevalcap.meteor.meteor import Meteor

    scorer = Meteor()
    score, _ = scorer.compute_score(
        {i: [r] for i, r in enumerate(references)}, {i: [p.replace("\n", " ")] for i, p in enumerate(predictions)}
    )
    return float(score)


# --- Huawei / KdConv (Chinese, characters) -----------------------------------------------------------------------


def _chars(text: str) -> list[str]:
    return [c for c in text if not c.isspace()]


def _ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def char_scores(predictions: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    preds = [_chars(p) for p in predictions]
    refs = [_chars(r) for r in references]
    hits, totals = [0, 0], [0, 0]
    for p, r in zip(preds, refs, strict=True):
        for n in (1, 2):
            ref_counts = Counter(_ngrams(r, n))
            pred_counts = Counter(_ngrams(p, n))
            hits[n - 1] += sum(min(c, ref_counts[g]) for g, c in pred_counts.items())
            totals[n - 1] += max(len(p) - n + 1, 0)
    pred_len, ref_len = sum(map(len, preds)), sum(map(len, refs))
    bp = 1.0 if pred_len > ref_len else math.exp(1 - ref_len / max(pred_len, 1))
    precisions = [h / t if t else 0.0 for h, t in zip(hits, totals, strict=True)]
    bleu1 = bp * precisions[0]
    bleu2 = bp * math.sqrt(precisions[0] * precisions[1]) if precisions[1] > 0 else 0.0
    hit = sum(sum((Counter(p) & Counter(r)).values()) for p, r in zip(preds, refs, strict=True))
    precision, recall = hit / max(pred_len, 1), hit / max(ref_len, 1)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    distinct = []
    for n in (1, 2):
        grams = [g for p in preds for g in _ngrams(p, n)]
        distinct.append(len(set(grams)) / len(grams) if grams else 0.0)
    return {"BLEU-1": bleu1, "BLEU-2": bleu2, "DISTINCT-1": distinct[0], "DISTINCT-2": distinct[1], "F1": f1}


def challenge_score(scores: dict[str, float], selection_p: float, selection_r: float, selection_f1: float) -> float:
    """Huawei challenge score: 0.3·(P+R+F1 of triple selection) + 0.7·(BLEU-1 + BLEU-2 + generation F1)."""
    return 0.3 * (selection_p + selection_r + selection_f1) + 0.7 * (scores["BLEU-1"] + scores["BLEU-2"] + scores["F1"])
