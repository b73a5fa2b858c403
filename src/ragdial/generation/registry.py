"""``GENERATORS``: the response generators a config can name (``template``, ``llama``, ``openai``). Factories only
load: a template model comes from ``ragdial generate train``-style training saved to a file, never at build time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Unpack

from ragdial.components import BuildContext, Registry
from ragdial.errors import RagdialError
from ragdial.generation.base import Generator
from ragdial.schema import Dataset, KnowledgeBase

if TYPE_CHECKING:
    from ragdial.generation.openai_http import OpenAIOptions

GENERATORS: Registry[Generator] = Registry("generator")


def template(ctx: BuildContext, model: str | None = None, max_items: int = 3) -> Generator:
    """The template generator: a saved template model, or the untrained defaults of the language (knowledge
    copied verbatim, no learned patterns) without one."""
    from ragdial.generation.template import TemplateGenerator, TemplateModel

    if model:
        return TemplateGenerator.load(model, max_items=max_items)
    return TemplateGenerator(TemplateModel(language=ctx.language), max_items=max_items)


def extractive(ctx: BuildContext) -> Generator:
    """The extractive generator: the field or sentence of the top item that answers the question."""
    from ragdial.generation.extractive import ExtractiveGenerator

    return ExtractiveGenerator()


def llama(ctx: BuildContext, **params: Any) -> Generator:  # Any: llama_cpp (Llama's options pass through)
    """A GGUF model through llama.cpp (the packaged offline model unless ``model`` names one), checked now (a
    missing model or backend is an error here, so ``auto`` moves on) and loaded at warm-up or first use: a service
    loads it in its warm-up thread beside the encoders (``DialogSystem.warm_up``)."""
    from ragdial.generation.llama import LlamaCppGenerator

    generator = LlamaCppGenerator(**params)
    generator.check()
    return generator


def openai(ctx: BuildContext, **params: Unpack[OpenAIOptions]) -> Generator:
    """An OpenAI-compatible server (``base_url``, ``model``, ``api_key``)."""
    from ragdial.generation.openai_http import OpenAICompatibleGenerator

    if not params.get("base_url"):
        raise RagdialError("the openai generator needs base_url (e.g. http://127.0.0.1:8000)")
    return OpenAICompatibleGenerator(**params)


GENERATORS.register("llama", llama, "a GGUF model through llama.cpp (offline packaged Qwen2.5-0.5B by default)", True)
GENERATORS.register("template", template, "templates (a saved model) filled with knowledge verbatim (instant)", True)
GENERATORS.register("extractive", extractive, "the answering field or sentence of the top item, verbatim (instant)")
GENERATORS.register("openai", openai, "an OpenAI-compatible server (vLLM, llama.cpp server, ...)")
SHARED = ("llama", "openai")  # language-independent: one instance serves every language


def create(name: str, **options: object) -> Generator:
    """A generator by registry name outside a dialog system (batch generation, benchmarks); ``None`` options are
    left at the generator's defaults; ``language`` (default zh) is the untrained template's language,
    ``template_model`` the template generator's ``model``."""
    params = {k: v for k, v in options.items() if v is not None}
    language = str(params.pop("language", "zh"))
    if "template_model" in params:
        params["model"] = params.pop("template_model")
    ctx = BuildContext(Dataset("none", "", language, KnowledgeBase(), [], []), language)
    return GENERATORS.build(name, ctx, **params)
