"""``ragdial run RECIPE TEST --system DIR``: the official submission of a trained recipe on test data, scored where
the test data has gold and format-checked (never scored) where it has none. The run goes through
``ragdial.evaluation.run_benchmark`` (the one benchmark path); SMP2017 (intent only, no dialog system) runs its
intent classifier here.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ragdial.challenges import SMP2017, Prediction, ScoreOptions
from ragdial.challenges.base import DEFAULT_SCORING
from ragdial.datasets import FileOptions
from ragdial.errors import RagdialError
from ragdial.evaluation import BenchmarkResult, EvaluationResult, run_benchmark
from ragdial.io import write_json
from ragdial.jsontypes import JSONDict, JSONValue, as_text_or_none, as_texts
from ragdial.recipes import TRAINED, DataSpec, Recipe, apply_overrides, check
from ragdial.recipes.training import ALWAYS, RECIPE, SYSTEM
from ragdial.schema import Dataset, Example

if TYPE_CHECKING:
    from ragdial.pipeline.turn import Reply
    from ragdial.understanding.linear import LabelPrediction

SYSTEMS = Path("systems")  # default folder of trained systems: systems/<recipe>


def default_system(name: str) -> Path:
    """Where ``ragdial train NAME`` writes by default (and ``ragdial run NAME`` looks)."""
    return SYSTEMS / Path(name).stem


def trained_recipe(system: Path, name: str | None = None, overrides: Iterable[str] = ()) -> Recipe:
    """The recipe a system folder was trained with, ``overrides`` applied; only run-time keys (``system``,
    ``generator``, ``test``, ``outputs``) may change after training."""
    path = Path(system) / RECIPE
    if not path.is_file():
        raise RagdialError(f"{system}: not a trained system (no {RECIPE}); train one with `ragdial train RECIPE`")
    import yaml

    data: object = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise RagdialError(f"{path}: expected a mapping at the top level")
    if name is not None and Path(name).stem != data.get("name"):
        raise RagdialError(f"{system} was trained with recipe {data.get('name')!r}, not {Path(name).stem!r}")
    overrides = list(overrides)
    fixed = [o for o in overrides if o.partition("=")[0].split(".")[0] in TRAINED and not _no_detector(o)]
    if fixed:
        raise RagdialError(
            f"--set {fixed[0]}: a training option; train again with `ragdial train ... --set {fixed[0]}`"
        )
    recipe = apply_overrides(cast(JSONDict, data), overrides)  # YAML as written by ``train_recipe``, checked next
    check(recipe, str(path))
    return Recipe(recipe)


def _no_detector(override: str) -> bool:
    """``detector=null``: every turn looks knowledge up, which needs no training (the trained detector is not used)."""
    key, _, value = override.partition("=")
    return key.strip() == "detector" and value.strip() in ("", "null", "~", "none", "None")


def run_recipe(
    recipe: Recipe,
    system: Path,
    path: Path | None = None,
    out: Path | None = None,
    split: str | None = None,
    fold: int | None = None,
    limit: int | None = None,
    seed: int = 0,
    on_start: Callable[[Dataset, list[Example]], None] | None = None,
    on_reply: Callable[[Example, Reply | None], None] | None = None,
    options: ScoreOptions = DEFAULT_SCORING,
) -> BenchmarkResult:
    """Answer the test data (``path``, else the recipe's ``test.path`` under ``$RAGDIAL_DATA``) with the system in
    ``system`` and write the recipe's official outputs into ``out`` (default ``runs/<recipe>``). ``fold``: the
    dialog-grouped fold to answer (None: the recipe's ``test.fold``; -1: all)."""
    from ragdial.pipeline.config import ComponentSpec, load_config

    test = recipe.section("test") or {}
    if path is None:
        if not test.get("path"):
            raise RagdialError(f"recipe {recipe.name}: give the test data (no default test path)")
        path = DataSpec.parse(str(test["path"]), recipe.format()).path
    split = split or as_text_or_none(test.get("split"))
    if fold is None:
        given = test.get("fold")
        if given is not None and not isinstance(given, int):
            raise RagdialError(f"recipe {recipe.name}: test.fold must be a fold number or null, not {given!r}")
        fold = given
    elif fold < 0:  # -1: every fold
        fold = None
    folder = out or Path("runs") / recipe.name
    config = load_config(Path(system) / SYSTEM)
    for key, value in (recipe.section("system") or {}).items():  # run-time overrides of the system's fields
        if not hasattr(config, key):
            raise RagdialError(f"recipe {recipe.name}: system has no field {key!r}")
        setattr(config, key, value)
    if recipe.get("detector") is None:  # run-time `--set detector=null`: every turn looks up
        config.detector = ComponentSpec.parse(ALWAYS, "detector")
    generator = recipe.section("generator")
    if generator and config.generator.name != generator.get("name"):  # another generator than the one trained
        config.generator = ComponentSpec.parse(generator, "generator")
    config.check(f"recipe {recipe.name}")
    if recipe.benchmark == "smp2017":
        return _run_intent(recipe, Path(system), Path(path), folder, split, fold, limit, seed, on_start, on_reply)
    items = []
    if recipe.get("knowledge") == "train":
        from ragdial.retrieval.index import read_items

        items = read_items(Path(system) / "index")
    outputs = set(as_texts(recipe.get("outputs")))
    from ragdial import challenges

    bench = challenges.benchmark(recipe.benchmark)
    tracks = [t.name for t in bench.challenge.tracks if t.filename in outputs] or None
    if tracks is not None and "track2" not in tracks and recipe.benchmark in ("mobilecs2", "demo"):
        options = dataclasses.replace(options, bertscore=False)  # track 2 is not written: not scored either
    seen: list[Example] = []

    def start(dataset: Dataset, examples: list[Example]) -> None:
        seen[:] = examples
        if on_start is not None:
            on_start(dataset, examples)

    done = run_benchmark(
        recipe.benchmark,
        config,
        path,
        split,
        fold,
        limit,
        out=folder,
        seed=seed,
        on_start=start,
        on_reply=on_reply,
        options=options,
        knowledge=items,
        tracks=tracks,
        load_options=_file_options(recipe.name, test.get("options") or {}),
        any_fold=fold is not None,
    )
    if recipe.get("detector") is None and done.scored:
        _add_gold_detection(done, seen, folder / "scores.json")
    return done


GOLD_DETECTION = "gold_detection"
"""Key of ``scores.json`` (and prefix in ``result.scores``) for selection with gold detection."""


def _add_gold_detection(done: BenchmarkResult, examples: list[Example], scores_file: Path) -> None:
    """``run --set detector=null`` (every turn looks up): selection scored on the turns whose gold uses knowledge,
    i.e. with gold detection, what the retrieval rows of docs/benchmarks.md measure; added to ``result.scores``
    and ``scores.json``. The challenge's own scores of such a run count every turn as a lookup."""
    import json

    from ragdial.evaluation import recall_at, selection_scores
    from ragdial.evaluation.pipeline import prediction_of
    from ragdial.pipeline.turn import Reply

    seeking = [e for e in examples if e.needs_knowledge and e.knowledge_ids]
    replies = done.result.predictions
    if not seeking or not all(isinstance(replies.get(e.id), Reply) for e in seeking):
        return
    predicted = [prediction_of(cast("Reply", replies[e.id])) for e in seeking]
    golds = [list(e.knowledge_ids) for e in seeking]
    scores: dict[str, float] = dict(selection_scores(golds, [list(p.selection) for p in predicted]))
    recall = recall_at(golds, [list(p.ranking) for p in predicted], (1, 5))
    scores.update({"R@1": recall[1], "R@5": recall[5], "turns": float(len(seeking))})
    done.result.scores.update({f"{GOLD_DETECTION}.{k}": v for k, v in scores.items()})
    if scores_file.is_file():
        summary = json.loads(scores_file.read_text(encoding="utf-8"))
        summary[GOLD_DETECTION] = scores
        write_json(scores_file, summary)


def _run_intent(
    recipe: Recipe,
    system: Path,
    path: Path,
    folder: Path,
    split: str | None,
    fold: int | None,
    limit: int | None,
    seed: int,
    on_start: Callable[[Dataset, list[Example]], None] | None,
    on_reply: Callable[[Example, Reply | None], None] | None = None,
    batch: int = 32,
) -> BenchmarkResult:
    """SMP2017: the trained intent classifier over the test split; ``predictions.json``, scored where labelled.
    ``on_reply(example, None)`` is called for every utterance as its batch of ``batch`` is classified."""
    import random

    from ragdial.evaluation import Latency
    from ragdial.understanding import TextClassifier

    dataset = SMP2017.load(path, split or "develop")
    examples = SMP2017.examples(dataset, fold)
    if limit is not None and limit < len(examples):
        examples = [examples[i] for i in sorted(random.Random(seed).sample(range(len(examples)), limit))]
    if on_start is not None:
        on_start(dataset, examples)
    model = TextClassifier.load(system / "intent")
    started = time.perf_counter()
    labels: list[LabelPrediction] = []
    for first in range(0, len(examples), batch):
        part = examples[first : first + batch]
        labels.extend(model.predict([e.context for e in part]))
        if on_reply is not None:
            for example in part:
                on_reply(example, None)
    seconds = time.perf_counter() - started
    predictions = {e.id: Prediction(intent=str(label)) for e, label in zip(examples, labels, strict=True)}
    folder.mkdir(parents=True, exist_ok=True)
    files = SMP2017.write(folder, dataset, examples, predictions)
    checks = SMP2017.check_files(files, dataset, examples)
    scores = SMP2017.score(dataset, examples, predictions) if SMP2017.labelled(examples) else []
    per = Latency.of([seconds * 1000 / max(len(examples), 1)] * len(examples))
    result = EvaluationResult(
        recipe.name,
        {f"{s.challenge}.{k}": v for s in scores for k, v in s.flat().items()},
        None,
        {"total": per},
        {"examples": len(examples), "tokens": 0},
        scores,
        files,
        predictions=dict(predictions),
        seconds=seconds,
        checks=checks,
    )
    speed = {"turns": len(examples), "tokens": 0, "tokens_per_s": 0.0, "total_ms_p50": per.p50, "total_ms_p95": per.p95}
    run = BenchmarkResult(recipe.name, dataset.split, fold, {"intent": str(system / "intent")}, {}, result, speed)
    write_json(folder / "scores.json", run.summary())
    result.files.append(folder / "scores.json")
    return run


def _file_options(name: str, value: JSONValue) -> FileOptions:
    """The loader options of ``test.options``: names of ``FileOptions`` with texts (a list of texts for
    ``qa_dialogs``) or null; the test format's loader says which it takes."""
    known = FileOptions.__annotations__
    if not isinstance(value, Mapping):
        raise RagdialError(f"recipe {name}: test.options must be a mapping, not {value!r}")
    for key, option in value.items():
        if key not in known:
            raise RagdialError(f"recipe {name}: test.options: unknown option {key!r}; known: {', '.join(known)}")
        texts = option if key == "qa_dialogs" and isinstance(option, list) else [option]
        if not all(text is None or isinstance(text, str) for text in texts):
            raise RagdialError(f"recipe {name}: test.options.{key} must be a text or null, not {option!r}")
    return cast(FileOptions, dict(value))  # checked above
