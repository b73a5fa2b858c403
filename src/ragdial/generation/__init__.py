"""Grounded response generation: one interface, three backends (template, llama.cpp, OpenAI-compatible HTTP).

``create("template", template_model="model.json")``, ``create("llama", model=None)`` (the packaged offline GGUF)
or ``create("openai", base_url="http://127.0.0.1:8000")`` give a ``Generator``; ``stream(request)`` yields the reply
piece by piece, ``generate(request)`` returns it whole.
"""

from ragdial.generation.backends import BACKENDS, create
from ragdial.generation.base import Exemplar, GenerationRequest, Generator

__all__ = ["BACKENDS", "Exemplar", "GenerationRequest", "Generator", "create"]
