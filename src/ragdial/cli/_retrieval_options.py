"""Options shared by the ``index``, ``retrieve`` and ``train retriever`` commands."""

from __future__ import annotations

from typing import Annotated

import typer

EncoderOpt = Annotated[str, typer.Option(help="dense encoder: use (default), e5, hash, or none")]
FusionOpt = Annotated[str, typer.Option(help="bm25, dense, rrf or weighted")]
QueryOpt = Annotated[str, typer.Option(help="query from context: last_user or recent")]
PinyinOpt = Annotated[bool, typer.Option("--pinyin/--no-pinyin", help="add pinyin tokens (ASR homophones)")]
ScopeOpt = Annotated[bool, typer.Option("--entity-scope/--no-entity-scope", help="narrow to entities in focus")]


def encoder_name(encoder: str) -> str | None:
    return None if encoder.lower() in ("none", "", "off") else encoder
