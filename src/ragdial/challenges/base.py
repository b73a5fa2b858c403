"""What every challenge object offers: load its data, pick a fold, write the official files, score predictions."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Unpack

from ragdial import datasets
from ragdial.datasets import LoadOptions
from ragdial.datasets.folds import fold_of
from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict
from ragdial.metrics.result import ChallengeScores
from ragdial.paths import data_root
from ragdial.schema import Dataset, Example

FOLDS = 5


@dataclass(frozen=True)
class Prediction:
    """A system's output for one example: the knowledge-seeking decision, the selected and the ranked knowledge
    ids, the response, (SMP2017) the intent and (MobileCS2) the predicted api_query. A field left empty is not part
    of what is written or scored."""

    needs_knowledge: bool | None = None
    selection: tuple[str, ...] = ()
    ranking: tuple[str, ...] = ()
    response: str | None = None
    intent: str | None = None
    api_query: str | None = None

    @classmethod
    def of_example(cls, example: Example) -> Prediction:
        """The labels an example carries (e.g. gold knowledge with a generated response) as a prediction."""
        return cls(example.needs_knowledge, tuple(example.knowledge_ids), (), example.response, example.intent)


Predictions = Mapping[str, Prediction]


@dataclass(frozen=True)
class ScoreOptions:
    """Choices a challenge's scores allow: METEOR 1.5 (DSTC11, needs Java), the FutureDial track-2 scores (BERTScore
    needs torch) and their BERTScore backbone (None: the offline default)."""

    meteor: bool = True
    bertscore: bool = True
    bertscore_model: str | None = None


DEFAULT_SCORING = ScoreOptions()


@dataclass(frozen=True)
class Track:
    """One official output file of a challenge: its name, default file name and what it holds."""

    name: str
    filename: str
    holds: str  # "selection", "ranking", "response" or "intent"


class Challenge:
    """One challenge family. Subclasses set the class attributes and implement ``write_track`` and ``score``."""

    name: str = ""
    title: str = ""
    formats: tuple[str, ...] = ()
    tracks: tuple[Track, ...] = ()
    default_fold: int | None = None  # the fold a run evaluates by default (None: the whole split)
    default_paths: ClassVar[Mapping[str, str]] = {}  # format -> path under $RAGDIAL_DATA

    # ---- data

    def default_path(self, format: str | None = None) -> Path:
        """Where this challenge's data sits under ``$RAGDIAL_DATA``."""
        format = self.format(format)
        if format not in self.default_paths:
            raise RagdialError(f"{self.name}: {format} data is not bundled; give its path")
        return data_root() / self.default_paths[format]

    def format(self, format: str | None = None) -> str:
        """``format`` checked against this challenge's formats (default: the first)."""
        if format is None:
            return self.formats[0]
        if format not in self.formats:
            raise RagdialError(f"{self.name} reads {', '.join(self.formats)}, not {format!r}")
        return format

    def load(
        self,
        path: str | Path | None = None,
        split: str | None = None,
        format: str | None = None,
        **options: Unpack[LoadOptions],
    ) -> Dataset:
        """The split through the format's one loader (``ragdial.datasets.load``); ``path`` defaults to the data root."""
        format = self.format(format)
        return datasets.load(format, path if path is not None else self.default_path(format), split, **options)

    def examples(self, dataset: Dataset, fold: int | None = None, keep: bool = True, k: int = FOLDS) -> list[Example]:
        """The examples in (``keep``) or outside (not ``keep``) dialog-grouped ``fold`` of ``k``
        (``ragdial.datasets.folds``); all of them when ``fold`` is None."""
        if fold is None:
            return list(dataset.examples)
        if not 0 <= fold < k:
            raise RagdialError(f"fold must be between 0 and {k - 1}, not {fold}")
        return [e for e in dataset.examples if (fold_of(e, k) == fold) == keep]

    def trained_detector(self, dataset: Dataset, folder: Path) -> JSONDict | None:
        """The detector a run of this challenge uses when the config names none: ``{"name": ..., **params}`` of a
        model this method trains on the challenge's training data and saves under ``folder``; None: keep the
        config's default."""
        return None

    # ---- official files

    def track(self, holds: str) -> Track:
        """The track whose file holds ``holds`` (selection, ranking, response or intent)."""
        for track in self.tracks:
            if track.holds == holds:
                return track
        # a selection file also carries responses (DSTC labels.json, KdSD result.json) and the reverse
        for track in self.tracks:
            if {track.holds, holds} <= {"selection", "response"}:
                return track
        raise RagdialError(f"{self.name} has no official file for {holds}")

    def write_track(
        self, track: Track, path: str | Path, dataset: Dataset, examples: Sequence[Example], predictions: Predictions
    ) -> Path:
        """Write one official file for ``examples`` from their ``predictions``."""
        raise NotImplementedError

    def write(
        self, folder: str | Path, dataset: Dataset, examples: Sequence[Example], predictions: Predictions
    ) -> list[Path]:
        """Every official file of the challenge into ``folder`` under its default name."""
        missing = next((e.id for e in examples if e.id not in predictions), None)
        if missing is not None:
            raise RagdialError(f"{self.name}: no prediction for example {missing!r}")
        return [self.write_track(t, Path(folder) / t.filename, dataset, examples, predictions) for t in self.tracks]

    def labelled(self, examples: Sequence[Example]) -> bool:
        """Whether ``examples`` carry gold to score against (a test split's contexts do not)."""
        return any(
            e.response is not None or e.knowledge_ids or e.needs_knowledge is not None or e.intent for e in examples
        )

    def check_files(self, files: Sequence[Path], dataset: Dataset, examples: Sequence[Example]) -> list[str]:
        """Read each official file back as the organisers' checker would (format, one entry per example, known
        knowledge); a ``DataFormatError`` names file, record and field. Returns one line per file checked."""
        lines = []
        for path in files:
            track = next((t for t in self.tracks if t.filename == Path(path).name), None)
            if track is not None:
                lines.append(f"{path}: {self.check_track(track, Path(path), dataset, examples)}")
        return lines

    def check_track(self, track: Track, path: Path, dataset: Dataset, examples: Sequence[Example]) -> str:
        """Check one official file; a short description of what was checked."""
        raise NotImplementedError

    # ---- scores

    def score(
        self,
        dataset: Dataset,
        examples: Sequence[Example],
        predictions: Predictions,
        options: ScoreOptions = DEFAULT_SCORING,
    ) -> list[ChallengeScores]:
        """The challenge's official scores of ``predictions`` on ``examples`` (``ragdial.metrics``)."""
        raise NotImplementedError


def predicted_examples(examples: Sequence[Example], predictions: Predictions) -> list[Example]:
    """Copies of ``examples`` carrying their predictions as labels (what the official writers take)."""
    out = []
    for example in examples:
        p = predictions[example.id]
        out.append(
            dataclasses.replace(
                example,
                needs_knowledge=p.needs_knowledge,
                knowledge_ids=list(p.selection),
                response=p.response,
                intent=p.intent,
                meta={},
            )
        )
    return out


def grounding_extra(dataset: Dataset, examples: Sequence[Example], predictions: Predictions) -> JSONDict:
    """The unsupported-claim rate (``ragdial.metrics.grounding``) of the predicted responses: each reply checked
    against the knowledge it rests on (the predicted selection, else the turn's gold knowledge) and its dialog.
    Reported beside the official scores, never part of them."""
    from ragdial.metrics.grounding import (
        Evidence,
        check_grounding,
        grounding_totals,
        knowledge_names,
        unsupported_claim_rate,
    )

    names = knowledge_names(dataset.kb)
    hypotheses, evidences = [], []
    for example in examples:
        prediction = predictions.get(example.id)
        if prediction is None or not prediction.response:
            continue
        ids = prediction.selection or tuple(example.knowledge_ids)
        items = [dataset.kb.get(i) for i in ids if i in dataset.kb]
        hypotheses.append(prediction.response)
        evidences.append(Evidence.of(items, [t.text for t in example.context], names))
    score = unsupported_claim_rate(hypotheses, evidences)
    totals = grounding_totals([check_grounding(h, e) for h, e in zip(hypotheses, evidences, strict=True)])
    return {"unsupported_claim_rate": score.value, "signature": score.signature, **totals.to_dict()}
