"""Options shared by the ``index``, ``retrieve`` and ``train retriever`` commands."""

from __future__ import annotations

from typing import Annotated

import typer

from ragdial.datasets.folds import fold_of
from ragdial.errors import RagdialError
from ragdial.schema import Dataset, Example

EncoderOpt = Annotated[str, typer.Option(help="dense encoder: use (default), e5, hash, or none")]
FusionOpt = Annotated[str, typer.Option(help="bm25, dense, rrf or weighted")]
QueryOpt = Annotated[str, typer.Option(help="query from context: last_user or recent")]
PinyinOpt = Annotated[bool, typer.Option("--pinyin/--no-pinyin", help="add pinyin tokens (ASR homophones)")]
ScopeOpt = Annotated[bool, typer.Option("--entity-scope/--no-entity-scope", help="narrow to entities in focus")]


def encoder_name(encoder: str) -> str | None:
    return None if encoder.lower() in ("none", "", "off") else encoder


def select_fold(dataset: Dataset, fold: int | None, keep: bool) -> list[Example]:
    """The examples in (``keep``) or outside (not ``keep``) ``fold``; all of them when ``fold`` is None."""
    if fold is None:
        return list(dataset.examples)
    if not 0 <= fold < 5:
        raise RagdialError(f"--fold must be between 0 and 4, not {fold}")
    return [e for e in dataset.examples if (fold_of(e) == fold) == keep]
