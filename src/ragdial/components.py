"""The component contract and the registries that build components from configuration by name.

Every component of the dialog system (a detector, a retriever, a generator, the task branch) follows
:class:`Component`: ``warm_up()`` loads what loads lazily, ``close()`` releases what it holds, ``to_config()`` says how
to build it again. Each kind has one :class:`Registry` in its own package (``ragdial.retrieval.RETRIEVERS``,
``ragdial.generation.GENERATORS``, ``ragdial.understanding.DETECTORS``); a factory takes a :class:`BuildContext` and
its parameters from the config, and only loads: training is ``ragdial train``.

A component is named in the config either by a registered name (``bm25``, ``template``) or by an import path
(``package.module:factory``), so a user's own retriever, generator or detector plugs in without touching ragdial.
Registered names may point at an import path too: the module is imported only when the name is built, so the
registry lists components whose modules land later without importing them up front.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar, cast, runtime_checkable

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict
from ragdial.schema import Dataset, KnowledgeBase

T = TypeVar("T")
Factory = Callable[..., object]  # called with a BuildContext and a config's parameters (checked by name)


class ConfigError(RagdialError):
    """A configuration that cannot be built: names the config file (where known), the field and what is wrong."""


@runtime_checkable
class Component(Protocol):
    """What every built component offers the system that holds it."""

    def warm_up(self) -> None:
        """Load models, encoders, connections now rather than on the first user's turn."""
        ...

    def close(self) -> None:
        """Release what the component holds (a model, a connection)."""
        ...

    def to_config(self) -> JSONDict:
        """The component as plain config data: ``{"name": ..., **params}``."""
        ...


@dataclass(frozen=True)
class BuildContext:
    """What a factory may use: the dataset the system answers from (its knowledge base) and the language."""

    dataset: Dataset
    language: str

    @property
    def kb(self) -> KnowledgeBase:
        return self.dataset.kb


def warm_up(component: object) -> None:
    """``component.warm_up()`` where it has one (a user's own component may not)."""
    method = getattr(component, "warm_up", None)
    if callable(method):
        method()


def close(component: object) -> None:
    """``component.close()`` where it has one."""
    method = getattr(component, "close", None)
    if callable(method):
        method()


def import_object(path: str) -> object:
    """Import ``package.module:attribute``."""
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"{path!r} is not an import path of the form 'package.module:name'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ConfigError(f"cannot import {module_name!r} for {path!r}: {err}") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ConfigError(f"module {module_name!r} has no {attribute!r}") from None


class Registry(Generic[T]):
    """Named factories of one kind of component (retrievers, generators, detectors, knowledge sources).
    ``auto`` candidates (``register(..., auto=True)``, in registration order) are what the name ``auto`` tries."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._factories: dict[str, Factory | str] = {}
        self._help: dict[str, str] = {}
        self.auto: list[str] = []

    def register(self, name: str, factory: Factory | str, help: str = "", auto: bool = False) -> None:
        """Register ``factory`` (a callable, or an import path resolved on first use) under ``name``; ``auto``
        makes it a candidate of the name ``auto``."""
        self._factories[name] = factory
        self._help[name] = help
        if auto and name not in self.auto:
            self.auto.append(name)

    def names(self) -> list[str]:
        return sorted(self._factories)

    def help(self, name: str) -> str:
        return self._help.get(name, "")

    def available(self, name: str) -> bool:
        """Whether ``name`` can be built here (its module imports)."""
        try:
            self.factory(name)
        except ConfigError:
            return False
        return True

    def factory(self, name: str) -> Factory:
        """The factory for ``name`` (a registered name or an import path)."""
        target = self._factories.get(name)
        if target is None:
            if ":" not in name:
                known = ", ".join(self.names()) or "none"
                raise ConfigError(f"unknown {self.kind} {name!r}; known: {known} (or an import path 'module:name')")
            target = name
        if isinstance(target, str):
            imported = import_object(target)
            if not callable(imported):
                raise ConfigError(f"{self.kind} {name!r} is not callable")
            return imported
        return target

    def build(self, name: str, *args: object, **params: object) -> T:
        """Build ``name`` with ``params``; a wrong parameter is a configuration error naming the component."""
        factory = self.factory(name)
        try:
            inspect.signature(factory).bind(*args, **params)
        except TypeError as err:
            raise ConfigError(f"{self.kind} {name!r}: {err}") from None
        except ValueError:  # no signature to check (a builtin)
            pass
        return cast(T, factory(*args, **params))  # the registry holds factories of T only
