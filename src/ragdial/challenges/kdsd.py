"""The 2022 Huawei knowledge-driven spoken dialogue challenge (KdConv format): ``result.json``, triple P/R/F1 and
character-level generation scores."""

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
    grounding_extra,
    predicted_examples,
)
from ragdial.metrics.result import ChallengeScores
from ragdial.schema import Dataset, Example

RESULT = Track("result", "result.json", "selection")


class KdsdChallenge(Challenge):
    """Huawei ``valid.json`` / ``test_contexts.json`` and KdConv domain folders, both written as ``result.json``."""

    name = "kdsd"
    title = "Huawei knowledge-driven spoken dialogue (KdConv format)"
    formats = ("huawei", "kdconv")
    tracks = (RESULT,)
    default_paths: ClassVar[Mapping[str, str]] = {"huawei": "huawei_kdsd/valid.json", "kdconv": "kdconv/travel"}

    def write_track(
        self, track: Track, path: str | Path, dataset: Dataset, examples: Sequence[Example], predictions: Predictions
    ) -> Path:
        from ragdial.datasets import kdconv

        return kdconv.write_result(path, dataset.kb, predicted_examples(examples, predictions))

    def check_track(self, track: Track, path: Path, dataset: Dataset, examples: Sequence[Example]) -> str:
        """``result.json``: an object with a ``message`` string (and ``name``/``attrname``/``attrvalue`` strings in
        each of its ``attrs``) for every context id."""
        from ragdial.datasets import kdconv
        from ragdial.metrics.challenges.checks import require_all

        result = kdconv.read_result(path)
        require_all(path, result, [e.id for e in examples], "contexts")
        cited = sum(1 for r in result.values() if r.get("attrs"))
        return f"result.json format ok: {len(result)} replies, {cited} citing triples"

    def score(
        self,
        dataset: Dataset,
        examples: Sequence[Example],
        predictions: Predictions,
        options: ScoreOptions = DEFAULT_SCORING,
    ) -> list[ChallengeScores]:
        """Triple selection P/R/F1, character BLEU-1/2, DISTINCT-1/2, F1 and the challenge score."""
        from ragdial.metrics.challenges.kdsd import score_kdsd

        predicted = [predictions[e.id] for e in examples]
        return [
            score_kdsd(
                [e.knowledge_ids for e in examples],
                [list(p.selection) for p in predicted],
                [e.response or "" for e in examples],
                [p.response or "" for p in predicted],
            )
        ]

    def score_file(self, pred: Path, gold: Path) -> ChallengeScores:
        """Score a ``result.json`` against a labelled dialogs file (every system turn must be answered)."""
        from ragdial.datasets import kdconv
        from ragdial.metrics.challenges.checks import require_all

        dataset = kdconv.load(gold)
        result = kdconv.read_result(pred)
        keys = [e.id for e in dataset.examples]
        require_all(pred, result, keys, "system turns")
        predictions = {
            k: Prediction(
                selection=tuple(
                    kdconv.triple_id(a["name"], a["attrname"], a["attrvalue"]) for a in result[k].get("attrs") or []
                ),
                response=result[k]["message"],
            )
            for k in keys
        }
        scores = self.score(dataset, dataset.examples, predictions)[0]
        scores.extra["grounding"] = grounding_extra(dataset, dataset.examples, predictions)
        return scores


KDSD = KdsdChallenge()
