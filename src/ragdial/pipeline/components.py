"""The registries of pipeline components and how a ``SystemConfig`` becomes a ``DialogSystem``.

Every factory takes a ``BuildContext`` (the knowledge source, the language, the config) and its parameters from the
config. Components from other parts of ragdial are registered by import path, so they are imported only when used.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ragdial.errors import RagdialError
from ragdial.generation.base import Generator
from ragdial.pipeline.config import ComponentSpec, SystemConfig
from ragdial.pipeline.decision import LOOKUPS, AlwaysRetrieve, Detector
from ragdial.pipeline.knowledge import KnowledgeSource
from ragdial.pipeline.registry import ConfigError, Registry
from ragdial.retrieval.base import Retriever


@dataclass(frozen=True)
class BuildContext:
    """What a component factory may use: the knowledge (KB + training dialogs), the language, the whole config."""

    knowledge: KnowledgeSource
    language: str
    config: SystemConfig


KNOWLEDGE: Registry[KnowledgeSource] = Registry("knowledge source")
DETECTORS: Registry[Detector] = Registry("detector")
RETRIEVERS: Registry[Retriever] = Registry("retriever")
GENERATORS: Registry[Generator] = Registry("generator")


# ---- knowledge sources: factory(language, **params) -> KnowledgeSource


def demo_knowledge(language: str) -> KnowledgeSource:
    """The bundled demo knowledge base (a fictional carrier: products, FAQ, user profiles)."""
    from ragdial.datasets import mobilecs2

    return KnowledgeSource.of(mobilecs2.load_demo(language))


def dataset_knowledge(
    language: str, format: str, path: str, split: str | None = None, **options: Any
) -> KnowledgeSource:
    """Any dataset ragdial reads (``ragdial.datasets.load``), e.g. a MobileCS2 dialogs file."""
    from ragdial import datasets

    return KnowledgeSource.of(datasets.load(format, path, split, **options))


KNOWLEDGE.register("demo", demo_knowledge, "the bundled demo knowledge base")
KNOWLEDGE.register("dataset", dataset_knowledge, "a dataset file: {name: dataset, format: F, path: P}")


# ---- detectors: factory(ctx, **params) -> Detector


def always(ctx: BuildContext, lookups: list[str] | None = None) -> Detector:
    """Every turn looks knowledge up (both the user profile and the global knowledge unless ``lookups`` says)."""
    chosen = tuple(lookups or LOOKUPS)
    if not set(chosen) <= set(LOOKUPS):
        raise ConfigError(f"detector 'always': lookups must be among {', '.join(LOOKUPS)}, got {lookups!r}")
    return AlwaysRetrieve(chosen)


DETECTORS.register("always", always, "no model: every turn looks up the user profile and the global knowledge")


def _classifier(ctx: BuildContext, task: str, model: str | None) -> Any:
    """A saved understanding model, or one trained now on the knowledge source's labelled turns."""
    from ragdial.understanding.model import TextClassifier
    from ragdial.understanding.tasks import new_classifier, training_data

    if model:
        return TextClassifier.load(model)
    dataset = ctx.knowledge.dataset
    contexts, targets = training_data(task, dataset)  # no labelled turns: a RagdialError, "auto" moves on
    classifier = new_classifier(task, dataset)
    classifier.fit(contexts, targets)
    return classifier


def api_query(ctx: BuildContext, model: str | None = None) -> Detector:
    """MobileCS2 look-up prediction → none / FAQ / user profile / products (a saved model or trained on the
    knowledge source's dialogs)."""
    from ragdial.pipeline.detectors import ApiQueryDetector

    return ApiQueryDetector(_classifier(ctx, "api_query", model))


def knowledge_seeking(ctx: BuildContext, model: str | None = None, threshold: float = 0.5) -> Detector:
    """Knowledge-seeking turn detection (DSTC task 1); both look-ups when it fires."""
    from ragdial.pipeline.detectors import KnowledgeSeekingDetector

    return KnowledgeSeekingDetector(_classifier(ctx, "detector", model), threshold)


DETECTORS.register("api_query", api_query, "predicted MobileCS2 api_query decides whether and where to look up")
DETECTORS.register("knowledge_seeking", knowledge_seeking, "a knowledge-seeking turn detector; both look-ups")


# ---- retrievers: factory(ctx, **params) -> Retriever (ragdial.retrieval; params are RetrieverConfig fields)


def _hybrid_retriever(ctx: BuildContext, defaults: dict[str, Any], params: dict[str, Any]) -> Retriever:
    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.hybrid import HybridRetriever

    params = dict(params)
    reranker = params.pop("reranker", None)  # a folder written by `ragdial train retriever`
    if reranker is not None:
        from ragdial.retrieval.rerank import Reranker

        reranker = Reranker.load(reranker)
    config = RetrieverConfig.from_dict({**defaults, **params})
    return HybridRetriever(ctx.knowledge.dataset.kb, config, reranker=reranker)


def bm25(ctx: BuildContext, **params: Any) -> Retriever:
    """BM25 over the shared tokens (no dense encoder), query from recent turns."""
    return _hybrid_retriever(ctx, {"fusion": "bm25", "encoder": None}, params)


def hybrid(ctx: BuildContext, **params: Any) -> Retriever:
    """BM25 + dense (USE multilingual) fused by reciprocal rank."""
    return _hybrid_retriever(ctx, {"fusion": "rrf"}, params)


RETRIEVERS.register("bm25", bm25, "BM25 (ragdial.retrieval.HybridRetriever without a dense encoder)")
RETRIEVERS.register("hybrid", hybrid, "BM25 + dense encoder, reciprocal-rank fusion")


# ---- generators: factory(ctx, **params) -> Generator (ragdial.generation)


def template(ctx: BuildContext, model: str | None = None, max_items: int = 3) -> Generator:
    """The template generator: a saved model, or one learned from the knowledge source's dialogs."""
    from ragdial.generation.template import TemplateGenerator

    if model:
        return TemplateGenerator.load(model, max_items=max_items)
    dataset = ctx.knowledge.dataset
    return TemplateGenerator.train(dataset.examples, dataset.kb, ctx.language, max_items=max_items)


def llama(ctx: BuildContext, **params: Any) -> Generator:
    """A GGUF model through llama.cpp (the packaged offline model unless ``model`` names one); loaded now."""
    from ragdial.generation.llama import LlamaCppGenerator

    generator = LlamaCppGenerator(**params)
    generator.warm_up()
    return generator


def openai(ctx: BuildContext, **params: Any) -> Generator:
    """Any OpenAI-compatible server (``base_url``, ``model``, ``api_key``)."""
    from ragdial.generation import backends

    return backends.create("openai", **params)


GENERATORS.register("template", template, "learned templates filled with knowledge verbatim (instant)")
GENERATORS.register("llama", llama, "a GGUF model through llama.cpp (offline packaged Qwen2.5-0.5B by default)")
GENERATORS.register("openai", openai, "an OpenAI-compatible server (vLLM, llama.cpp server, ...)")


# ---- "auto": the best component installed here

AUTO: dict[str, tuple[str, ...]] = {
    "detector": ("always",),
    "retriever": ("hybrid", "bm25"),
    "generator": ("llama", "template"),
}
SHARED_GENERATORS = ("llama", "openai")  # language-independent: one instance serves every language


def _auto(ctx: BuildContext) -> Any:
    raise ConfigError("'auto' is resolved by build_system, not built directly")


RETRIEVERS.register("auto", _auto, f"the first that builds here of {', '.join(AUTO['retriever'])}")
GENERATORS.register("auto", _auto, f"the first that builds here of {', '.join(AUTO['generator'])}")


# ---- building


class ComponentCache:
    """Builds each distinct component once: a generator (a loaded LLM) is shared by the systems of all languages."""

    def __init__(self) -> None:
        self._built: dict[str, Any] = {}

    def get(self, kind: str, key: Any, build: Any) -> Any:
        token = f"{kind}:{json.dumps(key, sort_keys=True, default=str, ensure_ascii=False)}"
        if token not in self._built:
            self._built[token] = build()
        return self._built[token]


def _component(
    kind: str, registry: Registry[Any], spec: ComponentSpec, ctx: BuildContext, cache: ComponentCache
) -> Any:
    """Build (once) the component ``spec`` names; ``auto`` takes the first of its candidates that builds here."""
    names = [n for n in AUTO[kind] if n in registry.names()] if spec.name == "auto" else [spec.name]
    problems = []
    for name in names:
        shared = kind == "generator" and name in SHARED_GENERATORS
        key = [name, spec.params, None if shared else ctx.language]
        try:
            return cache.get(kind, key, lambda name=name: registry.build(name, ctx, **spec.params))
        except ImportError as err:  # the component's module or its extra is not installed here
            if spec.name != "auto":
                raise ConfigError(f"{registry.kind} {name!r} is not installed here: {err}") from None
            problems.append(f"{name}: {err}")
        except RagdialError as err:  # e.g. no model file: "auto" tries the next
            if spec.name != "auto":
                raise
            problems.append(f"{name}: {err}")
    tried = ", ".join(AUTO[kind])
    raise ConfigError(
        f"no {registry.kind} can be built here (tried {tried}): {'; '.join(problems) or 'none installed'}"
    )


def build_system(
    config: SystemConfig,
    language: str,
    cache: ComponentCache | None = None,
    knowledge: KnowledgeSource | None = None,
) -> Any:
    """Build the ``DialogSystem`` of ``language`` from ``config`` (over ``knowledge`` instead of the config's
    knowledge source when given, e.g. a benchmark split)."""
    from ragdial.pipeline.system import DialogSystem

    if language not in config.languages:
        raise ConfigError(f"language {language!r} is not configured (languages: {', '.join(config.languages)})")
    cache = cache or ComponentCache()
    if knowledge is None:
        ks = config.knowledge
        params = {"language": language, **ks.params}
        knowledge = cache.get("knowledge", [ks.name, params], lambda: KNOWLEDGE.build(ks.name, **params))
    ctx = BuildContext(knowledge, language, config)
    detector = _component("detector", DETECTORS, config.detector, ctx, cache)
    retriever = _component("retriever", RETRIEVERS, config.retriever, ctx, cache)
    generator = _component("generator", GENERATORS, config.generator, ctx, cache)
    task = (
        cache.get("task", [config.task_db, config.task_today], lambda: _task_branch(config)) if config.task_db else None
    )
    return DialogSystem(config, language, knowledge, detector, retriever, generator, task=task)


def _task_branch(config: SystemConfig) -> Any:
    """The flight/train/hotel task branch over ``config.task_db`` (one per process, shared by the languages)."""
    import datetime as dt

    from ragdial.task import TaskBranch, TravelDB
    from ragdial.task.db import ensure_travel_db

    today = None
    if config.task_today:
        try:
            today = dt.date.fromisoformat(config.task_today)
        except ValueError as err:
            raise ConfigError(f"config, field 'task_today': {config.task_today!r} is not a date YYYY-MM-DD") from err
    return TaskBranch(TravelDB(ensure_travel_db(config.task_db)), today=today)


def build_systems(config: SystemConfig) -> dict[str, Any]:
    """One ``DialogSystem`` per configured language, sharing what can be shared."""
    cache = ComponentCache()
    return {language: build_system(config, language, cache) for language in config.languages}
