"""Grounded response generation."""

from ragdial.generation.base import GenerationRequest, Generator

__all__ = ["GenerationRequest", "Generator"]
