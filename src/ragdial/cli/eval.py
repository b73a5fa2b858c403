"""``ragdial eval CHALLENGE``: score a prediction file as the organisers do, through ``ragdial.challenges``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, cast

import typer
from rich.console import Console
from rich.table import Table

from ragdial.challenges import DSTC9, DSTC11, FUTUREDIAL, KDSD, SMP2017
from ragdial.io import write_json
from ragdial.jsontypes import as_object
from ragdial.metrics.result import ChallengeScores

app = typer.Typer(no_args_is_help=True, help="Score predictions as the challenge organisers do.")

GoldOpt = Annotated[Path | None, typer.Option("--gold", help="gold labels / dialogs file")]
PredOpt = Annotated[Path, typer.Option("--pred", help="prediction (submission) file")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print scores, signatures and counts as JSON")]
OutOpt = Annotated[Path | None, typer.Option("--out", help="write the scores JSON (the official score-file shape)")]
DatarootOpt = Annotated[Path | None, typer.Option("--dataroot", help="official layout: ROOT/<split>/labels.json")]
SplitOpt = Annotated[str, typer.Option("--split", help="split under --dataroot")]
SelectionOnlyOpt = Annotated[
    bool,
    typer.Option("--selection-only", help="score detection and selection alone (a file without responses)"),
]
KnowledgeOpt = Annotated[Path | None, typer.Option("--knowledge", help="knowledge.json to check references against")]


def report(scores: ChallengeScores, json_: bool, out: Path | None) -> None:
    """A table on screen (or JSON), the official-shape scores on disk."""
    if out is not None:
        write_json(out, scores.scores)
    grounding = as_object(scores.extra["grounding"]) if "grounding" in scores.extra else None
    if json_:
        data = scores.to_dict()
        if grounding is not None:
            data["grounding"] = grounding
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    table = Table(title=f"{scores.challenge} scores")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, value in scores.flat().items():
        if ".per_class." in f".{name}":
            continue
        table.add_row(name, f"{value:.4f}")
    console = Console()
    console.print(table)
    for family, sig in scores.signatures.items():
        console.print(f"[dim]{family}: {sig}[/dim]")
    if scores.counts:
        console.print("[dim]" + ", ".join(f"{k}={v}" for k, v in scores.counts.items()) + "[/dim]")
    if grounding is not None:
        console.print(
            f"unsupported-claim rate (ragdial.metrics.grounding, not an official score): "
            f"{grounding['unsupported_claim_rate']:.4f} of {grounding['replies']} replies "
            f"({grounding['unsupported']} of {grounding['claims']} claims unsupported, "
            f"{grounding['degenerate']} degenerate)",
            soft_wrap=True,
        )
    if out is not None:
        console.print(f"wrote {out}")


@app.command("dstc9")
def dstc9(
    pred: PredOpt,
    gold: GoldOpt = None,
    dataroot: DatarootOpt = None,
    split: SplitOpt = "val",
    knowledge: KnowledgeOpt = None,
    selection_only: SelectionOnlyOpt = False,
    json_: JsonOpt = False,
    out: OutOpt = None,
) -> None:
    """DSTC9 track 1: detection P/R/F, selection MRR@5/R@1/R@5, generation BLEU-1..4/METEOR/ROUGE (nltk)."""
    report(DSTC9.score_file(pred, gold, dataroot, split, knowledge, selection_only=selection_only), json_, out)


@app.command("dstc11")
def dstc11(
    pred: PredOpt,
    gold: GoldOpt = None,
    dataroot: DatarootOpt = None,
    split: SplitOpt = "val",
    knowledge: KnowledgeOpt = None,
    meteor: Annotated[bool, typer.Option(help="METEOR 1.5 (needs Java); --no-meteor reports it as 0")] = True,
    selection_only: SelectionOnlyOpt = False,
    json_: JsonOpt = False,
    out: OutOpt = None,
) -> None:
    """DSTC11 track 5: detection P/R/F, selection P/R/F/EM, generation BLEU/METEOR 1.5/ROUGE."""
    report(DSTC11.score_file(pred, gold, dataroot, split, knowledge, meteor, selection_only), json_, out)


KbOpt = Annotated[Path | None, typer.Option("--kb", help="global_kb.json (default: beside the dialogs file)")]
FaqOpt = Annotated[Path | None, typer.Option("--faq", help="qa.json (default: beside the dialogs file)")]
RulesOpt = Annotated[
    str,
    typer.Option(
        "--rules",
        help="organisers (their code: ret_qa with synthetic [QA] entries, cleaned gold) or faq-answer (own KBs, demo)",
    ),
]
AllowIdenticalOpt = Annotated[
    bool, typer.Option("--allow-identical", help="score a file whose predictions equal the gold in every record")
]


@app.command("futuredial-track1")
def futuredial_track1(
    pred: PredOpt,
    gold: Annotated[Path, typer.Option("--gold", help="MobileCS2 dialogs file (or folder, with --split)")],
    kb: KbOpt = None,
    faq: FaqOpt = None,
    split: Annotated[str | None, typer.Option("--split", help="split, when --gold is a folder")] = None,
    rules: RulesOpt = "organisers",
    json_: JsonOpt = False,
    out: OutOpt = None,
) -> None:
    """FutureDial-RAG track 1: recall@1/5/20 per gold piece from a top-20 file; score = sum."""
    report(FUTUREDIAL.score_track1_file(pred, gold, kb, faq, split, rules=rules), json_, out)


@app.command("futuredial-track2")
def futuredial_track2(
    pred: PredOpt,
    gold: Annotated[
        Path | None,
        typer.Option("--gold", help="MobileCS2 dialogs file; without it the gold 客服/查询结果 of the file"),
    ] = None,
    kb: KbOpt = None,
    faq: FaqOpt = None,
    split: Annotated[str | None, typer.Option("--split", help="split, when --gold is a folder")] = None,
    bertscore_model: Annotated[
        str | None, typer.Option(help="BERTScore backbone (official: bert-base-chinese); default: offline MiniLM")
    ] = None,
    bertscore_layers: Annotated[int | None, typer.Option(help="BERTScore layer (official: 8)")] = None,
    rules: RulesOpt = "organisers",
    allow_identical: AllowIdenticalOpt = False,
    json_: JsonOpt = False,
    out: OutOpt = None,
) -> None:
    """FutureDial-RAG track 2: character BLEU-4, BERTScore, Inform; score = 0.5*(BLEU/100+BERTScore)+Inform."""
    scores = FUTUREDIAL.score_track2_file(
        pred, gold, kb, faq, split, bertscore_model, bertscore_layers, rules=rules, allow_identical=allow_identical
    )
    report(scores, json_, out)


@app.command("kdsd")
def kdsd(
    pred: PredOpt,
    gold: Annotated[Path, typer.Option("--gold", help="Huawei/KdConv dialogs file (e.g. valid.json)")],
    json_: JsonOpt = False,
    out: OutOpt = None,
) -> None:
    """Knowledge-driven spoken dialogue (Huawei): triple P/R/F1, char BLEU-1/2, DISTINCT-1/2, F1, score."""
    report(KDSD.score_file(pred, gold), json_, out)


@app.command("smp2017")
def smp2017(
    pred: PredOpt,
    gold: Annotated[Path, typer.Option("--gold", help="SMP2017 task-1 folder (ROOT or ROOT/<split>)")],
    split: SplitOpt = "develop",
    confusion_png: Annotated[Path | None, typer.Option(help="save the confusion matrix as a PNG")] = None,
    json_: JsonOpt = False,
    out: OutOpt = None,
) -> None:
    """SMP2017-ECDT task 1: accuracy, micro and macro F1, per-class scores, confusion matrix."""
    from ragdial.metrics.classification import plot_confusion

    scores = SMP2017.score_file(pred, gold, split)
    if confusion_png is not None:
        matrix = cast(Sequence[Sequence[int]], scores.extra["confusion"])  # as smp2017.score wrote it
        plot_confusion(matrix, cast(Sequence[str], scores.extra["labels"]), confusion_png, f"SMP2017 {split}")
    report(scores, json_, out)
