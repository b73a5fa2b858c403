"""``ragdial predict``: run a saved understanding classifier on utterances or on a dataset split."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from ragdial import challenges
from ragdial.errors import RagdialError
from ragdial.io import write_json
from ragdial.understanding import TextClassifier, training_data
from ragdial.understanding.linear import Target
from ragdial.understanding.model import Input
from ragdial.understanding.tasks import display


def _confidence(model: TextClassifier, row: np.ndarray) -> float | list[float]:
    if model.head.mode == "binary":
        return round(float(row[0]), 6)
    if model.head.mode == "multiclass":
        return round(float(row.max()), 6)
    return [round(float(p), 6) for p in row]


def predict(
    model_dir: Annotated[Path, typer.Argument(help="model folder written by `ragdial train ...`")],
    texts: Annotated[list[str] | None, typer.Argument(help="utterances, each read as one user turn")] = None,
    format: Annotated[str | None, typer.Option("--format", help="data format of --data")] = None,
    data: Annotated[Path | None, typer.Option(help="predict every example of this data file/folder")] = None,
    split: Annotated[str | None, typer.Option(help="split of --data")] = None,
    fold: Annotated[int | None, typer.Option(help="only this dialog-grouped fold of --data")] = None,
    folds: Annotated[int, typer.Option(help="number of folds for --fold")] = 5,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="write predictions as JSON here")] = None,
) -> None:
    """Predict intents, knowledge-seeking turns or api_query labels; prints one JSON line per input."""
    model = TextClassifier.load(model_dir)
    if (data is None) == (not texts):
        raise RagdialError("give either utterances or --format and --data")
    ids: list[str]
    gold: list[Target] | None = None
    if data is not None:
        if format is None:
            raise RagdialError("--data needs --format")
        challenge = challenges.for_format(format)
        dataset = challenge.load(data, split, format)
        dataset.examples = challenge.examples(dataset, fold, k=folds)
        inputs: list[Input] = [e.context for e in dataset.examples]
        ids = [e.id for e in dataset.examples]
        try:
            contexts, gold = training_data(model.task, dataset)
            gold = gold if len(contexts) == len(inputs) else None
        except RagdialError:
            gold = None
    else:
        inputs = list(texts or [])
        ids = [str(i) for i in range(len(inputs))]
    predictions = model.predict(inputs)
    confidences = model.probabilities(inputs) if inputs else np.zeros((0, 0))
    records = [
        {"id": i, "prediction": display(model.task, p), "confidence": _confidence(model, c)}
        for i, p, c in zip(ids, predictions, confidences, strict=True)
    ]
    if out is not None:
        write_json(out, records)
        typer.echo(f"wrote {len(records)} predictions to {out}")
    else:
        for record in records:
            typer.echo(json.dumps(record, ensure_ascii=False))
    if gold is not None:
        known = set(model.classes)
        labels = [g for target in gold for g in (target if isinstance(target, list) else [target])]
        unseen = sorted({str(g) for g in labels if g not in known})
        correct = sum(1 for p, g in zip(predictions, gold, strict=True) if p == g)
        typer.echo(f"exact match with the gold labels: {correct}/{len(gold)}", err=True)
        if unseen:
            typer.echo(f"gold labels never seen in training (always counted wrong): {', '.join(unseen)}", err=True)
