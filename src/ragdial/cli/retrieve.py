"""``ragdial retrieve``: ask an index one question, or run a whole benchmark and write the official output."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ragdial import challenges
from ragdial.challenges import Prediction
from ragdial.datasets.mobilecs2 import TRACK1_TOP_K
from ragdial.errors import RagdialError
from ragdial.retrieval.index import load_index
from ragdial.schema import Speaker, Turn

app = typer.Typer(no_args_is_help=True, help="Retrieve knowledge for a question or a benchmark.")
IndexArg = Annotated[Path, typer.Argument(help="index directory (`ragdial index build`)")]
RerankerOpt = Annotated[Path | None, typer.Option(help="reranker directory (`ragdial train retriever`)")]


@app.command()
def ask(
    index: IndexArg,
    text: Annotated[list[str] | None, typer.Argument(help="the question; several turns: earlier ones first")] = None,
    k: Annotated[int, typer.Option("-k", help="how many items")] = 5,
    dialog_id: Annotated[str | None, typer.Option(help="dialog whose local knowledge is also searched")] = None,
    reranker: RerankerOpt = None,
    json_: Annotated[bool, typer.Option("--json", help="JSON lines instead of a table")] = False,
) -> None:
    """Top-k knowledge for a question (turns alternate user/system ending with the user; stdin when none)."""
    retriever = load_index(index, reranker=reranker)
    turns_text = list(text or []) or [line.strip() for line in sys.stdin if line.strip()]
    if not turns_text:
        raise RagdialError("no question given (pass it as an argument or on stdin)")
    n = len(turns_text)
    context = [Turn(Speaker.USER if (n - 1 - i) % 2 == 0 else Speaker.SYSTEM, t) for i, t in enumerate(turns_text)]
    results = retriever.retrieve(context, dialog_id, k).ranked
    if json_:
        for r in results:
            typer.echo(json.dumps({"score": r.score, **r.item.to_dict()}, ensure_ascii=False))
        return
    if not results:
        typer.echo("no knowledge matched")
        return
    table = Table(title=f"top {len(results)} for: {turns_text[-1]}")
    for column in ("#", "score", "source", "id", "text"):
        table.add_column(column, overflow="fold")
    for rank, r in enumerate(results, 1):
        table.add_row(str(rank), f"{r.score:.3f}", r.item.source.value, r.item.id, r.item.text[:160])
    Console().print(table)


@app.command()
def batch(
    format: Annotated[str, typer.Argument(help="dstc9, dstc11, kdconv, huawei or mobilecs2")],
    path: Annotated[Path, typer.Argument(help="data file or folder")],
    index: Annotated[Path, typer.Option(help="index directory built from the same knowledge")],
    out: Annotated[Path, typer.Option("--out", "-o", help="official output file to write")],
    split: Annotated[str | None, typer.Option(help="split to read")] = None,
    k: Annotated[int, typer.Option("-k", help="most items selected per turn")] = 5,
    fold: Annotated[int | None, typer.Option(help="only this dev fold (README fold rule)")] = None,
    reranker: RerankerOpt = None,
) -> None:
    """Select knowledge for every example and write the official file: ``labels.json`` (DSTC), ``result.json``
    (KdConv/Huawei, triples only) or the track-1 top-20 file (MobileCS2).

    Turns labelled as not needing knowledge keep ``target: false``; unlabelled turns are all treated as
    knowledge-seeking. The selection is the reranker's threshold cut (at most k), or the top item without one.
    """
    challenge = challenges.for_format(format)
    track = challenge.track("ranking" if format == "mobilecs2" else "selection")
    dataset = challenge.load(path, split, format)
    retriever = load_index(index, reranker=reranker)
    unknown = next((i for e in dataset.examples for i in e.knowledge_ids if i not in retriever.kb), None)
    if unknown is not None:
        raise RagdialError(f"{index}: built from other knowledge than {path} (no item {unknown!r})")
    examples = challenge.examples(dataset, fold)
    predictions = {}
    with typer.progressbar(examples, label="retrieving") as progress:
        for example in progress:
            if track.holds == "ranking":
                ranked = retriever.retrieve(example.context, example.dialog_id, TRACK1_TOP_K).ranked
                predictions[example.id] = Prediction(ranking=tuple(r.item.id for r in ranked))
                continue
            seek = example.needs_knowledge is not False
            found = retriever.retrieve(example.context, example.dialog_id, max(k, 1)) if seek else None
            chosen = [r.item.id for r in found.selected] if found is not None else []
            predictions[example.id] = Prediction(needs_knowledge=seek, selection=tuple(chosen))
    challenge.write_track(track, out, dataset, examples, predictions)
    typer.echo(f"wrote {len(predictions)} {'rankings' if track.holds == 'ranking' else 'predictions'} to {out}")
