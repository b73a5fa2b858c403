"""SMP2017-ECDT task 1 (31-way user-intent classification): accuracy, micro and macro F1, per-class scores."""

from __future__ import annotations

from collections.abc import Sequence

from ragdial.jsontypes import as_text
from ragdial.metrics.classification import classification_report
from ragdial.metrics.result import ChallengeScores


def score_smp2017(
    gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str] | None = None
) -> ChallengeScores:
    """Scores over parallel label lists; ``labels`` defaults to every label seen."""
    report = classification_report(gold, predicted, labels)
    result = {
        "accuracy": report["accuracy"],
        "micro": report["micro"],
        "macro": report["macro"],
        "per_class": report["per_class"],
    }
    extra = {"labels": report["labels"], "confusion": report["confusion"]}
    return ChallengeScores(
        "smp2017", result, {"classification": as_text(report["signature"])}, {"utterances": len(gold)}, extra
    )
