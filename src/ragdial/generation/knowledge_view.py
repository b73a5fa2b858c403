"""How a knowledge item reads to a generator: the content a reply carries, and a one-line description for prompts."""

from __future__ import annotations

from ragdial.schema import Knowledge, SourceKind


def content(item: Knowledge) -> str:
    """What a reply grounded in ``item`` states: a triple's value, an FAQ's answer, a review or product text."""
    fields = item.fields
    if item.source == SourceKind.KG_TRIPLE and "value" in fields:
        return str(fields["value"])
    if item.source in (SourceKind.FAQ, SourceKind.SNIPPET):
        for key in ("answer", "body"):
            if fields.get(key):
                return str(fields[key])
    return item.text


def describe(item: Knowledge) -> str:
    """One line for a prompt: ``entity | attribute | value`` for triples, ``Q: ... A: ...`` for FAQs, else text."""
    fields = item.fields
    if item.source == SourceKind.KG_TRIPLE and "value" in fields:
        return f"{fields.get('entity', '')} | {fields.get('attribute', '')} | {fields['value']}"
    entity = fields.get("entity")
    prefix = f"[{entity}] " if entity else ""
    if item.source in (SourceKind.FAQ, SourceKind.SNIPPET):
        question = fields.get("title") or fields.get("question")
        answer = fields.get("body") or fields.get("answer")
        if question and answer:
            return f"{prefix}Q: {question} A: {answer}"
    return f"{prefix}{item.text}"
