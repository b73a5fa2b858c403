"""Checks on prediction files that the organisers' checkers make and the readers cannot (completeness)."""

from __future__ import annotations

from collections.abc import Container, Sequence
from pathlib import Path

from ragdial.errors import DataFormatError


def require_all(path: str | Path, predictions: Container[object], keys: Sequence[object], what: str) -> None:
    """Every gold key must have a prediction; name how many are missing and the first few."""
    missing = [k for k in keys if k not in predictions]
    if missing:
        shown = ", ".join(str(k) for k in missing[:5])
        raise DataFormatError(path, f"no prediction for {len(missing)} of {len(keys)} {what} (first: {shown})")


def refuse_identical(path: str | Path, pairs: Sequence[tuple[str, ...]], allow: bool = False) -> None:
    """Stop when every prediction (first of each tuple) equals one of its gold strings (the rest): almost always a
    file whose gold field was overwritten by the prediction. ``allow`` lets it through."""
    if allow or not pairs or any(pair[0] not in pair[1:] for pair in pairs):
        return
    raise DataFormatError(
        path,
        f"every one of {len(pairs)} predictions equals its gold response (was the gold field overwritten?); "
        "pass --allow-identical to score it anyway",
    )
