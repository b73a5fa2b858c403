"""Recipes: one shipped YAML per challenge naming the data to train on, every component and its options, the
knowledge the system answers from and the official outputs. ``ragdial train RECIPE`` trains what a recipe needs
into a system folder (``ragdial.recipes.training``); ``ragdial run RECIPE TEST --system DIR`` writes the official
submission from it (``ragdial.recipes.running``).

A recipe (``src/ragdial/recipes/<name>.yaml``; every key can be overridden with ``--set KEY=VALUE``)::

    name: huawei
    benchmark: huawei           # the ``ragdial run`` benchmark: the test data's format, challenge, official files
    train: [huawei:huawei_kdsd/valid.json, kdconv:kdconv/film]   # FORMAT:PATH[@SPLIT], under $RAGDIAL_DATA
    exclude_fold: null          # leave this dev fold of the training data out (to score it held out)
    knowledge_data: [kdconv:kdconv/film]        # files whose knowledge (not dialogs) joins the knowledge base
    knowledge: train            # train: the training files' knowledge; test: the test data's own
    test: {options: {}}         # loader options of the test data (DSTC9: {knowledge: knowledge_eval.json})
    index: {query: recent, encoder: use}         # RetrieverConfig fields; null: no index
    detector: {task: detector, embedding: use}   # detector (knowledge-seeking) or api_query; null: always look up
    #   name: zero_shot  (issue 20: KB match + act cues, matched against the test KB at run time; one encoder)
    reranker: {depth: 100, rounds: 300}          # ``rerank.train`` options; null: none
    #   name: transfer (``retrieval.transfer.train``, for KBs never trained on); path: DIR (a trained one, copied)
    generator: {name: template}                  # template: learned from the training replies; else as given
    intent: null                                 # SMP2017: {embedding: use+e5}
    system: {top_k: 3, grounded: false}          # SystemConfig fields
    outputs: [result.json]
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import cast

import yaml

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict, JSONObject, JSONValue
from ragdial.paths import data_root

KEYS = (
    "name",
    "title",
    "benchmark",
    "language",
    "train",
    "exclude_fold",
    "knowledge_data",
    "knowledge",
    "test",
    "index",
    "detector",
    "reranker",
    "generator",
    "intent",
    "system",
    "outputs",
)
TRAINED = (
    "train",
    "exclude_fold",
    "knowledge_data",
    "knowledge",
    "index",
    "detector",
    "reranker",
    "intent",
)  # fixed once trained


def names() -> list[str]:
    """The shipped recipes."""
    folder = resources.files(__name__)
    return sorted(p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml"))


@dataclass(frozen=True)
class DataSpec:
    """One training (or test) input: its format, path and split."""

    format: str
    path: Path
    split: str | None = None

    @classmethod
    def parse(cls, text: str, default_format: str) -> DataSpec:
        """``[FORMAT:]PATH[@SPLIT]``; a relative PATH that does not exist here is taken under ``$RAGDIAL_DATA``."""
        from ragdial import datasets

        fmt, _, rest = text.partition(":")
        if not rest or fmt not in datasets.FORMATS:
            fmt, rest = default_format, text
        path_text, _, split = rest.partition("@")
        path = Path(path_text)
        if not path.is_absolute() and not path.exists() and (data_root() / path).exists():
            path = data_root() / path
        return cls(fmt, path, split or None)

    def __str__(self) -> str:
        return f"{self.format}:{self.path}" + (f"@{self.split}" if self.split else "")


@dataclass
class Recipe:
    """A parsed recipe (plain data in ``data``, checked)."""

    data: JSONDict

    @property
    def name(self) -> str:
        return str(self.data["name"])

    @property
    def benchmark(self) -> str:
        return str(self.data["benchmark"])

    def get(self, key: str) -> JSONValue:
        return self.data.get(key)

    def section(self, key: str) -> JSONObject | None:
        """A mapping section (``test``, ``index``, ``detector``, ``reranker``, ``generator``, ``intent``,
        ``system``): a mapping, or None where it is null or absent (``check`` allows nothing else)."""
        value = self.data.get(key)
        if value is None or isinstance(value, Mapping):
            return value
        raise RagdialError(f"recipe {self.name}: {key!r} must be a mapping or null, not {value!r}")

    def entries(self, key: str) -> list[JSONValue]:
        """A list (``train``, ``knowledge_data``, ``outputs``): empty where it is null or absent."""
        value = self.data.get(key) or []
        if isinstance(value, list):
            return value
        raise RagdialError(f"recipe {self.name}: {key!r} must be a list, not {value!r}")

    @property
    def exclude_fold(self) -> int | None:
        """The dev fold left out of training (``check`` allows an int 0-4 or null)."""
        fold = self.data.get("exclude_fold")
        if fold is None or isinstance(fold, int):
            return fold
        raise RagdialError(f"recipe {self.name}: exclude_fold must be 0-4 or null, not {fold!r}")

    def format(self) -> str:
        """The format of the test data (and the default of the training data)."""
        from ragdial import challenges

        if self.benchmark == "smp2017":
            return "smp2017"
        return challenges.benchmark(self.benchmark).format

    def train_specs(self, given: Iterable[str] = ()) -> list[DataSpec]:
        """The training inputs: ``given`` (command line) instead of the recipe's own when any."""
        items = list(given) or self.entries("train")
        if not items:
            raise RagdialError(f"recipe {self.name}: no training data (give DATA on the command line)")
        specs = [DataSpec.parse(str(item), self.format()) for item in items]
        missing = [s for s in specs if not s.path.exists()]
        if missing:
            raise RagdialError(
                f"recipe {self.name}: training data not found: {', '.join(str(s.path) for s in missing)} "
                f"(paths are taken under $RAGDIAL_DATA={data_root()} unless they exist here)"
            )
        return specs

    def knowledge_specs(self, given: Iterable[str] = ()) -> list[DataSpec]:
        """The ``knowledge_data`` inputs: their knowledge joins the knowledge base, their dialogs are not learned
        from. None when training data is ``given`` on the command line (it replaces the recipe's own data; add
        knowledge files with ``--set knowledge_data=[…]``)."""
        if list(given):
            return []
        specs = [DataSpec.parse(str(item), self.format()) for item in self.entries("knowledge_data")]
        missing = [s for s in specs if not s.path.exists()]
        if missing:
            raise RagdialError(
                f"recipe {self.name}: knowledge_data not found: {', '.join(str(s.path) for s in missing)} "
                f"(paths are taken under $RAGDIAL_DATA={data_root()} unless they exist here)"
            )
        return specs

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.data, allow_unicode=True, sort_keys=False)


def load_recipe(name: str | Path, overrides: Iterable[str] = ()) -> Recipe:
    """A shipped recipe by name, or a recipe YAML file, with ``KEY=VALUE`` overrides applied (dotted keys, YAML
    values: ``system.top_k=5``, ``reranker=null``, ``index.encoder=none``)."""
    path = Path(name)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        where = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as err:
            raise RagdialError(f"{path}: cannot read the recipe: {err.strerror}") from None
    else:
        if str(name) not in names():
            raise RagdialError(f"unknown recipe {name!r}; shipped: {', '.join(names())} (or a recipe .yaml file)")
        where = f"recipe {name}"
        text = resources.files(__name__).joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    try:
        data: object = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise RagdialError(f"{where}: not valid YAML: {err}") from None
    if not isinstance(data, dict):
        raise RagdialError(f"{where}: expected a mapping at the top level")
    # YAML read by safe_load: plain data (dates pass through as they were read); ``check`` checks the sections
    recipe = apply_overrides(cast(JSONDict, data), overrides)
    check(recipe, where)
    return Recipe(recipe)


def apply_overrides(data: JSONObject, overrides: Iterable[str]) -> JSONDict:
    """A copy of ``data`` with each ``KEY.SUB=VALUE`` set (VALUE read as YAML)."""
    out = copy.deepcopy(dict(data))
    for override in overrides:
        key, sep, raw = override.partition("=")
        if not sep or not key.strip():
            raise RagdialError(f"--set {override!r}: expected KEY=VALUE (e.g. system.top_k=5)")
        try:
            value: JSONValue = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError as err:
            raise RagdialError(f"--set {override!r}: the value is not valid YAML: {err}") from None
        parts = key.strip().split(".")
        if parts[0] not in KEYS:
            raise RagdialError(f"--set {override!r}: unknown recipe key {parts[0]!r}; known: {', '.join(KEYS)}")
        node = out
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {}
                node[part] = child
            node = child
        node[parts[-1]] = value
    return out


def check(data: JSONObject, where: str) -> None:
    """Unknown keys, a missing name/benchmark and wrongly typed sections are errors naming the key."""
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise RagdialError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(KEYS)}")
    for key in ("name", "benchmark"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise RagdialError(f"{where}: {key!r} must be a non-empty string")
    if data.get("knowledge", "test") not in ("train", "test"):
        raise RagdialError(f"{where}: knowledge must be 'train' or 'test', not {data['knowledge']!r}")
    for key in ("test", "index", "detector", "reranker", "generator", "intent", "system"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            raise RagdialError(f"{where}: {key!r} must be a mapping or null, not {data[key]!r}")
    for key in ("train", "knowledge_data"):
        if not isinstance(data.get(key) or [], list):
            raise RagdialError(f"{where}: {key!r} must be a list of FORMAT:PATH[@SPLIT]")
    fold = data.get("exclude_fold")
    if fold is not None and (not isinstance(fold, int) or not 0 <= fold < 5):
        raise RagdialError(f"{where}: exclude_fold must be 0-4 or null, not {fold!r}")


__all__ = ["KEYS", "TRAINED", "DataSpec", "Recipe", "apply_overrides", "load_recipe", "names"]
