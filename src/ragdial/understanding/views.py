"""Which text of a dialog context a feature block reads: the last user turn, or the turns before it."""

from __future__ import annotations

from collections.abc import Sequence

from ragdial.schema import Speaker, Turn

MAX_CHARS = 2000
"""Texts longer than this are cut (keeping the end, where the newest words are) before featurising."""

VIEWS = ("last_user", "history", "last_system")


def as_context(item: str | Sequence[Turn]) -> list[Turn]:
    """A context from a bare utterance (one user turn) or a sequence of turns."""
    if isinstance(item, str):
        return [Turn(Speaker.USER, item)]
    return list(item)


def view_text(context: str | Sequence[Turn], view: str, window: int = 3) -> str:
    """The text ``view`` names, at most ``MAX_CHARS`` characters.

    ``last_user``: the newest user turn. ``last_system``: the newest system turn before it. ``history``: up to
    ``window`` turns before the newest user turn, oldest first, joined by newlines.
    """
    context = as_context(context)
    last_user = next((i for i in range(len(context) - 1, -1, -1) if context[i].speaker == Speaker.USER), None)
    if view == "last_user":
        text = context[last_user].text if last_user is not None else ""
    elif view == "last_system":
        end = last_user if last_user is not None else len(context)
        text = next((context[i].text for i in range(end - 1, -1, -1) if context[i].speaker == Speaker.SYSTEM), "")
    elif view == "history":
        end = last_user if last_user is not None else len(context)
        text = "\n".join(t.text for t in context[max(0, end - window) : end])
    else:
        raise ValueError(f"unknown view {view!r}; known: {', '.join(VIEWS)}")
    return text[-MAX_CHARS:]
