"""How a ``SystemConfig`` becomes a ``DialogSystem``: the knowledge source, then each component from its kind's
registry (``ragdial.understanding.DETECTORS``, ``ragdial.retrieval.RETRIEVERS``, ``ragdial.generation.GENERATORS``,
``ragdial.generation.exemplars.EXEMPLARS``, ``ragdial.task.TASKS``). Factories only load; ``auto`` takes the first
candidate that builds here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Executor
from typing import TYPE_CHECKING, TypeVar, Unpack, cast

from ragdial.components import BuildContext, ConfigError, Registry, close, warm_up
from ragdial.errors import RagdialError
from ragdial.generation.exemplars import EXEMPLARS, Exemplars
from ragdial.generation.registry import GENERATORS, SHARED
from ragdial.jsontypes import JSONValue
from ragdial.pipeline.config import ComponentSpec, SystemConfig
from ragdial.pipeline.knowledge import KnowledgeSource
from ragdial.pipeline.system import DialogSystem
from ragdial.retrieval.registry import RETRIEVERS
from ragdial.understanding.registry import DETECTORS

if TYPE_CHECKING:
    from ragdial.datasets import FileOptions
    from ragdial.task.manager import TaskBranch

T = TypeVar("T")

__all__ = [
    "DETECTORS",
    "EXEMPLARS",
    "GENERATORS",
    "KNOWLEDGE",
    "RETRIEVERS",
    "BuildContext",
    "ComponentCache",
    "build_system",
    "build_systems",
]

KNOWLEDGE: Registry[KnowledgeSource] = Registry("knowledge source")


# ---- knowledge sources: factory(language, **params) -> KnowledgeSource


def demo_knowledge(language: str) -> KnowledgeSource:
    """The bundled demo knowledge base (a fictional carrier: products, FAQ, user profiles)."""
    from ragdial.datasets import mobilecs2

    return KnowledgeSource.of(mobilecs2.load_demo(language))


def dataset_knowledge(
    language: str, format: str, path: str, split: str | None = None, **options: Unpack[FileOptions]
) -> KnowledgeSource:
    """Any dataset ragdial reads (``ragdial.datasets.load``), e.g. a MobileCS2 dialogs file."""
    from ragdial import datasets

    return KnowledgeSource.of(datasets.load(format, path, split, **options))


def index_knowledge(language: str, path: str) -> KnowledgeSource:
    """The knowledge items of a saved index directory (``ragdial index build``, a trained recipe's ``index/``)."""
    from ragdial.retrieval.index import read_items
    from ragdial.schema import Dataset, KnowledgeBase

    kb = KnowledgeBase(read_items(path))
    return KnowledgeSource.of(Dataset("index", "index", language, kb, [], [], str(path)))


KNOWLEDGE.register("demo", demo_knowledge, "the bundled demo knowledge base")
KNOWLEDGE.register("dataset", dataset_knowledge, "a dataset file: {name: dataset, format: F, path: P}")
KNOWLEDGE.register("index", index_knowledge, "the items of a saved index directory: {name: index, path: DIR}")


class ComponentCache:
    """Builds each distinct component once: a generator (a loaded LLM) is shared by the systems of all languages.
    With ``warm`` (an executor), each generator starts warming there (``warm_up``: a local LLM loads) as soon as it
    is built, while the other components build. ``close()`` closes every component built, once."""

    def __init__(self, warm: Executor | None = None) -> None:
        self._built: dict[str, object] = {}
        self._warm = warm

    def get(self, kind: str, key: JSONValue, build: Callable[[], T]) -> T:
        token = f"{kind}:{json.dumps(key, sort_keys=True, default=str, ensure_ascii=False)}"
        if token not in self._built:
            self._built[token] = built = build()
            if kind == "generator" and self._warm is not None:
                self._warm.submit(warm_up, built)  # its errors come again from the warm-up that waits for it
        return cast(T, self._built[token])  # the token names the kind and spec: what build() made for it

    def close(self) -> None:
        for component in self._built.values():
            close(component)
        self._built.clear()


def _component(kind: str, registry: Registry[T], spec: ComponentSpec, ctx: BuildContext, cache: ComponentCache) -> T:
    """Build (once) the component ``spec`` names; ``auto`` takes the first of its candidates that builds here."""
    names = list(registry.auto) if spec.name == "auto" else [spec.name]
    problems = []
    for name in names:
        shared = kind == "generator" and name in SHARED
        key = [name, spec.params, None if shared else ctx.language]
        try:
            return cache.get(kind, key, lambda name=name: registry.build(name, ctx, **spec.params))  # type: ignore[misc]
        except ImportError as err:  # the component's module or its extra is not installed here
            if spec.name != "auto":
                raise ConfigError(f"{registry.kind} {name!r} is not installed here: {err}") from None
            problems.append(f"{name}: {err}")
        except RagdialError as err:  # e.g. no model file: "auto" tries the next
            if spec.name != "auto":
                raise
            problems.append(f"{name}: {err}")
    tried = ", ".join(registry.auto)
    raise ConfigError(
        f"no {registry.kind} can be built here (tried {tried}): {'; '.join(problems) or 'none installed'}"
    )


def build_system(
    config: SystemConfig,
    language: str,
    cache: ComponentCache | None = None,
    knowledge: KnowledgeSource | None = None,
) -> DialogSystem:
    """Build the ``DialogSystem`` of ``language`` from ``config`` (over ``knowledge`` instead of the config's
    knowledge source when given, e.g. a benchmark split)."""
    if language not in config.languages:
        raise ConfigError(f"language {language!r} is not configured (languages: {', '.join(config.languages)})")
    cache = cache or ComponentCache()
    if knowledge is None:
        ks = config.knowledge
        params = {"language": language, **ks.params}
        knowledge = cache.get("knowledge", [ks.name, params], lambda: KNOWLEDGE.build(ks.name, **params))
    ctx = BuildContext(knowledge.dataset, language)
    detector = _component("detector", DETECTORS, config.detector, ctx, cache)
    generator = _component("generator", GENERATORS, config.generator, ctx, cache)  # first: it may start warming
    retriever = _component("retriever", RETRIEVERS, config.retriever, ctx, cache)
    exemplars: Exemplars | None = None
    if config.exemplars is not None:
        spec = config.exemplars
        key: JSONValue = [spec.name, spec.params, ctx.language]
        exemplars = cache.get("exemplars", key, lambda: EXEMPLARS.build(spec.name, ctx, **spec.params))
    task = None
    if config.task is not None:  # one per process, shared by the languages
        spec = config.task
        task = cache.get("task", [spec.name, spec.params], lambda: _task_branch(spec, ctx))
    return DialogSystem(config, language, knowledge, detector, retriever, generator, task=task, exemplars=exemplars)


def _task_branch(spec: ComponentSpec, ctx: BuildContext) -> TaskBranch:
    """The task branch ``spec`` names (``ragdial.task.TASKS``, imported only when a config has one)."""
    from ragdial.task.registry import TASKS

    return TASKS.build(spec.name, ctx, **spec.params)


def prepare_milvus(
    config: SystemConfig,
    rebuild: bool = False,
    processes: int = 1,
    progress: Callable[[str, int], Callable[[int], None]] | None = None,
) -> dict[str, int]:
    """Index the knowledge of every configured language into the Milvus collections ``config``'s retriever names
    (``retriever: {name: milvus, …}``), once, before several processes open them (``build: missing`` in each worker
    would race); returns the rows per collection. A milvus-lite file can be opened by one process only, so
    ``processes`` > 1 with a file URI is refused. ``progress(language, items)`` gives a callback told of each batch
    indexed."""
    from ragdial.retrieval.milvus import MilvusRetriever

    spec = config.retriever
    if spec.name != "milvus":
        raise ConfigError(f"the retriever is {spec.name!r}, not milvus")
    uri = str(spec.params.get("uri", ""))
    if processes > 1 and not uri.startswith(("http://", "https://", "tcp://", "unix:")):
        raise ConfigError(
            f"retriever 'milvus': {uri} is a milvus-lite file, which one process at a time may open; "
            "serve it with --workers 1, or use a Milvus server (uri: http://host:19530) for several workers"
        )
    rows = {}
    ks = config.knowledge
    for language in config.languages:
        knowledge = KNOWLEDGE.build(ks.name, **{"language": language, **ks.params})
        params: dict[str, object] = {
            **spec.params,
            "build": "always" if rebuild else spec.params.get("build", "missing"),
        }
        if progress is not None:
            params["progress"] = progress(language, len(knowledge.dataset.kb))
        retriever = RETRIEVERS.build("milvus", BuildContext(knowledge.dataset, language), **params)
        if not isinstance(retriever, MilvusRetriever):
            raise ConfigError(f"retriever 'milvus' built a {type(retriever).__name__}")
        rows[retriever.collection] = retriever.count()
        retriever.close()
    return rows


def build_systems(config: SystemConfig, warm: Executor | None = None) -> dict[str, DialogSystem]:
    """One ``DialogSystem`` per configured language, sharing what can be shared; with ``warm``, each generator
    starts warming there as soon as it is built (``ComponentCache``)."""
    cache = ComponentCache(warm)
    return {language: build_system(config, language, cache) for language in config.languages}
