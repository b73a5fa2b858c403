"""``ragdial train RECIPE``: train every component a recipe names (index, detector, reranker, generator, intent) on
its training data and write a system folder: ``system.yaml`` (a ``SystemConfig`` naming the trained parts),
``recipe.yaml`` (the recipe as trained, overrides applied), ``train.json`` (data, counts, seconds per step) and one
sub-folder per trained part. Nothing is written into the folder until every part has trained.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, cast, get_type_hints

from ragdial import challenges
from ragdial.errors import RagdialError
from ragdial.io import atomic_directory, write_json
from ragdial.jsontypes import JSONDict
from ragdial.recipes import DataSpec, Recipe
from ragdial.schema import Dataset, Example, KnowledgeBase

if TYPE_CHECKING:
    from ragdial.retrieval.hybrid import HybridRetriever

SYSTEM = "system.yaml"
RECIPE = "recipe.yaml"
TRAIN_INFO = "train.json"

Step = Callable[[str], None]  # told the name of each step as it starts
DETECTORS = {"detector": ("knowledge_seeking", "zero_shot"), "api_query": ("api_query",), "intent": ("intent",)}
"""The ``detector.name`` values a recipe may give per ``detector.task`` (``intent`` is not a detector)."""


def load_training(specs: Sequence[DataSpec], knowledge: Sequence[DataSpec] = ()) -> Dataset:
    """The training inputs as one dataset: the union of their knowledge, their dialogs and examples (ids prefixed
    ``<n>/`` when there is more than one input, so dialogs of different files never merge), plus the knowledge (only)
    of the ``knowledge`` inputs."""
    loaded = [challenges.for_format(s.format).load(s.path, s.split, s.format) for s in specs]
    extra = [challenges.for_format(s.format).load(s.path, s.split, s.format) for s in knowledge]
    if len(loaded) == 1 and not extra:
        return loaded[0]
    kb = KnowledgeBase()
    dialogs, examples = [], []
    for n, dataset in enumerate(loaded):
        for item in dataset.kb:
            kb.add(item if item.is_global else dataclasses.replace(item, scope=f"{n}/{item.scope}"))
        dialogs += [dataclasses.replace(d, id=f"{n}/{d.id}") for d in dataset.dialogs]
        examples += [dataclasses.replace(e, id=f"{n}/{e.id}", dialog_id=f"{n}/{e.dialog_id}") for e in dataset.examples]
    for n, dataset in enumerate(extra):
        for item in dataset.kb:
            if item.id not in kb:
                kb.add(item if item.is_global else dataclasses.replace(item, scope=f"kb{n}/{item.scope}"))
    first = loaded[0]
    return Dataset(first.format, "+".join(d.split for d in loaded), first.language, kb, dialogs, examples, "")


def train_recipe(
    recipe: Recipe, out: Path, data: Iterable[str] = (), on_step: Step | None = None, seed: int = 0
) -> JSONDict:
    """Train ``recipe`` (on ``data`` instead of its own training inputs when given) into the folder ``out``;
    returns what ``train.json`` holds. The folder is written beside ``out`` and renamed into place at the end."""
    step = on_step or (lambda name: None)
    data = list(data)
    specs = recipe.train_specs(data)
    knowledge_specs = recipe.knowledge_specs(data)
    out = Path(out)
    final = out.resolve()
    seconds: dict[str, float] = {}
    with atomic_directory(out) as tmp:
        started = time.perf_counter()
        step("loading the training data")
        dataset = load_training(specs, knowledge_specs)
        challenge = challenges.for_format(specs[0].format)
        fold = recipe.exclude_fold
        examples = challenge.examples(dataset, fold, keep=False)
        learn = dataclasses.replace(dataset, examples=examples)
        seconds["load"] = time.perf_counter() - started
        system: JSONDict = {"languages": [dataset.language], **(recipe.section("system") or {})}
        parts = _train_parts(recipe, learn, tmp, final, step, seconds, seed)
        system.update(parts)
        from ragdial.pipeline.config import SystemConfig

        config = SystemConfig.from_data(system, f"recipe {recipe.name}, system")
        info: JSONDict = {
            "recipe": recipe.name,
            "data": [str(s) for s in specs],
            "knowledge_data": [str(s) for s in knowledge_specs],
            "exclude_fold": fold,
            "language": dataset.language,
            "knowledge_items": len(dataset.kb),
            "examples": len(examples),
            "examples_left_out": len(dataset.examples) - len(examples),
            "seconds": {k: round(v, 1) for k, v in seconds.items()},
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        (tmp / SYSTEM).write_text(config.to_yaml(), encoding="utf-8")
        trained = Recipe(
            {**recipe.data, "train": [str(s) for s in specs], "knowledge_data": [str(s) for s in knowledge_specs]}
        )
        (tmp / RECIPE).write_text(trained.to_yaml(), encoding="utf-8")
        write_json(tmp / TRAIN_INFO, info)
    return info


def _train_parts(
    recipe: Recipe, learn: Dataset, tmp: Path, final: Path, step: Step, seconds: dict[str, float], seed: int
) -> JSONDict:
    """Train each part into ``tmp``; return the ``SystemConfig`` fields naming them (paths under ``final``)."""
    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.hybrid import HybridRetriever

    parts: JSONDict = {}
    retriever_spec: JSONDict = {}  # parts["retriever"], where there is an index
    index_options = recipe.section("index")
    retriever = None
    if index_options is not None:
        step(f"indexing {len(learn.kb)} knowledge items")
        started = time.perf_counter()
        retriever = HybridRetriever(learn.kb, RetrieverConfig.from_dict(dict(index_options)))
        if recipe.get("knowledge") == "train":
            from ragdial.retrieval.index import save_index

            save_index(retriever, tmp / "index", {"format": learn.format, "recipe": recipe.name})
            retriever_spec = {"name": "index", "path": str(final / "index")}
            parts["knowledge"] = {"name": "index", "path": str(final / "index")}
        else:  # answered from the test data's own knowledge: the same options over it at run time
            retriever_spec = {"name": "hybrid", **index_options}
        parts["retriever"] = retriever_spec
        seconds["index"] = time.perf_counter() - started
    detector = recipe.section("detector")
    if detector is not None:
        parts["detector"] = _classifier(detector, learn, tmp / "detector", final / "detector", step, seconds)
    else:
        parts["detector"] = dict(ALWAYS)
    reranker = recipe.section("reranker")
    if reranker is not None:
        if retriever is None:
            raise RagdialError(f"recipe {recipe.name}: a reranker needs an index (set index)")
        _reranker(recipe.name, reranker, retriever, learn, tmp / "reranker", step, seconds, seed)
        retriever_spec["reranker"] = str(final / "reranker")
    generator: JSONDict = dict(recipe.section("generator") or {"name": "template"})
    if recipe.section("generator") and generator.get("name") == "template" and "model" not in generator:
        from ragdial.generation.template import TemplateGenerator

        step(f"learning templates from {sum(1 for e in learn.examples if e.response)} replies")
        started = time.perf_counter()
        TemplateGenerator.train(learn.examples, learn.kb, learn.language).save(tmp / "template.json")
        generator["model"] = str(final / "template.json")
        seconds["generator"] = time.perf_counter() - started
    parts["generator"] = generator
    intent = recipe.section("intent")
    if intent is not None:
        _classifier({"task": "intent", **intent}, learn, tmp / "intent", final / "intent", step, seconds)
    return parts


RERANKERS = ("in_domain", "transfer", "triples")


class InDomainOptions(TypedDict, total=False):
    """The options of ``rerank.train`` a recipe's ``reranker`` block may give."""

    depth: int
    max_select: int
    rounds: int
    folds: int
    interaction: bool
    relative_cut: bool


class TransferOptions(TypedDict, total=False):
    """The options of ``retrieval.transfer.train`` a recipe's ``reranker`` block may give (``name: transfer``)."""

    depth: int
    max_select: int
    rounds: int
    folds: int
    relative_cut: bool
    widen: bool
    aux_encoder: str  # a second encoder's features (``minilm``: all-MiniLM-L6-v2, needs the torch extra)
    prototype: bool  # the aspect-prototype columns (``transfer.PROTOTYPE_FEATURES``, read off the deployment KB)


class TriplesOptions(TypedDict, total=False):
    """The options of ``retrieval.triples.train`` a recipe's ``reranker`` block may give (``name: triples``)."""

    depth: int
    max_select: int
    rounds: int
    folds: int
    encoder: str  # a sentence encoder's columns (``e5``: multilingual-e5-small), ``triples.ENCODER_FEATURES``


def _trainer_options(where: str, options: Mapping[str, object], kinds: type) -> dict[str, object]:
    """``options`` checked against the TypedDict ``kinds`` (names and value kinds; a bool is not a number)."""
    hints = get_type_hints(kinds)
    for key, value in options.items():
        if key not in hints:
            raise RagdialError(
                f"{where}: unknown option {key!r}; known: name, path, precedent, tuned, {', '.join(hints)}"
            )
        kind = hints[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            wanted = {bool: "true or false", str: "a name"}.get(kind, "a whole number")
            raise RagdialError(f"{where}: {key} must be {wanted}")
    return dict(options)


ALWAYS = {"name": "always", "lookups": ["user_profile", "global"]}  # the detector of a recipe naming none


def _reranker(
    name: str,
    reranker: Mapping[str, object],
    retriever: HybridRetriever,
    learn: Dataset,
    folder: Path,
    step: Step,
    seconds: dict[str, float],
    seed: int,
) -> None:
    """Train the reranker into ``folder``: ``name: in_domain`` (default, ``rerank.train``), ``name: transfer``
    (``retrieval.transfer.train``, for knowledge bases never trained on), ``name: triples`` (``retrieval.triples``,
    knowledge-graph triples of a domain never trained on), or ``path: DIR``, a reranker of either kind
    trained before (``ragdial train retriever [--transfer]``), checked with ``rerank.load_reranker`` and copied.
    ``precedent: true`` wraps the trained one with the training turns as precedents (``retrieval.precedent``), voted
    by a stacker trained on refits of the same reranker without each of 4 dialog-group folds; ``tuned: true`` wraps
    it with MiniLM fine-tuned on the training turns' gold items (``retrieval.tuned``, two cross-fitted halves, each
    with a refit of the same reranker; tens of minutes on a CPU for DSTC11 val)."""
    from ragdial.retrieval import precedent, rerank, transfer, triples, tuned

    options = dict(reranker)
    kind = options.pop("name", "in_domain")
    path = options.pop("path", None)
    with_precedents = options.pop("precedent", False)
    if not isinstance(with_precedents, bool):
        raise RagdialError(f"recipe {name}: reranker.precedent must be true or false")
    if with_precedents and path is not None:
        raise RagdialError(f"recipe {name}: reranker.precedent applies to a reranker trained here, not to path")
    with_tuned = options.pop("tuned", False)
    if not isinstance(with_tuned, bool):
        raise RagdialError(f"recipe {name}: reranker.tuned must be true or false")
    if with_tuned and (path is not None or with_precedents):
        raise RagdialError(f"recipe {name}: reranker.tuned wraps a reranker trained here, without precedent or path")
    if with_precedents and retriever.encoder is None:
        raise RagdialError(
            f"recipe {name}: reranker.precedent compares turns with the index's encoder; index.encoder is null "
            "(set reranker.precedent=false to train without precedents)"
        )
    started = time.perf_counter()
    if path is not None:
        step(f"copying the reranker {path}")
        if not isinstance(path, str):
            raise RagdialError(f"recipe {name}: reranker.path must be a folder, not {path!r}")
        try:
            rerank.load_reranker(path)
            shutil.copytree(path, folder)
        except RagdialError as err:
            raise RagdialError(f"recipe {name}: reranker.path: {err}") from None
        except OSError as err:
            raise RagdialError(f"recipe {name}: reranker.path {path}: {err.strerror or err}") from None
        seconds["reranker"] = time.perf_counter() - started
        return
    if kind not in RERANKERS:
        raise RagdialError(
            f"recipe {name}: reranker.name must be one of {', '.join(RERANKERS)} (or give path), not {kind!r}"
        )
    where = f"recipe {name}: reranker ({kind})"
    kinds = {"transfer": TransferOptions, "triples": TriplesOptions}.get(kind, InDomainOptions)
    trainer_options = _trainer_options(where, options, kinds)
    seeking = sum(1 for e in learn.examples if e.needs_knowledge and e.knowledge_ids)
    step(f"training the {kind.replace('_', '-')} reranker on {seeking} knowledge-seeking turns")
    model: (
        rerank.Reranker
        | transfer.TransferReranker
        | triples.TripleReranker
        | precedent.PrecedentReranker
        | tuned.TunedReranker
    )

    def fit(examples: Sequence[Example]) -> rerank.Reranker | transfer.TransferReranker | triples.TripleReranker:
        if kind == "transfer":
            return transfer.train(retriever, examples, seed=seed, **cast(TransferOptions, trainer_options))
        if kind == "triples":  # the matcher is cross-fitted by training input (domain) when there are several
            inputs = {e.id.split("/", 1)[0] for e in examples if "/" in e.id}
            group_of = (lambda e: e.id.split("/", 1)[0]) if len(inputs) > 1 else None
            options_ = cast(TriplesOptions, trainer_options)
            return triples.train(retriever, examples, group_of=group_of, seed=seed, **options_)
        return rerank.train(retriever, examples, seed=seed, **cast(InDomainOptions, trainer_options))

    try:  # the options were checked against the trainer's TypedDict
        model = fit(learn.examples)
    except TypeError as err:  # an option the trainer does not take
        raise RagdialError(f"recipe {name}: reranker ({kind}): {err}") from None
    if with_precedents:  # the vote's stacker reads the same kind of reranker, refit without each fold
        step("keeping the training turns as precedents (voted by a stacker; 4 refits of the reranker)")
        model = precedent.train(retriever, learn.examples, model, refit=fit, seed=seed)
    if with_tuned:
        step("fine-tuning MiniLM on the gold items (2 cross-fitted halves, each with a refit of the reranker)")
        model = tuned.train(retriever, learn.examples, model, refit=fit, seed=seed)
    model.info.update({"recipe": name})
    model.save(folder)
    seconds["reranker"] = time.perf_counter() - started


def _classifier(
    block: Mapping[str, object], learn: Dataset, folder: Path, final: Path, step: Step, seconds: dict[str, float]
) -> JSONDict:
    """Train a detector / api_query / intent classifier into ``folder``; its detector spec (intent: none)."""
    from ragdial.understanding import new_classifier, training_data
    from ragdial.understanding.tasks import zero_shot_detector

    options = dict(block)
    task = options.pop("task", "detector")
    if not isinstance(task, str) or task not in DETECTORS:
        raise RagdialError(f"detector.task must be one of {', '.join(DETECTORS)}, not {task!r}")
    name = options.pop("name", DETECTORS[task][0])
    embedding = options.pop("embedding", "default")
    knowledge = options.pop("knowledge", True)
    threshold = options.pop("threshold", 0.5)
    if options:
        raise RagdialError(
            f"{task}: unknown option(s) {', '.join(options)} (name, task, embedding, knowledge, threshold)"
        )
    if not isinstance(name, str) or name not in DETECTORS[task]:
        raise RagdialError(f"{task}: name must be one of {', '.join(DETECTORS[task])}, not {name!r}")
    if embedding is not None and not isinstance(embedding, str):
        raise RagdialError(f"{task}: embedding must name encoders (use, e5, use+e5, none), not {embedding!r}")
    if not isinstance(knowledge, bool):
        raise RagdialError(f"{task}: knowledge must be true or false, not {knowledge!r}")
    if not isinstance(threshold, int | float) or isinstance(threshold, bool):
        raise RagdialError(f"{task}: threshold must be a number, not {threshold!r}")
    contexts, targets = training_data(task, learn)
    started = time.perf_counter()
    if name == "zero_shot":  # knowledge cues + act n-grams; matched against the deployment KB at run time
        embedding = "use" if embedding == "default" else embedding
        if embedding is None or embedding == "none" or "+" in embedding:
            raise RagdialError(f"detector (zero_shot): embedding must name one encoder (use, hash), not {embedding!r}")
        step(f"training the zero-shot detector on {len(contexts)} turns")
        model = zero_shot_detector(list(learn.kb), encoder=embedding, threshold=threshold)
    else:
        step(f"training the {task} classifier on {len(contexts)} turns")
        model = new_classifier(task, learn, None if embedding == "none" else embedding, knowledge, threshold)
    model.fit(contexts, targets)
    if name == "zero_shot":  # the training KB's own questions: the per-KB threshold calibration at run time needs them
        from ragdial.understanding.kb_calibration import fit_reference

        step(f"scoring the {len(learn.kb)} training knowledge items' own questions for the per-KB calibration")
        fit_reference(model, list(learn.kb))
    model.save(folder)
    seconds[task] = time.perf_counter() - started
    if task == "api_query":
        return {"name": "api_query", "model": str(final)}
    return {"name": name, "model": str(final), "threshold": threshold}
