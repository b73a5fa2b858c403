"""One registry of generator backends: ``create("template" | "llama" | "openai", **options)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragdial.errors import RagdialError
from ragdial.generation.base import Generator


def _template(template_model: str | None = None, **options: Any) -> Generator:
    from ragdial.generation.template import TemplateGenerator, TemplateModel

    if template_model is None:
        return TemplateGenerator(TemplateModel(language=options.pop("language", "zh")), **options)
    options.pop("language", None)
    return TemplateGenerator.load(template_model, **options)


def _llama(**options: Any) -> Generator:
    from ragdial.generation.llama import LlamaCppGenerator

    return LlamaCppGenerator(**options)


def _openai(**options: Any) -> Generator:
    from ragdial.generation.openai_http import OpenAICompatibleGenerator

    if not options.get("base_url"):
        raise RagdialError("the openai backend needs base_url (e.g. http://127.0.0.1:8000)")
    return OpenAICompatibleGenerator(**options)


BACKENDS: dict[str, Callable[..., Generator]] = {"template": _template, "llama": _llama, "openai": _openai}


def create(backend: str, **options: Any) -> Generator:
    """A generator of the named backend; ``None`` options are left at the backend's defaults."""
    try:
        factory = BACKENDS[backend]
    except KeyError:
        raise RagdialError(f"unknown generation backend {backend!r}; known: {', '.join(BACKENDS)}") from None
    return factory(**{k: v for k, v in options.items() if v is not None})
