"""``ragdial eval CHALLENGE``: score a prediction file exactly as the organisers' scripts do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ragdial.datasets._io import read_json, write_json
from ragdial.errors import DataFormatError, RagdialError
from ragdial.metrics.result import ChallengeScores

app = typer.Typer(no_args_is_help=True, help="Score predictions as the challenge organisers do.")

GoldOpt = Annotated[Path | None, typer.Option("--gold", help="gold labels / dialogs file")]
PredOpt = Annotated[Path, typer.Option("--pred", help="prediction (submission) file")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print scores, signatures and counts as JSON")]
OutOpt = Annotated[Path | None, typer.Option("--out", help="write the scores JSON (the official score-file shape)")]
DatarootOpt = Annotated[Path | None, typer.Option("--dataroot", help="official layout: ROOT/<split>/labels.json")]
SplitOpt = Annotated[str, typer.Option("--split", help="split under --dataroot")]
KnowledgeOpt = Annotated[Path | None, typer.Option("--knowledge", help="knowledge.json to check references against")]


def report(scores: ChallengeScores, json_: bool, out: Path | None) -> None:
    """A table on screen (or JSON), the official-shape scores on disk."""
    if out is not None:
        write_json(out, scores.scores)
    if json_:
        typer.echo(json.dumps(scores.to_dict(), ensure_ascii=False, indent=2))
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
    if out is not None:
        console.print(f"wrote {out}")


def _dstc_inputs(
    version: str, gold: Path | None, pred: Path, dataroot: Path | None, split: str, knowledge: Path | None
) -> tuple[list, list]:
    from ragdial.datasets.dstc import load_knowledge, read_labels
    from ragdial.metrics.challenges.dstc import check_predictions

    if gold is None:
        if dataroot is None:
            raise RagdialError("give --gold LABELS.json or --dataroot ROOT (with --split)")
        gold = dataroot / split / "labels.json"
        knowledge = knowledge or (dataroot / "knowledge.json")
    kb_ids = {item.id for item in load_knowledge(knowledge)} if knowledge is not None else None
    gold_labels = read_labels(gold)
    predictions = check_predictions(pred, read_json(pred), gold_labels, version, kb_ids)
    return gold_labels, predictions


@app.command("dstc9")
def dstc9(
    pred: PredOpt,
    gold: GoldOpt = None,
    dataroot: DatarootOpt = None,
    split: SplitOpt = "val",
    knowledge: KnowledgeOpt = None,
    json_: JsonOpt = False,
    out: OutOpt = None,
) -> None:
    """DSTC9 track 1: detection P/R/F, selection MRR@5/R@1/R@5, generation BLEU-1..4/METEOR/ROUGE (nltk)."""
    from ragdial.metrics.challenges.dstc import score_dstc9

    gold_labels, predictions = _dstc_inputs("dstc9", gold, pred, dataroot, split, knowledge)
    report(score_dstc9(gold_labels, predictions), json_, out)


@app.command("dstc11")
def dstc11(
    pred: PredOpt,
    gold: GoldOpt = None,
    dataroot: DatarootOpt = None,
    split: SplitOpt = "val",
    knowledge: KnowledgeOpt = None,
    meteor: Annotated[bool, typer.Option(help="METEOR 1.5 (needs Java); --no-meteor reports it as 0")] = True,
    json_: JsonOpt = False,
    out: OutOpt = None,
) -> None:
    """DSTC11 track 5: detection P/R/F, selection P/R/F/EM, generation BLEU/METEOR 1.5/ROUGE."""
    from ragdial.metrics.challenges.dstc import score_dstc11

    gold_labels, predictions = _dstc_inputs("dstc11", gold, pred, dataroot, split, knowledge)
    report(score_dstc11(gold_labels, predictions, with_meteor=meteor), json_, out)


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


def refuse_identical(pred: Path, pairs: list[tuple[str, str, str]], allow: bool) -> None:
    """Stop when every prediction equals its gold: almost always a file whose gold was overwritten."""
    if allow or not pairs or any(generated not in (gold, raw) for generated, gold, raw in pairs):
        return
    raise RagdialError(
        f"{pred}: every one of {len(pairs)} predictions equals its gold response (was the gold field overwritten?); "
        "pass --allow-identical to score it anyway"
    )


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
    from ragdial.datasets import mobilecs2
    from ragdial.metrics.challenges.checks import require_all
    from ragdial.metrics.challenges.futuredial import score_track1

    dataset = mobilecs2.load(gold, split, global_kb=kb, faq=faq, rules=rules)
    ranked = mobilecs2.read_track1(pred, dataset)
    scored = [e for e in dataset.examples if e.meta.get("scored_source") and e.knowledge_ids]
    require_all(pred, ranked, [e.id for e in scored], "turns with gold knowledge")
    report(score_track1([e.knowledge_ids for e in scored], [ranked[e.id] for e in scored], rules), json_, out)


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
    from ragdial.datasets import mobilecs2
    from ragdial.metrics.challenges.checks import require_all
    from ragdial.metrics.challenges.futuredial import Track2Turn, score_track2

    if gold is None:  # the records carry their gold (the official result-file keys)
        records = mobilecs2.read_track2(pred)
        turns = []
        for key, record in records.items():
            for name in ("客服", "查询结果"):
                if not isinstance(record.get(name), str):
                    raise DataFormatError(pred, "without --gold every record needs the gold string", key, name)
            turns.append(Track2Turn(record["客服-生成"], record["客服"], record["查询结果"]))
        pairs = [(t.generated, t.response, t.response) for t in turns]
        from ragdial.text.tokenize import detect_language

        language = detect_language(" ".join(t.response for t in turns[:200]))
    else:
        dataset = mobilecs2.load(gold, split, global_kb=kb, faq=faq, rules=rules)
        records = mobilecs2.read_track2(pred, dataset)
        require_all(pred, records, [e.id for e in dataset.examples], "turns")
        turns, pairs = [], []
        for e in dataset.examples:
            fields = mobilecs2.gold_fields(dataset.kb, e)
            turns.append(Track2Turn(records[e.id]["客服-生成"], fields["客服"], fields["查询结果"]))
            pairs.append((records[e.id]["客服-生成"], fields["客服"], str(e.meta.get("gold_response") or "")))
        language = dataset.language
    refuse_identical(pred, pairs, allow_identical)
    report(score_track2(turns, bertscore_model, bertscore_layers, language, rules), json_, out)


@app.command("kdsd")
def kdsd(
    pred: PredOpt,
    gold: Annotated[Path, typer.Option("--gold", help="Huawei/KdConv dialogs file (e.g. valid.json)")],
    json_: JsonOpt = False,
    out: OutOpt = None,
) -> None:
    """Knowledge-driven spoken dialogue (Huawei): triple P/R/F1, char BLEU-1/2, DISTINCT-1/2, F1, score."""
    from ragdial.datasets import kdconv
    from ragdial.metrics.challenges.checks import require_all
    from ragdial.metrics.challenges.kdsd import score_kdsd

    dataset = kdconv.load(gold)
    result = kdconv.read_result(pred)
    keys = [e.id for e in dataset.examples]
    require_all(pred, result, keys, "system turns")
    predicted = [
        [kdconv.triple_id(a["name"], a["attrname"], a["attrvalue"]) for a in result[k].get("attrs") or []] for k in keys
    ]
    scores = score_kdsd(
        [e.knowledge_ids for e in dataset.examples],
        predicted,
        [e.response or "" for e in dataset.examples],
        [result[k]["message"] for k in keys],
    )
    report(scores, json_, out)


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
    from ragdial.datasets import smp2017 as smp_data
    from ragdial.metrics.challenges.checks import require_all
    from ragdial.metrics.challenges.smp2017 import score_smp2017
    from ragdial.metrics.classification import plot_confusion

    dataset = smp_data.load(gold, split)
    predicted = smp_data.read_predictions(pred)
    keys = [e.id for e in dataset.examples]
    require_all(pred, predicted, keys, "utterances")
    labels = sorted({*smp_data.labels(dataset), *(predicted[k] for k in keys)})
    scores = score_smp2017([e.intent for e in dataset.examples], [predicted[k] for k in keys], labels)
    if confusion_png is not None:
        plot_confusion(scores.extra["confusion"], scores.extra["labels"], confusion_png, f"SMP2017 {split}")
    report(scores, json_, out)
