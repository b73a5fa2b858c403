"""DSTC9 track 1 and DSTC11 track 5: ``labels.json`` (detection, selection, response), scored as the organisers do."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from ragdial import datasets
from ragdial.challenges.base import (
    DEFAULT_SCORING,
    Challenge,
    Prediction,
    Predictions,
    ScoreOptions,
    Track,
    grounding_extra,
    predicted_examples,
)
from ragdial.errors import RagdialError
from ragdial.metrics.result import ChallengeScores
from ragdial.schema import Dataset, Example

if TYPE_CHECKING:
    from ragdial.datasets.dstc import LabelRecord
    from ragdial.jsontypes import JSONDict

LABELS = Track("labels", "labels.json", "selection")
RANKED_DEPTH = 5
"""DSTC9's ``scores.py`` reads a target's knowledge list as a ranking (MRR@5, R@1, R@5)."""


class DstcChallenge(Challenge):
    """A DSTC track; the data root holds ``knowledge.json`` and ``<split>/logs.json``, ``labels.json``."""

    tracks = (LABELS,)

    def write_track(
        self, track: Track, path: str | Path, dataset: Dataset, examples: Sequence[Example], predictions: Predictions
    ) -> Path:
        from ragdial.datasets import dstc

        return dstc.write_labels(path, dataset.kb, predicted_examples(examples, self.as_written(predictions)))

    def as_written(self, predictions: Predictions) -> Predictions:
        """The knowledge list a target's record carries: DSTC11 scores it as a set (the selection)."""
        return predictions

    def check_track(self, track: Track, path: Path, dataset: Dataset, examples: Sequence[Example]) -> str:
        """What the organisers' ``check_results.py`` checks: one entry per instance, a boolean ``target``, known
        knowledge references with the fields of the version, a response for every target."""
        from ragdial.io import read_json
        from ragdial.metrics.challenges.dstc import check_predictions

        records = check_predictions(path, read_json(path), [{}] * len(examples), self.name, {i.id for i in dataset.kb})
        targets = sum(1 for r in records if r["target"])
        return f"labels.json format ok: {len(records)} instances, {targets} targets"

    def score(
        self,
        dataset: Dataset,
        examples: Sequence[Example],
        predictions: Predictions,
        options: ScoreOptions = DEFAULT_SCORING,
    ) -> list[ChallengeScores]:
        """Detection, selection and generation scores of the ``labels.json`` records the predictions make
        (checked as a submission is); ``meteor=False`` skips METEOR 1.5 (DSTC11, needs Java)."""
        from ragdial.datasets import dstc
        from ragdial.metrics.challenges.dstc import check_predictions

        gold_all = dstc.read_labels(Path(dataset.source_path) / dataset.split / "labels.json")
        gold = [gold_all[int(e.id)] for e in examples]
        records = [
            dstc.label_record(dataset.kb, bool(e.needs_knowledge), e.knowledge_ids, e.response, None)
            for e in predicted_examples(examples, self.as_written(predictions))
        ]
        checked = check_predictions("predictions", records, gold, self.name, {item.id for item in dataset.kb})
        return [self.score_records(gold, checked, options.meteor)]

    def score_records(
        self, gold: list[LabelRecord], predicted: list[LabelRecord], meteor: bool = True
    ) -> ChallengeScores:
        """The official scores of checked ``labels.json`` records against the gold ones."""
        from ragdial.metrics.challenges.dstc import score_dstc9, score_dstc11

        if self.name == "dstc9":
            return score_dstc9(gold, predicted)
        return score_dstc11(gold, predicted, with_meteor=meteor)

    def score_file(
        self,
        pred: Path,
        gold: Path | None = None,
        dataroot: Path | None = None,
        split: str = "val",
        knowledge: Path | None = None,
        meteor: bool = True,
        selection_only: bool = False,
    ) -> ChallengeScores:
        """Score a ``labels.json`` submission against ``gold`` (or ``dataroot/split/labels.json``);
        ``selection_only``: detection and selection of a file without responses (``ragdial retrieve batch``)."""
        from ragdial.datasets.dstc import load_knowledge, read_labels
        from ragdial.io import read_json
        from ragdial.metrics.challenges import dstc as dstc_metrics
        from ragdial.metrics.challenges.dstc import check_predictions

        if gold is None:
            if dataroot is None:
                raise RagdialError("give --gold LABELS.json or --dataroot ROOT (with --split)")
            gold = dataroot / split / "labels.json"
            knowledge = knowledge or (dataroot / "knowledge.json")
        kb_ids = {item.id for item in load_knowledge(knowledge)} if knowledge is not None else None
        gold_labels = read_labels(gold)
        predicted = check_predictions(pred, read_json(pred), gold_labels, self.name, kb_ids, not selection_only)
        if not selection_only:
            scores = self.score_records(gold_labels, predicted, meteor)
            grounding = self._grounding(
                dataroot or gold.parent.parent, split if dataroot else gold.parent.name, predicted
            )
            if grounding is not None:
                scores.extra["grounding"] = grounding
            return scores
        predicted = [{**p, "response": p.get("response") or ""} if p["target"] else p for p in predicted]
        return dstc_metrics.selection_only(self.score_records(gold_labels, predicted, meteor=False))

    def _grounding(self, root: Path, split: str, predicted: list[LabelRecord]) -> JSONDict | None:
        """The unsupported-claim rate of the responses, when the dataset (knowledge and logs) is beside the labels."""
        from ragdial.datasets.dstc import knowledge_id

        try:
            dataset = datasets.load(self.formats[0], root, split)
        except (RagdialError, OSError, ValueError):
            return None
        by_index = {int(e.id): e for e in dataset.examples if e.id.isdigit()}
        examples, predictions = [], {}
        for index, record in enumerate(predicted):
            example = by_index.get(index)
            if example is None or not record.get("target") or not record.get("response"):
                continue
            examples.append(example)
            selection = tuple(knowledge_id(ref) for ref in record.get("knowledge") or [])
            predictions[example.id] = Prediction(selection=selection, response=record["response"])
        return grounding_extra(dataset, examples, predictions)


class Dstc9Challenge(DstcChallenge):
    name = "dstc9"
    title = "DSTC9 track 1"
    formats = ("dstc9",)
    default_paths: ClassVar[Mapping[str, str]] = {"dstc9": "dstc9_track1"}

    def as_written(self, predictions: Predictions) -> Predictions:
        """DSTC9 scores the list as a ranking: the selection first (so R@1 is the selection's first item), then the
        rest of the ranking, :data:`RANKED_DEPTH` items in all (more when more are selected), as the organisers'
        baseline writes its top five."""
        written = {}
        for key, p in predictions.items():
            ranked = tuple(dict.fromkeys([*p.selection, *p.ranking])) if p.selection else ()
            written[key] = replace(p, selection=ranked[: max(RANKED_DEPTH, len(p.selection))])
        return written


class Dstc11Challenge(DstcChallenge):
    name = "dstc11"
    title = "DSTC11 track 5"
    formats = ("dstc11",)
    default_fold = 0
    default_paths: ClassVar[Mapping[str, str]] = {"dstc11": "dstc11_track5"}


DSTC9 = Dstc9Challenge()
DSTC11 = Dstc11Challenge()
