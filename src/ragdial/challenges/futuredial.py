"""FutureDial-RAG (MobileCS2): track 1 top-20 knowledge rankings, track 2 generated responses."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Unpack

from ragdial.challenges.base import (
    DEFAULT_SCORING,
    Challenge,
    Prediction,
    Predictions,
    ScoreOptions,
    Track,
    grounding_extra,
)
from ragdial.datasets import LoadOptions
from ragdial.errors import DataFormatError, RagdialError
from ragdial.jsontypes import JSONDict
from ragdial.metrics.result import ChallengeScores
from ragdial.schema import Dataset, Example

TRACK1 = Track("track1", "track1_top20.json", "ranking")
TRACK2 = Track("track2", "track2_responses.json", "response")


class FutureDialChallenge(Challenge):
    """MobileCS2 dialogs (not bundled: released under a data agreement) and the bundled demo dialogs."""

    name = "futuredial"
    title = "FutureDial-RAG (MobileCS2) tracks 1 and 2"
    formats = ("mobilecs2",)
    tracks = (TRACK1, TRACK2)

    def load(
        self,
        path: str | Path | None = None,
        split: str | None = None,
        format: str | None = None,
        **options: Unpack[LoadOptions],
    ) -> Dataset:
        if path is None:
            raise RagdialError("MobileCS2 is not bundled: give the dialogs file (the demo dialogs: load_demo())")
        return super().load(path, split, format, **options)

    def load_demo(self, language: str = "zh") -> Dataset:
        """The bundled demo dialogs in MobileCS2 format (the fictional carrier of ``make demo``)."""
        from ragdial.datasets import mobilecs2

        return mobilecs2.load_demo(language)

    def trained_detector(self, dataset: Dataset, folder: Path) -> JSONDict | None:
        """The api_query classifier trained on the train split beside the dialogs file (``train_final_processed.json``
        or ``train.json``, same rules), saved in ``folder/api_query``: it decides whether and where a turn looks
        knowledge up. None for the demo, for the train file itself, or where there is no train file."""
        from ragdial.datasets import mobilecs2
        from ragdial.understanding.tasks import new_classifier, training_data

        source = Path(dataset.source_path) if dataset.source_path else None
        if source is None or dataset.split == "demo":
            return None
        train = next(
            (source.parent / n for n in ("train_final_processed.json", "train.json") if (source.parent / n).is_file()),
            None,
        )
        if train is None or train.resolve() == source.resolve():
            return None
        train_set = mobilecs2.load(train, rules=mobilecs2.rules_of(dataset), language=dataset.language)
        contexts, targets = training_data("api_query", train_set)
        model = new_classifier("api_query", train_set).fit(contexts, targets)
        model.meta["trained_on"] = str(train)
        return {"name": "api_query", "model": str(model.save(Path(folder) / "api_query"))}

    def write_track(
        self, track: Track, path: str | Path, dataset: Dataset, examples: Sequence[Example], predictions: Predictions
    ) -> Path:
        from ragdial.datasets import mobilecs2

        if track == TRACK1:
            rankings = {e.id: list(predictions[e.id].ranking) for e in examples}
            return mobilecs2.write_track1(path, dataset.kb, examples, rankings)
        generated = {e.id: predictions[e.id].response or "" for e in examples}
        queries = {e.id: predictions[e.id].api_query or "" for e in examples}
        return mobilecs2.write_track2(path, dataset.kb, examples, generated, queries)

    def check_track(self, track: Track, path: Path, dataset: Dataset, examples: Sequence[Example]) -> str:
        """Track 1: ``id``/``turn_num``/``top20_id`` (at most 20 indexes into the dialog's corpus) per scored turn;
        track 2: ``id``/``turn_num``/``客服-生成`` per turn."""
        from ragdial.datasets import mobilecs2
        from ragdial.metrics.challenges.checks import require_all

        if track == TRACK1:
            ranked = mobilecs2.read_track1(path, dataset)
            return f"track-1 format ok: {len(ranked)} rankings"
        records = mobilecs2.read_track2(path, dataset)
        require_all(path, records, [e.id for e in examples], "turns")
        return f"track-2 format ok: {len(records)} replies"

    def score(
        self,
        dataset: Dataset,
        examples: Sequence[Example],
        predictions: Predictions,
        options: ScoreOptions = DEFAULT_SCORING,
    ) -> list[ChallengeScores]:
        """Track 1 recall@1/5/20 per gold piece; track 2 (``bertscore=False`` skips it: BERTScore needs torch).
        Both under the rules the dataset was loaded with (:func:`ragdial.datasets.mobilecs2.rules_of`)."""
        from ragdial.datasets import mobilecs2
        from ragdial.metrics.challenges.futuredial import score_track1

        ranked = [list(predictions[e.id].ranking) for e in examples]
        scores = [score_track1([e.knowledge_ids for e in examples], ranked, mobilecs2.rules_of(dataset))]
        if options.bertscore:
            scores.append(self.score_track2(dataset, examples, predictions, options.bertscore_model))
        return scores

    def score_track2(
        self,
        dataset: Dataset,
        examples: Sequence[Example],
        predictions: Predictions,
        bertscore_model: str | None = None,
        bertscore_layers: int | None = None,
    ) -> ChallengeScores:
        from ragdial.datasets import mobilecs2
        from ragdial.metrics.challenges.futuredial import score_track2

        turns = self.track2_turns(dataset, examples, predictions)
        return score_track2(turns, bertscore_model, bertscore_layers, dataset.language, mobilecs2.rules_of(dataset))

    def track2_turns(self, dataset: Dataset, examples: Sequence[Example], predictions: Predictions) -> list:
        """Generated reply beside the gold ``客服`` and ``查询结果`` as loaded (never ``example.response``)."""
        from ragdial.datasets import mobilecs2
        from ragdial.metrics.challenges.futuredial import Track2Turn

        turns = []
        for e in examples:
            gold = mobilecs2.gold_fields(dataset.kb, e)
            turns.append(Track2Turn(predictions[e.id].response or "", gold["客服"], gold["查询结果"]))
        return turns

    def score_track1_file(
        self,
        pred: Path,
        gold: Path,
        kb: Path | None = None,
        faq: Path | None = None,
        split: str | None = None,
        rules: str = "organisers",
    ) -> ChallengeScores:
        """Score a top-20 file against a MobileCS2 dialogs file (scored turns with gold knowledge only)."""
        from ragdial.datasets import mobilecs2
        from ragdial.metrics.challenges.checks import require_all
        from ragdial.metrics.challenges.futuredial import score_track1

        dataset = mobilecs2.load(gold, split, global_kb=kb, faq=faq, rules=rules)
        ranked = mobilecs2.read_track1(pred, dataset)
        scored = [e for e in dataset.examples if e.meta.get("scored_source") and e.knowledge_ids]
        require_all(pred, ranked, [e.id for e in scored], "turns with gold knowledge")
        return score_track1([e.knowledge_ids for e in scored], [ranked[e.id] for e in scored], rules)

    def score_track2_file(
        self,
        pred: Path,
        gold: Path | None = None,
        kb: Path | None = None,
        faq: Path | None = None,
        split: str | None = None,
        bertscore_model: str | None = None,
        bertscore_layers: int | None = None,
        rules: str = "organisers",
        allow_identical: bool = False,
    ) -> ChallengeScores:
        """Score a track-2 file against a dialogs file, or (no ``gold``) against the gold strings its records carry.
        A file whose every generated reply equals its gold reply is refused unless ``allow_identical``."""
        from ragdial.datasets import mobilecs2
        from ragdial.metrics.challenges.checks import refuse_identical, require_all
        from ragdial.metrics.challenges.futuredial import Track2Turn, score_track2

        if gold is not None:
            dataset = mobilecs2.load(gold, split, global_kb=kb, faq=faq, rules=rules)
            records = mobilecs2.read_track2(pred, dataset)
            require_all(pred, records, [e.id for e in dataset.examples], "turns")
            predictions = {e.id: Prediction(response=records[e.id]["客服-生成"]) for e in dataset.examples}
            pairs = [
                (records[e.id]["客服-生成"], mobilecs2.gold_response(dataset.kb, e), str(e.meta.get("gold_response")))
                for e in dataset.examples
            ]
            refuse_identical(pred, pairs, allow_identical)
            scores = self.score_track2(dataset, dataset.examples, predictions, bertscore_model, bertscore_layers)
            scores.extra["grounding"] = grounding_extra(dataset, dataset.examples, predictions)
            return scores
        records = mobilecs2.read_track2(pred)
        turns = []
        for key, record in records.items():
            for name in ("客服", "查询结果"):
                if not isinstance(record.get(name), str):
                    raise DataFormatError(pred, "without --gold every record needs the gold string", key, name)
            turns.append(Track2Turn(record["客服-生成"], record["客服"], record["查询结果"]))
        refuse_identical(pred, [(t.generated, t.response) for t in turns], allow_identical)
        from ragdial.text.tokenize import detect_language

        language = detect_language(" ".join(t.response for t in turns[:200]))
        return score_track2(turns, bertscore_model, bertscore_layers, language, rules)


FUTUREDIAL = FutureDialChallenge()
