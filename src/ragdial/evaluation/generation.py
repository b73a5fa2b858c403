"""Reply quality against gold responses with the challenge metrics: DSTC11 generation scores for English, the
Huawei/KdConv character-level scores for Chinese (``ragdial.metrics.challenges``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from ragdial.evaluation.base import EvaluationResult, Evaluator
from ragdial.evaluation.latency import Latency
from ragdial.schema import Example

GenerateFn = Callable[[Example], str]


def dstc_scores(predictions: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """DSTC11 generation scores with every turn detected (detection weighting 1): BLEU, METEOR 1.5, ROUGE-1/2/L."""
    from ragdial.datasets.dstc import LabelRecord
    from ragdial.metrics.challenges.dstc import score_dstc11

    gold: list[LabelRecord] = [{"target": True, "knowledge": [], "response": r} for r in references]
    hyps: list[LabelRecord] = [{"target": True, "knowledge": [], "response": p} for p in predictions]
    flat = score_dstc11(gold, hyps).flat()
    names = {"bleu": "BLEU", "meteor": "METEOR", "rouge_1": "ROUGE-1", "rouge_2": "ROUGE-2", "rouge_l": "ROUGE-L"}
    return {names[k.removeprefix("generation.")]: v for k, v in flat.items() if k.startswith("generation.")}


def char_scores(predictions: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """Huawei/KdConv generation scores and the challenge score with gold triples (selection P = R = F1 = 1)."""
    from ragdial.metrics.challenges.kdsd import score_kdsd

    triples = [[str(i)] for i in range(len(references))]
    flat = score_kdsd(triples, triples, list(references), list(predictions)).flat()
    return {
        "BLEU-1": flat["generation.bleu-1"],
        "BLEU-2": flat["generation.bleu-2"],
        "DISTINCT-1": flat["generation.distinct-1"],
        "DISTINCT-2": flat["generation.distinct-2"],
        "F1": flat["generation.f1"],
        "score (gold triples)": flat["score"],
    }


def reply_scores(predictions: Sequence[str], references: Sequence[str], language: str) -> dict[str, float]:
    """:func:`dstc_scores` for English, :func:`char_scores` otherwise."""
    return dstc_scores(predictions, references) if language == "en" else char_scores(predictions, references)


class GenerationEvaluator(Evaluator[GenerateFn]):
    """Scores of ``generate(example)`` against each example's gold ``response``; latency per reply."""

    def __init__(
        self,
        examples: Sequence[Example],
        language: str,
        name: str = "generation",
        on_reply: Callable[[Example, str], None] | None = None,
    ):
        self.examples = list(examples)
        self.language = language
        self.name = name
        self.on_reply = on_reply
        self.primary = "BLEU" if language == "en" else "score (gold triples)"

    def __call__(self, model: GenerateFn) -> EvaluationResult:
        started = time.perf_counter()
        predictions, times = [], []
        for example in self.examples:
            t0 = time.perf_counter()
            predictions.append(model(example).strip())
            times.append((time.perf_counter() - t0) * 1000.0)
            if self.on_reply is not None:
                self.on_reply(example, predictions[-1])
        seconds = time.perf_counter() - started
        scores = reply_scores(predictions, [e.response or "" for e in self.examples], self.language)
        return EvaluationResult(
            self.name,
            scores,
            self.primary,
            {"reply": Latency.of(times)},
            {"examples": len(self.examples)},
            predictions={e.id: p for e, p in zip(self.examples, predictions, strict=True)},
            seconds=seconds,
        )
