"""SMP2017-ECDT task 1: user intent classification (31 labels), accuracy and micro/macro F1."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from ragdial.challenges.base import (
    DEFAULT_SCORING,
    Challenge,
    Prediction,
    Predictions,
    ScoreOptions,
    Track,
    predicted_examples,
)
from ragdial.metrics.result import ChallengeScores
from ragdial.schema import Dataset, Example

PREDICTIONS = Track("predictions", "predictions.json", "intent")


class Smp2017Challenge(Challenge):
    name = "smp2017"
    title = "SMP2017-ECDT task 1 (intent)"
    formats = ("smp2017",)
    tracks = (PREDICTIONS,)
    default_paths: ClassVar[Mapping[str, str]] = {"smp2017": "smp2017_ecdt"}

    def write_track(
        self, track: Track, path: str | Path, dataset: Dataset, examples: Sequence[Example], predictions: Predictions
    ) -> Path:
        from ragdial.datasets import smp2017

        return smp2017.write_predictions(path, predicted_examples(examples, predictions))

    def check_track(self, track: Track, path: Path, dataset: Dataset, examples: Sequence[Example]) -> str:
        """``[{"id", "label"}]`` with a label string for every utterance."""
        from ragdial.datasets import smp2017
        from ragdial.metrics.challenges.checks import require_all

        predicted = smp2017.read_predictions(path)
        require_all(path, predicted, [e.id for e in examples], "utterances")
        return f"predictions format ok: {len(predicted)} labels"

    def score(
        self,
        dataset: Dataset,
        examples: Sequence[Example],
        predictions: Predictions,
        options: ScoreOptions = DEFAULT_SCORING,
    ) -> list[ChallengeScores]:
        """Accuracy, micro and macro F1 and per-class scores over the split's labels and the predicted ones."""
        from ragdial.datasets import smp2017
        from ragdial.metrics.challenges.smp2017 import score_smp2017

        predicted = [predictions[e.id].intent or "" for e in examples]
        labels = sorted({*smp2017.labels(dataset), *predicted})
        return [score_smp2017([e.intent or "" for e in examples], predicted, labels)]

    def score_file(self, pred: Path, gold: Path, split: str = "develop") -> ChallengeScores:
        """Score a predictions JSON (``[{"id", "label"}]``) against an SMP2017 folder."""
        from ragdial.datasets import smp2017
        from ragdial.metrics.challenges.checks import require_all

        dataset = smp2017.load(gold, split)
        predicted = smp2017.read_predictions(pred)
        keys = [e.id for e in dataset.examples]
        require_all(pred, predicted, keys, "utterances")
        return self.score(dataset, dataset.examples, {k: Prediction(intent=predicted[k]) for k in keys})[0]


SMP2017 = Smp2017Challenge()
