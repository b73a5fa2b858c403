"""Grounded response generation: one interface, three generators (template, llama.cpp, OpenAI-compatible HTTP).

``GENERATORS`` builds them from a config; ``create("template", template_model="model.json")``, ``create("llama")``
(the packaged offline GGUF) or ``create("openai", base_url="http://127.0.0.1:8000")`` give one outside a dialog
system; ``stream(request)`` yields the reply piece by piece, ``generate(request)`` returns it whole.
"""

from ragdial.generation.base import Exemplar, GenerationRequest, Generator
from ragdial.generation.registry import GENERATORS, create

__all__ = ["GENERATORS", "Exemplar", "GenerationRequest", "Generator", "create"]
