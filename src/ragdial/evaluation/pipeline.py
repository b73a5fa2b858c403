"""The whole pipeline over a benchmark split: every example answered from its own context, the official files
written and scored by the challenge, latency per stage. ``run_benchmark`` is what ``ragdial run`` calls.

The system is built over the split's knowledge with its labelled examples removed, so nothing learns from what it
is scored on; a trained component (a template model, a reranker) comes in through the config.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ragdial.challenges import Benchmark, Challenge, Prediction, ScoreOptions, benchmark
from ragdial.challenges.base import DEFAULT_SCORING
from ragdial.datasets import FileOptions
from ragdial.errors import RagdialError
from ragdial.evaluation.base import EvaluationResult, Evaluator
from ragdial.evaluation.latency import Latency
from ragdial.io import write_json
from ragdial.jsontypes import JSONDict
from ragdial.schema import Dataset, Example, Knowledge

if TYPE_CHECKING:
    from ragdial.pipeline.config import SystemConfig
    from ragdial.pipeline.knowledge import KnowledgeSource
    from ragdial.pipeline.system import DialogSystem, Reply

STAGES = ("total", "retrieve", "first_token", "generate")


def prediction_of(reply: Reply) -> Prediction:
    """What a reply predicts: the decision, the cited knowledge (when it sought any), the ranking and the text."""
    needs = reply.decision.needs_knowledge
    return Prediction(
        needs_knowledge=needs,
        selection=tuple(c.id for c in reply.knowledge) if needs else (),
        ranking=tuple(c.id for c in reply.ranking),
        response=reply.text,
        api_query=reply.decision.label if reply.decision.detector == "api_query" else None,
    )


def speed(replies: Sequence[Reply]) -> dict[str, float]:
    """Turns, tokens, decode tokens/s and per-turn latency percentiles (``Latency``: numpy percentiles)."""
    if not replies:
        return {}
    generate_s = sum(r.timings["generate_ms"] for r in replies) / 1000.0
    tokens = sum(r.tokens for r in replies)
    total = Latency.of(r.timings["total_ms"] for r in replies)
    return {
        "turns": len(replies),
        "tokens": tokens,
        "tokens_per_s": tokens / generate_s if generate_s > 0 else 0.0,
        "total_ms_p50": total.p50,
        "total_ms_p95": total.p95,
        "retrieve_ms_p50": Latency.of(r.timings["retrieve_ms"] for r in replies).p50,
        "first_token_ms_p50": Latency.of(r.timings["first_token_ms"] for r in replies).p50,
    }


class PipelineEvaluator(Evaluator["DialogSystem"]):
    """Answer ``examples`` with a dialog system, write the challenge's official files into ``out`` and score them.

    ``options`` go to ``Challenge.score`` (METEOR 1.5, BERTScore); ``on_reply`` is called after each answer
    (progress bars); ``tracks``: the names of the official files to write (default: every track). Every file
    written is read back as the organisers' checker would (``result.checks``); unlabelled examples (a test split's
    contexts) are not scored: ``challenge_scores`` stays empty.
    """

    def __init__(
        self,
        challenge: Challenge,
        dataset: Dataset,
        examples: Sequence[Example],
        out: Path,
        name: str = "pipeline",
        on_reply: Callable[[Example, Reply], None] | None = None,
        options: ScoreOptions = DEFAULT_SCORING,
        tracks: Sequence[str] | None = None,
    ):
        self.tracks = tracks
        self.challenge = challenge
        self.dataset = dataset
        self.examples = list(examples)
        self.out = Path(out)
        self.name = name
        self.on_reply = on_reply
        self.options = options

    def __call__(self, model: DialogSystem) -> EvaluationResult:
        started = time.perf_counter()
        replies: dict[str, Reply] = {}
        for example in self.examples:
            reply = model.answer(example.context, user=example.dialog_id, dialog_id=example.dialog_id)
            replies[example.id] = reply
            if self.on_reply is not None:
                self.on_reply(example, reply)
        predictions = {key: prediction_of(reply) for key, reply in replies.items()}
        if any(track.holds == "ranking" for track in self.challenge.tracks):
            for example in self.examples:
                predictions[example.id] = self._full_ranking(model, example, predictions[example.id])
        self.out.mkdir(parents=True, exist_ok=True)
        files = self._write(predictions)
        checks = self.challenge.check_files(files, self.dataset, self.examples)
        challenge_scores = []
        if self.challenge.labelled(self.examples):
            challenge_scores = self.challenge.score(self.dataset, self.examples, predictions, self.options)
        scores: dict[str, float] = {}
        for result in challenge_scores:
            scores.update({f"{result.challenge}.{k}": v for k, v in result.flat().items()})
        values = list(replies.values())
        latency = {s: Latency.of(r.timings[f"{s}_ms"] for r in values) for s in STAGES if values}
        return EvaluationResult(
            self.name,
            scores,
            None,
            latency,
            {"examples": len(self.examples), "tokens": sum(r.tokens for r in values)},
            challenge_scores,
            files,
            predictions=dict(replies),
            seconds=time.perf_counter() - started,
            checks=checks,
        )

    def _write(self, predictions: dict[str, Prediction]) -> list[Path]:
        if self.tracks is None:
            return self.challenge.write(self.out, self.dataset, self.examples, predictions)
        chosen = [t for t in self.challenge.tracks if t.name in self.tracks]
        if not chosen:
            known = ", ".join(t.name for t in self.challenge.tracks)
            raise RagdialError(f"{self.challenge.name}: no track among {', '.join(self.tracks)} (tracks: {known})")
        return [
            self.challenge.write_track(t, self.out / t.filename, self.dataset, self.examples, predictions)
            for t in chosen
        ]

    @staticmethod
    def _full_ranking(model: DialogSystem, example: Example, prediction: Prediction, depth: int = 20) -> Prediction:
        """A ranking track scores every labelled turn whatever the detector decided: a ranking shorter than
        ``depth`` (no look-up, or one source only) is completed by the retriever over all of the dialog's
        candidates (not timed)."""
        if len(prediction.ranking) >= depth:
            return prediction
        ranked = model.retriever.retrieve(example.context, example.dialog_id, depth).ranked
        ranking = tuple(dict.fromkeys([*prediction.ranking, *(r.item.id for r in ranked)]))[:depth]
        return dataclasses.replace(prediction, ranking=ranking)


@dataclass
class BenchmarkResult:
    """One ``ragdial run``: which benchmark, split and fold, the system's config and components, the evaluation
    result and the speed summary; ``summary()`` is what ``scores.json`` holds."""

    benchmark: str
    split: str
    fold: int | None
    config: JSONDict
    components: dict[str, str]
    result: EvaluationResult
    speed: dict[str, float] = field(default_factory=dict)

    @property
    def scored(self) -> bool:
        """False when the input had no gold (a test split's contexts): the files were format-checked only."""
        return bool(self.result.challenge_scores)

    def summary(self) -> dict[str, object]:
        return {
            "benchmark": self.benchmark,
            "split": self.split,
            "fold": self.fold,
            "examples": self.result.counts["examples"],
            "config": self.config,
            "components": self.components,
            "speed": self.speed,
            "scored": bool(self.result.challenge_scores),
            "scores": {s.challenge: s.to_dict() for s in self.result.challenge_scores},
            "format_checks": self.result.checks,
            "submission": [str(p) for p in self.result.files],
            "latency_ms": {stage: summary.to_dict() for stage, summary in self.result.latency.items()},
        }


def knowledge_for(dataset: Dataset) -> KnowledgeSource:
    """The split's knowledge and users, with its labelled examples removed (nothing trains on the scored turns)."""
    from ragdial.pipeline.knowledge import KnowledgeSource

    return KnowledgeSource.of(dataclasses.replace(dataset, examples=[]))


def select_examples(
    bench: Benchmark,
    dataset: Dataset,
    fold: int | None,
    limit: int | None = None,
    seed: int = 0,
    any_fold: bool = False,
) -> list[Example]:
    """The examples a run scores: ``fold`` of the split for a challenge with a dev fold (DSTC11; any challenge with
    ``any_fold``), else all; then a sample of ``limit`` of them drawn with ``seed`` (kept in split order)."""
    use_fold = fold if bench.challenge.default_fold is not None or any_fold else None
    examples = bench.challenge.examples(dataset, use_fold)
    if limit is not None and limit < len(examples):
        import random

        chosen = sorted(random.Random(seed).sample(range(len(examples)), limit))
        examples = [examples[i] for i in chosen]
    if not examples:
        raise RagdialError(f"{bench.name}: no examples to run (split {dataset.split!r}, fold {fold})")
    return examples


def run_benchmark(
    name: str,
    config: SystemConfig,
    path: Path | None = None,
    split: str | None = None,
    fold: int | None = 0,
    limit: int | None = None,
    language: str = "zh",
    out: Path | None = None,
    seed: int = 0,
    on_start: Callable[[Dataset, list[Example]], None] | None = None,
    on_reply: Callable[[Example, Reply], None] | None = None,
    options: ScoreOptions = DEFAULT_SCORING,
    knowledge: Iterable[Knowledge] = (),
    tracks: Sequence[str] | None = None,
    load_options: FileOptions | None = None,
    any_fold: bool = False,
) -> BenchmarkResult:
    """Build the system over the benchmark split, answer every selected example, write the official files and
    ``scores.json`` into ``out`` (default ``runs/<name>``) and return the result.

    ``fold``: the dialog-grouped fold to run where the challenge has a dev fold (DSTC11; None: all); ``limit``,
    ``seed``: a seeded sample of that many examples; ``options``: METEOR 1.5 and BERTScore choices (see
    ``Challenge.score``). ``knowledge``: items added to the split's knowledge base (a recipe's knowledge graph, so a
    test file without triples is answered and written from it); ``tracks``: the official files to write;
    ``load_options``: the loader's options (DSTC9 ``knowledge``); ``any_fold``: ``fold`` applies to any challenge.
    Unlabelled input is not scored (``BenchmarkResult.scored``); its files are checked against the official format.
    """
    from ragdial.pipeline.components import build_system
    from ragdial.pipeline.config import ComponentSpec
    from ragdial.pipeline.turn import Reply

    bench = benchmark(name)
    dataset = bench.load(path, split, language, **(load_options or FileOptions()))
    for item in knowledge:
        dataset.kb.add(item)
    config.languages = [dataset.language]
    examples = select_examples(bench, dataset, fold, limit, seed, any_fold)
    if on_start is not None:
        on_start(dataset, examples)
    folder = out or Path("runs") / name
    if config.detector == ComponentSpec("always"):  # the config names no detector: the challenge's trained one
        trained = bench.challenge.trained_detector(dataset, folder)
        if trained is not None:
            config.detector = ComponentSpec.parse(trained, "detector")
    system = build_system(config, dataset.language, knowledge=knowledge_for(dataset))
    evaluator = PipelineEvaluator(bench.challenge, dataset, examples, folder, name, on_reply, options, tracks)
    result = evaluator(system)
    run = BenchmarkResult(
        name,
        dataset.split,
        fold if bench.challenge.default_fold is not None or any_fold else None,
        config.to_data(),
        {k: type(getattr(system, k)).__name__ for k in ("detector", "retriever", "generator")},
        result,
        speed([r for r in result.predictions.values() if isinstance(r, Reply)]),
    )
    write_json(folder / "scores.json", run.summary())
    result.files.append(folder / "scores.json")
    return run
