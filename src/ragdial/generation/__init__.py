"""Grounded response generation: one interface, three backends (template, llama.cpp, OpenAI-compatible HTTP)."""

from ragdial.generation.base import Exemplar, GenerationRequest, Generator

__all__ = ["Exemplar", "GenerationRequest", "Generator"]
