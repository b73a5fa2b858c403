"""``ragdial run RECIPE TEST --system DIR``: the official submission of a trained recipe on test data, scored where
the test data has gold and format-checked (never scored) where it has none. The run goes through
``ragdial.evaluation.run_benchmark`` (the one benchmark path); SMP2017 (intent only, no dialog system) runs its
intent classifier here.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ragdial.challenges import SMP2017, Prediction, ScoreOptions
from ragdial.challenges.base import DEFAULT_SCORING
from ragdial.errors import RagdialError
from ragdial.evaluation import BenchmarkResult, EvaluationResult, run_benchmark
from ragdial.io import write_json
from ragdial.recipes import TRAINED, DataSpec, Recipe, apply_overrides, check
from ragdial.recipes.training import ALWAYS, RECIPE, SYSTEM
from ragdial.schema import Dataset, Example

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

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if name is not None and Path(name).stem != data.get("name"):
        raise RagdialError(f"{system} was trained with recipe {data.get('name')!r}, not {Path(name).stem!r}")
    overrides = list(overrides)
    fixed = [o for o in overrides if o.partition("=")[0].split(".")[0] in TRAINED and not _no_detector(o)]
    if fixed:
        raise RagdialError(
            f"--set {fixed[0]}: a training option; train again with `ragdial train ... --set {fixed[0]}`"
        )
    data = apply_overrides(data, overrides)
    check(data, str(path))
    return Recipe(data)


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
    on_reply: Callable[[Example, Any], None] | None = None,
    options: ScoreOptions = DEFAULT_SCORING,
) -> BenchmarkResult:
    """Answer the test data (``path``, else the recipe's ``test.path`` under ``$RAGDIAL_DATA``) with the system in
    ``system`` and write the recipe's official outputs into ``out`` (default ``runs/<recipe>``). ``fold``: the
    dialog-grouped fold to answer (None: the recipe's ``test.fold``; -1: all)."""
    from ragdial.pipeline.config import ComponentSpec, load_config

    test = dict(recipe.get("test") or {})
    if path is None:
        if not test.get("path"):
            raise RagdialError(f"recipe {recipe.name}: give the test data (no default test path)")
        path = DataSpec.parse(str(test["path"]), recipe.format()).path
    split = split or test.get("split")
    fold = test.get("fold") if fold is None else (None if fold < 0 else fold)  # -1: every fold
    folder = out or Path("runs") / recipe.name
    config = load_config(Path(system) / SYSTEM)
    for key, value in (recipe.get("system") or {}).items():  # run-time overrides of the system's fields
        if not hasattr(config, key):
            raise RagdialError(f"recipe {recipe.name}: system has no field {key!r}")
        setattr(config, key, value)
    if recipe.get("detector") is None:  # run-time `--set detector=null`: every turn looks up
        config.detector = ComponentSpec.parse(ALWAYS, "detector")
    generator = recipe.get("generator")
    if generator and config.generator.name != generator.get("name"):  # another generator than the one trained
        config.generator = ComponentSpec.parse(generator, "generator")
    config.check(f"recipe {recipe.name}")
    if recipe.benchmark == "smp2017":
        return _run_intent(recipe, Path(system), Path(path), folder, split, fold, limit, seed, on_start, on_reply)
    items = []
    if recipe.get("knowledge") == "train":
        from ragdial.retrieval.index import read_items

        items = read_items(Path(system) / "index")
    outputs = set(recipe.get("outputs") or [])
    from ragdial import challenges

    bench = challenges.benchmark(recipe.benchmark)
    tracks = [t.name for t in bench.challenge.tracks if t.filename in outputs] or None
    if tracks is not None and "track2" not in tracks and recipe.benchmark in ("mobilecs2", "demo"):
        options = dataclasses.replace(options, bertscore=False)  # track 2 is not written: not scored either
    return run_benchmark(
        recipe.benchmark,
        config,
        path,
        split,
        fold,
        limit,
        out=folder,
        seed=seed,
        on_start=on_start,
        on_reply=on_reply,
        options=options,
        knowledge=items,
        tracks=tracks,
        load_options=test.get("options") or {},
        any_fold=fold is not None,
    )


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
    on_reply: Callable[[Example, Any], None] | None = None,
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
    labels: list[Any] = []
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
