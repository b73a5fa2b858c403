"""``ragdial run BENCHMARK``: the whole pipeline over a benchmark split, the official submission file(s), scores.

The system answers each example from its context alone (its own user profile where the format has one). It is
built over the split's knowledge with the split's labelled turns removed, so nothing learns from what it is
scored on; a trained component (a template model, a reranker) comes in through the config.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdial.datasets.folds import fold_of
from ragdial.errors import RagdialError
from ragdial.metrics.result import ChallengeScores
from ragdial.paths import data_root
from ragdial.pipeline.knowledge import KnowledgeSource
from ragdial.pipeline.system import DialogSystem, Reply
from ragdial.schema import Dataset, Example

Predictions = dict[str, Reply]


@dataclass(frozen=True)
class Benchmark:
    """A benchmark split: how to load it, which examples to run, how to write and score the predictions."""

    name: str
    help: str
    load: Callable[[Path | None, str | None, str], Dataset]
    write: Callable[[Path, Dataset, list[Example], Predictions], list[Path]]
    score: Callable[[Dataset, list[Example], Predictions, dict[str, Any]], list[ChallengeScores]]
    select: Callable[[Dataset, int | None], list[Example]] = lambda dataset, fold: list(dataset.examples)


# ---- MobileCS2 (FutureDial-RAG): track 1 top-20 and track 2 responses


def _load_demo(path: Path | None, split: str | None, language: str) -> Dataset:
    from ragdial.datasets import mobilecs2

    return mobilecs2.load_demo(language)


def _load_mobilecs2(path: Path | None, split: str | None, language: str) -> Dataset:
    from ragdial import datasets

    if path is None:
        raise RagdialError("mobilecs2 needs the dialogs file: ragdial run mobilecs2 PATH (MobileCS2 is not bundled)")
    return datasets.load("mobilecs2", path, split)


def _write_mobilecs2(out: Path, dataset: Dataset, examples: list[Example], predictions: Predictions) -> list[Path]:
    from ragdial.datasets import mobilecs2

    rankings = {e.id: [c.id for c in predictions[e.id].ranking] for e in examples}
    track1 = mobilecs2.write_track1(out / "track1_top20.json", dataset.kb, examples, rankings)
    generated = {e.id: predictions[e.id].text for e in examples}
    track2 = mobilecs2.write_track2(out / "track2_responses.json", dataset.kb, examples, generated)
    return [track1, track2]


def _score_mobilecs2(
    dataset: Dataset, examples: list[Example], predictions: Predictions, options: dict[str, Any]
) -> list[ChallengeScores]:
    from ragdial.datasets import mobilecs2
    from ragdial.metrics.challenges.futuredial import Track2Turn, score_track1, score_track2

    rules = mobilecs2.rules_of(dataset)
    ranked = [[c.id for c in predictions[e.id].ranking] for e in examples]
    scores = [score_track1([e.knowledge_ids for e in examples], ranked, rules)]
    if options.get("bertscore", True):
        turns = []
        for e in examples:
            gold = mobilecs2.gold_fields(dataset.kb, e)
            turns.append(Track2Turn(predictions[e.id].text, gold["客服"], gold["查询结果"]))
        scores.append(score_track2(turns, options.get("bertscore_model"), language=dataset.language, rules=rules))
    return scores


# ---- DSTC11 track 5: labels.json


def _load_dstc11(path: Path | None, split: str | None, language: str) -> Dataset:
    from ragdial.datasets import dstc

    return dstc.load(path or data_root() / "dstc11_track5", split or "val")


def _dstc_fold(dataset: Dataset, fold: int | None) -> list[Example]:
    """The data README's dialog-grouped folds: crc32 of the first turn's text modulo 5 (fold 0: the dev fold)."""
    if fold is None:
        return list(dataset.examples)
    return [e for e in dataset.examples if fold_of(e) == fold]


def _with_predictions(examples: list[Example], predictions: Predictions, cited: bool = True) -> list[Example]:
    predicted = []
    for example in examples:
        reply = predictions[example.id]
        needs = reply.decision.needs_knowledge
        ids = [c.id for c in reply.knowledge] if needs and cited else []
        predicted.append(
            dataclasses.replace(example, needs_knowledge=needs, knowledge_ids=ids, response=reply.text, meta={})
        )
    return predicted


def _write_dstc(out: Path, dataset: Dataset, examples: list[Example], predictions: Predictions) -> list[Path]:
    from ragdial.datasets import dstc

    return [dstc.write_labels(out / "labels.json", dataset.kb, _with_predictions(examples, predictions))]


def _score_dstc11(
    dataset: Dataset, examples: list[Example], predictions: Predictions, options: dict[str, Any]
) -> list[ChallengeScores]:
    from ragdial.datasets import dstc
    from ragdial.datasets._io import read_json
    from ragdial.metrics.challenges.dstc import check_predictions, score_dstc11

    labels_path = Path(dataset.source_path) / dataset.split / "labels.json"
    gold_all = dstc.read_labels(labels_path)
    gold = [gold_all[int(e.id)] for e in examples]
    written = Path(options["out"]) / "labels.json"
    records = check_predictions(written, read_json(written), gold, "dstc11", {item.id for item in dataset.kb})
    return [score_dstc11(gold, records, with_meteor=options.get("meteor", True))]


# ---- Huawei / KdConv: result.json


def _load_huawei(path: Path | None, split: str | None, language: str) -> Dataset:
    from ragdial import datasets

    return datasets.load("huawei", path or data_root() / "huawei_kdsd" / "valid.json", split)


def _load_kdconv(path: Path | None, split: str | None, language: str) -> Dataset:
    from ragdial import datasets

    return datasets.load("kdconv", path or data_root() / "kdconv" / "travel", split)


def _write_kdsd(out: Path, dataset: Dataset, examples: list[Example], predictions: Predictions) -> list[Path]:
    from ragdial.datasets import kdconv

    return [kdconv.write_result(out / "result.json", dataset.kb, _with_predictions(examples, predictions))]


def _score_kdsd(
    dataset: Dataset, examples: list[Example], predictions: Predictions, options: dict[str, Any]
) -> list[ChallengeScores]:
    from ragdial.metrics.challenges.kdsd import score_kdsd

    predicted = _with_predictions(examples, predictions)
    return [
        score_kdsd(
            [e.knowledge_ids for e in examples],
            [p.knowledge_ids for p in predicted],
            [e.response or "" for e in examples],
            [p.response or "" for p in predicted],
        )
    ]


BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        Benchmark("demo", "the bundled demo dialogs (MobileCS2 format): track 1 + track 2", _load_demo,
                  _write_mobilecs2, _score_mobilecs2),
        Benchmark("mobilecs2", "a MobileCS2 dialogs file (PATH): track 1 + track 2", _load_mobilecs2,
                  _write_mobilecs2, _score_mobilecs2),
        Benchmark("dstc11", "DSTC11 track 5 (default: $RAGDIAL_DATA/dstc11_track5, val, fold 0)", _load_dstc11,
                  _write_dstc, _score_dstc11, _dstc_fold),
        Benchmark("huawei", "Huawei knowledge-driven dialogue valid.json (result.json)", _load_huawei, _write_kdsd,
                  _score_kdsd),
        Benchmark("kdconv", "a KdConv domain folder (default: travel)", _load_kdconv, _write_kdsd, _score_kdsd),
    )
}  # fmt: skip


def benchmark(name: str) -> Benchmark:
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise RagdialError(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}") from None


def knowledge_for(dataset: Dataset) -> KnowledgeSource:
    """The split's knowledge and users, with its labelled examples removed (nothing trains on the scored turns)."""
    return KnowledgeSource.of(dataclasses.replace(dataset, examples=[]))


def predict(
    system: DialogSystem,
    examples: list[Example],
    on_reply: Callable[[Example, Reply], None] | None = None,
) -> Predictions:
    """The system's reply to every example, each from its own context and its dialog's user profile."""
    predictions: Predictions = {}
    for example in examples:
        reply = system.answer(example.context, user=example.dialog_id)
        predictions[example.id] = reply
        if on_reply is not None:
            on_reply(example, reply)
    return predictions


def speed(predictions: Predictions) -> dict[str, float]:
    """Per-turn latency percentiles and decode tokens/s over a run."""
    replies = list(predictions.values())
    if not replies:
        return {}
    total = [r.timings["total_ms"] for r in replies]
    generate_s = sum(r.timings["generate_ms"] for r in replies) / 1000.0
    tokens = sum(r.tokens for r in replies)

    def pct(values: list[float], q: int) -> float:
        return float(statistics.quantiles(values, n=100, method="inclusive")[q - 1]) if len(values) > 1 else values[0]

    return {
        "turns": len(replies),
        "tokens": tokens,
        "tokens_per_s": tokens / generate_s if generate_s > 0 else 0.0,
        "total_ms_p50": pct(total, 50),
        "total_ms_p95": pct(total, 95),
        "retrieve_ms_p50": pct([r.timings["retrieve_ms"] for r in replies], 50),
        "first_token_ms_p50": pct([r.timings["first_token_ms"] for r in replies], 50),
    }
