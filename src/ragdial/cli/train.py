"""``ragdial train``: fit the learned parts of the pipeline (``retriever`` here; detectors live beside it), or every
part of a recipe at once (``ragdial train RECIPE``, ``ragdial.cli.recipes``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, TypedDict

import typer

from ragdial import challenges, datasets
from ragdial.cli import recipes as recipes_cli
from ragdial.cli import train_understanding
from ragdial.errors import RagdialError
from ragdial.retrieval import rerank
from ragdial.retrieval import transfer as transfer_model
from ragdial.retrieval.index import load_index

app = typer.Typer(no_args_is_help=True, help="Train models.")
app.command("detector")(train_understanding.detector)
app.command("intent")(train_understanding.intent)
app.command("api-query")(train_understanding.api_query)
recipes_cli.register(app)


class _TrainOptions(TypedDict):
    """The options ``rerank.train`` and ``transfer.train`` share."""

    depth: int
    max_select: int
    rounds: int
    seed: int
    relative_cut: bool


@app.command()
def retriever(
    format: Annotated[str, typer.Argument(help=f"one of: {', '.join(datasets.FORMATS)}")],
    path: Annotated[Path, typer.Argument(help="labelled data file or folder")],
    index: Annotated[Path, typer.Option(help="index directory built from the same knowledge")],
    out: Annotated[Path, typer.Option("--out", "-o", help="reranker directory to write")],
    split: Annotated[str | None, typer.Option(help="split to read")] = None,
    exclude_fold: Annotated[int | None, typer.Option(help="leave out this dev fold (README fold rule)")] = None,
    depth: Annotated[int, typer.Option(help="candidates reranked per query")] = 100,
    max_select: Annotated[int, typer.Option(help="most items selected per turn")] = 10,
    rounds: Annotated[int, typer.Option(help="LightGBM boosting rounds")] = 300,
    relative_cut: Annotated[bool, typer.Option(help="also tune a relative-to-best probability cut")] = False,
    transfer: Annotated[bool, typer.Option(help="the transfer reranker (word-free features, for unseen KBs)")] = False,
    aux_encoder: Annotated[
        str | None, typer.Option(help="--transfer only: a second encoder it also reads (minilm: English, torch extra)")
    ] = None,
    seed: int = 0,
) -> None:
    """Train the reranker (word-interaction model + LightGBM) and its selection threshold on labelled turns;
    ``--transfer``: the transfer reranker (``ragdial.retrieval.transfer``) instead."""
    challenge = challenges.for_format(format)
    dataset = challenge.load(path, split, format)
    base = load_index(index)
    base.reranker = None
    examples = challenge.examples(dataset, exclude_fold, keep=False)
    start = time.perf_counter()
    options: _TrainOptions = {
        "depth": depth,
        "max_select": max_select,
        "rounds": rounds,
        "seed": seed,
        "relative_cut": relative_cut,
    }
    if aux_encoder and not transfer:
        raise RagdialError("--aux-encoder is an option of the transfer reranker: add --transfer")
    model: rerank.RerankerModel
    if transfer:
        model = transfer_model.train(base, examples, aux_encoder=aux_encoder, **options)
    else:
        model = rerank.train(base, examples, **options)
    model.info.update({"format": format, "source": str(path), "exclude_fold": exclude_fold, "index": str(index)})
    model.save(out)
    typer.echo(
        f"trained on {model.info['queries']} turns in {time.perf_counter() - start:.1f}s; "
        f"threshold {model.threshold:.3f}; saved to {out}"
    )
