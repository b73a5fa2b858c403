"""What the HTTP app serves: one dialog system per language, the session store, and the service settings."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import time
from collections.abc import Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

from ragdial.components import close
from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict
from ragdial.pipeline.components import build_systems
from ragdial.pipeline.config import SystemConfig
from ragdial.pipeline.system import DialogSystem, last_reply
from ragdial.serve.admission import QueueLimits
from ragdial.serve.stores import SessionStore, open_store

SETTINGS_ENV = "RAGDIAL_SERVICE_SETTINGS"


@dataclass
class ServiceSettings:
    """How the service runs: the system config, where sessions are stored (a SQLite file or a ``postgresql://``
    URI), the optional API key."""

    config: SystemConfig
    db_path: str
    api_key: str | None = None
    max_body_bytes: int = 1_048_576
    model: str = "ragdial"
    ratings_path: str | None = None  # mount the human rating pages (/rating) storing into this SQLite file
    queue: QueueLimits = field(default_factory=QueueLimits)  # turns at once, waiting line, waits, time limit
    run_dir: str | None = None  # a folder this machine's workers share (running turns, for the stop endpoint)

    def to_json(self) -> str:
        return json.dumps(
            {
                "config": self.config.to_data(),
                "db_path": self.db_path,
                "api_key": self.api_key,
                "max_body_bytes": self.max_body_bytes,
                "model": self.model,
                "ratings_path": self.ratings_path,
                "queue": asdict(self.queue),
                "run_dir": self.run_dir,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str) -> ServiceSettings:
        data = json.loads(text)
        return cls(
            SystemConfig.from_data(data["config"], "service settings"),
            data["db_path"],
            data.get("api_key"),
            int(data.get("max_body_bytes", 1_048_576)),
            data.get("model", "ragdial"),
            data.get("ratings_path"),
            QueueLimits(**data.get("queue", {})),
            data.get("run_dir"),
        )


def _warm_generators(systems: list[DialogSystem]) -> None:
    for system in systems:
        system.warm_generator()


WEB_MODULES = ("uvicorn", "ragdial.serve.app")  # what serving HTTP imports after the warm-up (FastAPI, pydantic)


def warm_up(
    systems: dict[str, DialogSystem], pool: Executor | None = None, meanwhile: Sequence[str] = ()
) -> dict[str, float]:
    """Load every component (models, indexes, encoders) and answer one short turn per language, so the first
    user's turn is as fast as any other; the milliseconds each language's components and turn took. The generators
    load and prime in ``pool`` (one thread; a new one without it) while the other components warm here: a local LLM
    loads and decodes outside Python's lock. The modules named in ``meanwhile`` are imported here after the other
    components, while the generators may still be loading (the main thread would only wait for them)."""
    took = {}
    with contextlib.ExitStack() as stack:
        if pool is None:
            pool = stack.enter_context(ThreadPoolExecutor(max_workers=1, thread_name_prefix="warm-generator"))
        generators = pool.submit(_warm_generators, list(systems.values()))
        for language, system in systems.items():
            start = time.perf_counter()
            system.warm_components()
            took[language] = (time.perf_counter() - start) * 1000.0
        for module in meanwhile:
            importlib.import_module(module)
        generators.result()
    for language, system in systems.items():
        start = time.perf_counter()
        text = "你好" if language == "zh" else "hello"
        try:
            last_reply(system.stream_context(system.context_for([], text), max_tokens=2))
        except RagdialError:
            raise
        except Exception as err:
            raise RagdialError(
                f"warming up {language!r}: a first short turn failed: {type(err).__name__}: {err}"
            ) from err
        took[language] = round(took[language] + (time.perf_counter() - start) * 1000.0, 1)
    return took


class Service:
    """The dialog systems (one per language) and the session store the HTTP app serves."""

    def __init__(
        self,
        settings: ServiceSettings,
        systems: dict[str, DialogSystem] | None = None,
        store: SessionStore | None = None,
    ) -> None:
        self.settings = settings
        self.store = store or open_store(settings.db_path)  # first: an unreachable database fails before indexing
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="warm-generator") as pool:
            # a local LLM starts loading in the pool as soon as it is built, while the retrievers build here
            self.systems = systems if systems is not None else build_systems(settings.config, warm=pool)
            if not self.systems:
                raise RagdialError("the service needs at least one language")
            # before the app exists (/healthz never answers cold); the web modules load while the GGUF may still
            self.warmed_ms = warm_up(self.systems, pool, WEB_MODULES)

    @classmethod
    def from_env(cls) -> Service:
        text = os.environ.get(SETTINGS_ENV)
        if not text:
            raise RagdialError(f"{SETTINGS_ENV} is not set (start the service with 'ragdial serve')")
        return cls(ServiceSettings.from_json(text))

    def close(self) -> None:
        """Close every component once (the systems of several languages share a generator)."""
        seen: set[int] = set()
        for system in self.systems.values():
            for component in system.components():
                if id(component) not in seen:
                    seen.add(id(component))
                    close(component)

    @property
    def default_language(self) -> str:
        return next(iter(self.systems))

    def system(self, language: str) -> DialogSystem:
        return self.systems[language]

    def health(self) -> JSONDict:
        sessions = self.store.health()
        return {
            "status": "ok",
            "languages": list(self.systems),
            "components": {
                language: {
                    "detector": type(system.detector).__name__,
                    "retriever": type(system.retriever).__name__,
                    "generator": type(system.generator).__name__,
                    "knowledge_items": len(system.knowledge.dataset.kb),
                    "profiles": len(system.users),
                }
                for language, system in self.systems.items()
            },
            "sessions_db": sessions.get("path") or sessions.get("url"),
            "journal_mode": sessions.get("journal_mode"),
            "sessions": sessions,
            "auth": bool(self.settings.api_key),
        }
