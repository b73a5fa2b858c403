"""``ragdial train detector|intent|api-query``: fit an understanding classifier on a dataset split and save it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from ragdial import challenges, datasets
from ragdial.errors import RagdialError
from ragdial.understanding import new_classifier, training_data
from ragdial.understanding.kb_calibration import fit_reference
from ragdial.understanding.tasks import zero_shot_detector

FormatArg = Annotated[str, typer.Argument(help=f"data format, one of: {', '.join(datasets.FORMATS)}")]
PathArg = Annotated[Path, typer.Argument(help="data file or folder")]
OutOpt = Annotated[Path, typer.Option("--out", "-o", help="model folder to write (model.json + arrays.npz)")]
SplitOpt = Annotated[str | None, typer.Option(help="split to train on (default: the format's default)")]
EmbeddingOpt = Annotated[
    str, typer.Option(help="sentence encoder(s) for embedding blocks, several joined by '+' (use+e5), or 'none'")
]
ExcludeFoldOpt = Annotated[
    int | None,
    typer.Option(help="leave this dialog-grouped fold (crc32 of the first turn % --folds) out of training"),
]
FoldsOpt = Annotated[int, typer.Option(help="number of dialog-grouped folds for --exclude-fold")]


def _train(
    task: str,
    format: str,
    path: Path,
    out: Path,
    split: str | None,
    embedding: str,
    exclude_fold: int | None,
    folds: int,
    use_knowledge: bool = True,
    threshold: float = 0.5,
    zero_shot: bool = False,
) -> None:
    if not path.exists():
        raise RagdialError(f"{path}: no such file or folder")
    challenge = challenges.for_format(format)
    dataset = challenge.load(path, split, format)
    if exclude_fold is not None and not 0 <= exclude_fold < folds:
        raise RagdialError(f"--exclude-fold must be in 0..{folds - 1}, not {exclude_fold}")
    dataset.examples = challenge.examples(dataset, exclude_fold, keep=False, k=folds)
    contexts, targets = training_data(task, dataset)
    if not 0.0 < threshold < 1.0:
        raise RagdialError(f"--threshold must be between 0 and 1, not {threshold}")
    if zero_shot:  # knowledge cues over this dataset's KB (the deployment KB replaces it when built from a config)
        model = zero_shot_detector(list(dataset.kb), encoder=embedding, threshold=threshold)
    else:
        model = new_classifier(task, dataset, None if embedding == "none" else embedding, use_knowledge, threshold)
    started = time.perf_counter()
    model.fit(contexts, targets)
    if zero_shot:  # the training KB's own questions, for the per-KB threshold calibration at deployment
        fit_reference(model, list(dataset.kb))
    model.meta.update(
        {"data_format": format, "data_path": str(path), "split": dataset.split, "excluded_fold": exclude_fold}
    )
    model.save(out)
    typer.echo(
        f"trained {task} on {len(contexts)} examples ({len(model.classes)} classes) "
        f"in {time.perf_counter() - started:.1f}s; saved to {out}"
    )


def intent(
    format: FormatArg,
    path: PathArg,
    out: OutOpt,
    split: SplitOpt = None,
    embedding: EmbeddingOpt = "use+e5",
    exclude_fold: ExcludeFoldOpt = None,
    folds: FoldsOpt = 5,
) -> None:
    """Train a single-utterance intent classifier (e.g. SMP2017-ECDT task 1)."""
    _train("intent", format, path, out, split, embedding, exclude_fold, folds)


def detector(
    format: FormatArg,
    path: PathArg,
    out: OutOpt,
    split: SplitOpt = None,
    embedding: EmbeddingOpt = "use",
    exclude_fold: ExcludeFoldOpt = None,
    folds: FoldsOpt = 5,
    knowledge: Annotated[bool, typer.Option(help="add knowledge-base match (BM25) features")] = True,
    threshold: Annotated[float, typer.Option(help="a turn needs knowledge when P(seeking) >= this")] = 0.5,
    zero_shot: Annotated[
        bool, typer.Option(help="the zero-shot detector (KB match + act cues; --embedding: its one encoder)")
    ] = False,
) -> None:
    """Train a knowledge-seeking turn detector (DSTC9/11 task 1; KdConv/Huawei: does the turn use a triple)."""
    if zero_shot and (embedding == "none" or "+" in embedding):
        raise RagdialError("--zero-shot needs one --embedding encoder for its knowledge cues (e.g. use, hash)")
    _train("detector", format, path, out, split, embedding, exclude_fold, folds, knowledge, threshold, zero_shot)


def api_query(
    format: FormatArg,
    path: PathArg,
    out: OutOpt,
    split: SplitOpt = None,
    exclude_fold: ExcludeFoldOpt = None,
    folds: FoldsOpt = 5,
) -> None:
    """Train a MobileCS2 api_query classifier (multi-label: [QA], user/product/other information, handle, ...)."""
    _train("api_query", format, path, out, split, "none", exclude_fold, folds)
