"""Moved to :mod:`ragdial.io`; this name stays until ``generation/template.py`` imports from there."""

from ragdial.io import expect, field, read_json, write_json, write_lines

__all__ = ["expect", "field", "read_json", "write_json", "write_lines"]
