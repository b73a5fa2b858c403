"""The dialog system's configuration: plain data, read from and written to YAML.

```yaml
languages: [zh, en]            # one system per language; a session picks one
knowledge: {name: demo}        # the bundled demo KB; or {name: dataset, format: mobilecs2, path: ...}
detector: {name: always}       # does a turn need knowledge, and which look-up (user profile / global)
retriever: {name: auto, query: last_user}   # hybrid where the encoder is installed, else BM25
generator: {name: auto}        # the offline GGUF through llama.cpp where installed, else templates
retrieve_k: 20                 # items asked of the retriever
top_k: 3                       # items given to the generator and cited
speak_weight: null             # plain path: state a fact only when p·(1 + w·q) ≥ 1 (p detector, q reranker top)
history_turns: 10              # context turns given to the components
grounded: true                 # answer policy, conversational retrieval, verified grounding (ragdial.pipeline.grounded)
min_relevance: 0.1             # the relevance cut: items covering less of the query are not cited
exemplars: null                # in-context examples for the generator: {name: dataset, format: F, path: P, k: 2}
task: null                     # the task branch: {name: travel, db: PATH or sqlite:/// URL, today: YYYY-MM-DD}
```
A component is a name (``bm25``) or a mapping with ``name`` and its parameters (``{name: hybrid, alpha: 0.5}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TypeVar

import yaml

from ragdial.components import ConfigError
from ragdial.jsontypes import JSONDict


@dataclass(frozen=True)
class ComponentSpec:
    """A component by name with its parameters."""

    name: str
    params: JSONDict = field(default_factory=dict)

    @classmethod
    def parse(cls, value: object, where: str) -> ComponentSpec:
        if isinstance(value, ComponentSpec):
            return value
        if isinstance(value, str) and value:
            return cls(value)
        if isinstance(value, Mapping):
            params = dict(value)
            name = params.pop("name", None)
            if not isinstance(name, str) or not name:
                raise ConfigError(f"{where}: a component needs a 'name' (a registered name or 'module:factory')")
            return cls(name, params)
        raise ConfigError(f"{where}: expected a component name or a mapping with 'name', got {value!r}")

    def to_data(self) -> JSONDict:
        return {"name": self.name, **self.params}


_COMPONENTS = ("knowledge", "detector", "retriever", "generator")
_OPTIONAL = ("exemplars", "task")  # components that may be off (null)
# keys of older configs and where their setting lives now
_MOVED = {
    "task_db": "task: {name: travel, db: ...}",
    "task_today": "task: {name: travel, today: ...}",
}


@dataclass
class SystemConfig:
    """Everything that decides how the dialog system answers."""

    languages: list[str] = field(default_factory=lambda: ["zh", "en"])
    knowledge: ComponentSpec = field(default_factory=lambda: ComponentSpec("demo"))
    detector: ComponentSpec = field(default_factory=lambda: ComponentSpec("always"))
    retriever: ComponentSpec = field(default_factory=lambda: ComponentSpec("auto", {"query": "last_user"}))
    generator: ComponentSpec = field(default_factory=lambda: ComponentSpec("auto"))
    retrieve_k: int = 20
    top_k: int = 3
    min_score: float | None = None
    # the plain path's speak rule (``KnowledgeBranch.speak``): cite only when the detector's probability p and the
    # reranker's top probability q give p * (1 + speak_weight * q) >= 1; None = the detector alone decides
    speak_weight: float | None = None
    history_turns: int = 10
    max_tokens: int = 256
    temperature: float = 0.0
    seed: int = 0
    max_message_chars: int = 4000
    grounded: bool = True  # answer policy, rewrite + routing + relevance cut, verified grounding with fallback
    min_relevance: float = 0.1  # the relevance cut of the grounded path (idf-weighted share of the query covered)
    # the nearest labelled examples shown to the generator in context (``ragdial.generation.exemplars.EXEMPLARS``)
    exemplars: ComponentSpec | None = None
    # the task branch (flight/train/hotel booking, ``ragdial.task.TASKS``), claiming travel turns first; None = off
    task: ComponentSpec | None = None

    @classmethod
    def from_data(cls, data: object, where: str = "config") -> SystemConfig:
        """Build from plain data (a parsed YAML/JSON mapping); unknown keys and wrong types are errors."""
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where}: expected a mapping at the top level, got {type(data).__name__}")
        known = {f.name: f for f in fields(cls)}
        moved = sorted(set(data) & set(_MOVED))
        if moved:
            where_now = "; ".join(f"{key!r} is now {_MOVED[key]}" for key in moved)
            raise ConfigError(f"{where}: field(s) {', '.join(moved)} moved into the task block: {where_now}")
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ConfigError(f"{where}: unknown field(s) {', '.join(unknown)}; known: {', '.join(known)}")
        values: dict[str, object] = {}
        for key, value in data.items():
            if key in _COMPONENTS:
                values[key] = ComponentSpec.parse(value, f"{where}, field {key!r}")
            elif key in _OPTIONAL:
                values[key] = None if value is None else ComponentSpec.parse(value, f"{where}, field {key!r}")
            elif key == "languages":
                langs = [value] if isinstance(value, str) else value
                if not isinstance(langs, list) or not langs or not all(lang in ("zh", "en") for lang in langs):
                    raise ConfigError(f"{where}, field 'languages': expected a list of 'zh'/'en', got {value!r}")
                values[key] = list(dict.fromkeys(langs))
            elif key == "grounded":
                if not isinstance(value, bool):
                    raise ConfigError(f"{where}, field 'grounded': expected true or false, got {value!r}")
                values[key] = value
            elif key == "min_relevance":
                values[key] = _number(value, float, where, key)
            elif key in ("min_score", "speak_weight"):
                values[key] = None if value is None else _number(value, float, where, key)
            elif key == "temperature":
                values[key] = _number(value, float, where, key)
            else:
                values[key] = _number(value, int, where, key)
        config = cls()
        for key, value in values.items():  # each value checked above
            setattr(config, key, value)
        config.check(where)
        return config

    def check(self, where: str = "config") -> None:
        for key in ("retrieve_k", "top_k", "history_turns", "max_tokens", "max_message_chars"):
            if getattr(self, key) < 1:
                raise ConfigError(f"{where}, field {key!r}: must be at least 1")
        if self.speak_weight is not None and self.speak_weight < 0:
            raise ConfigError(f"{where}, field 'speak_weight': must be at least 0, got {self.speak_weight}")
        if self.top_k > self.retrieve_k:
            raise ConfigError(f"{where}, field 'top_k': {self.top_k} is more than retrieve_k {self.retrieve_k}")

    def to_data(self) -> JSONDict:
        data = asdict(self)
        for key in (*_COMPONENTS, *_OPTIONAL):
            spec = getattr(self, key)
            data[key] = None if spec is None else spec.to_data()
        return data

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_data(), allow_unicode=True, sort_keys=False)


N = TypeVar("N", int, float)


def _number(value: object, kind: type[N], where: str, key: str) -> N:
    if isinstance(value, bool) or not isinstance(value, int | float) or (kind is int and not isinstance(value, int)):
        raise ConfigError(f"{where}, field {key!r}: expected {kind.__name__}, got {value!r}")
    return kind(value)


def load_config(path: str | Path | None = None) -> SystemConfig:
    """Read a YAML config; ``None`` gives the default (the bundled demo knowledge base)."""
    if path is None:
        return SystemConfig()
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the config: {err.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    return SystemConfig.from_data(data, str(path))
