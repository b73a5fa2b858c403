"""``ragdial index``: build a retrieval index directory from any supported format, describe one, or index a
config's knowledge into Milvus."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from ragdial import datasets
from ragdial.cli._retrieval_options import EncoderOpt, FusionOpt, PinyinOpt, QueryOpt, ScopeOpt, encoder_name
from ragdial.jsontypes import JSONDict
from ragdial.retrieval.analyzer import Analyzer
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.index import load_index, read_meta, write_index

app = typer.Typer(no_args_is_help=True, help="Build and inspect retrieval indexes.")


@app.command()
def build(
    format: Annotated[str, typer.Argument(help=f"one of: {', '.join(datasets.FORMATS)}")],
    path: Annotated[Path, typer.Argument(help="data file or folder")],
    out: Annotated[Path, typer.Option("--out", "-o", help="index directory to write")],
    split: Annotated[str | None, typer.Option(help="split to read")] = None,
    encoder: EncoderOpt = "use",
    fusion: FusionOpt = "rrf",
    query: QueryOpt = "recent",
    pinyin: PinyinOpt = False,
    entity_scope: ScopeOpt = True,
    reranker: Annotated[Path | None, typer.Option(help="a trained reranker directory to store in the index")] = None,
) -> None:
    """Index the knowledge base of a dataset (BM25 + dense vectors) into a directory that loads back fast. Written
    chunk by chunk (``write_index``: memory bounded by a chunk, a progress line per chunk on stderr), with
    ``--reranker`` stored in it."""
    start = time.perf_counter()
    dataset = datasets.load(format, path, split)
    config = RetrieverConfig(
        query=query,
        fusion=fusion,
        encoder=encoder_name(encoder),
        entity_scope=entity_scope,
        analyzer=Analyzer(pinyin=pinyin),
    )
    extra: JSONDict = {"format": format, "source": str(path), "split": dataset.split}
    total, done = len(dataset.kb), {"items": 0, "bm25": 0, "ann index": 0}

    def progress(step: str, n: int) -> None:
        done[step] += n
        typer.echo(f"{step}: {done[step]:,} / {total:,}", err=True)

    write_index(dataset.kb, out, config, progress=progress, extra=extra, reranker=reranker)
    typer.echo(f"indexed {len(dataset.kb)} items into {out} in {time.perf_counter() - start:.1f}s")


@app.command()
def info(directory: Annotated[Path, typer.Argument(help="index directory")]) -> None:
    """Print an index's metadata and check that it loads."""
    meta = read_meta(directory)
    start = time.perf_counter()
    retriever = load_index(directory)
    meta["load_seconds"] = round(time.perf_counter() - start, 3)
    meta["reranker"] = retriever.reranker is not None
    typer.echo(json.dumps(meta, indent=2, ensure_ascii=False))


@app.command()
def milvus(
    config: Annotated[Path, typer.Option("--config", "-c", help="system config YAML naming retriever: {name: milvus}")],
    rebuild: Annotated[bool, typer.Option(help="drop and index again even where the collection exists")] = False,
) -> None:
    """Index a system config's knowledge into the Milvus collections its retriever names, one per language
    (before starting several replicas against one Milvus server)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ragdial.pipeline.components import prepare_milvus
    from ragdial.pipeline.config import load_config

    start = time.perf_counter()
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=Console(stderr=True)) as bar:

        def task(language: str, total: int) -> Callable[[int], None]:
            task_id = bar.add_task(f"indexing {language}", total=total)
            return lambda n: bar.advance(task_id, n)

        rows = prepare_milvus(load_config(config), rebuild=rebuild, progress=task)
    for collection, count in rows.items():
        typer.echo(f"{collection}: {count} items")
    typer.echo(f"done in {time.perf_counter() - start:.1f}s")
