"""From a dialog context to weighted query texts."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragdial.retrieval.config import RetrieverConfig
from ragdial.schema import Speaker, Turn


def last_user_index(context: Sequence[Turn]) -> int | None:
    for index in range(len(context) - 1, -1, -1):
        if context[index].speaker == Speaker.USER:
            return index
    return None


def strip_names(text: str, names: Sequence[str]) -> str:
    """``text`` without the given entity names (case-insensitive), for queries already scoped to them."""
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", text).strip()


def query_texts(
    context: Sequence[Turn], config: RetrieverConfig, focus: Sequence[str] = (), scoped: bool = False
) -> list[tuple[str, float]]:
    """``(text, weight)`` pairs, the most important first; empty when the context has no text.

    The anchor is the last user turn (or the last turn when no user turn exists). With ``recent``, up to
    ``turns - 1`` earlier turns follow with weights ``decay``, ``decay**2`` ...; with ``entity_carry`` the focus
    entity names are appended to the anchor text when the anchor does not already name them.
    """
    anchor = last_user_index(context)
    if anchor is None:
        anchor = len(context) - 1
    if anchor < 0:
        return []
    text = context[anchor].text.strip()
    if scoped:
        text = strip_names(text, focus) or text
    elif config.entity_carry and focus:
        lowered = text.lower()
        missing = [name for name in focus if name.lower() not in lowered]
        if missing:
            text = f"{text} {' '.join(missing)}".strip()
    pairs = [(text, 1.0)] if text else []
    if config.query == "recent":
        weight = 1.0
        for index in range(anchor - 1, max(-1, anchor - config.turns), -1):
            weight *= config.decay
            earlier = context[index].text.strip()
            if scoped:
                earlier = strip_names(earlier, focus)
            if earlier and weight > 0:
                pairs.append((earlier, weight))
    return pairs
