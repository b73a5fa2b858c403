"""``ragdial data``: stats, validate and convert any supported format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ragdial import challenges, datasets
from ragdial.errors import OptionError
from ragdial.io import write_lines
from ragdial.schema import Dataset

app = typer.Typer(no_args_is_help=True, help="Inspect, validate and convert benchmark data.")
FormatArg = Annotated[str, typer.Argument(help=f"one of: {', '.join(datasets.FORMATS)}")]
PathArg = Annotated[Path, typer.Argument(help="data file or folder (see README)")]
DefaultPathArg = Annotated[
    Path | None, typer.Argument(help="data file or folder (default: the challenge's folder under $RAGDIAL_DATA)")
]
SplitOpt = Annotated[str | None, typer.Option(help="split (val, train, develop, ...)")]
OptionsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        "-o",
        help="loader option KEY=VALUE, repeatable (dstc: knowledge; kdconv/huawei: kb_path, targets; "
        "mobilecs2: global_kb, faq, language)",
    ),
]


def _load(format: str, path: Path | None, split: str | None, options: list[str] | None) -> Dataset:
    parsed = {}
    for option in options or []:
        key, sep, value = option.partition("=")
        if not sep or not key:
            raise OptionError(f"--option takes KEY=VALUE, not {option!r}")
        parsed[key] = value
    return challenges.for_format(format).load(path, split, format, **parsed)


@app.command()
def stats(
    format: FormatArg,
    path: DefaultPathArg = None,
    split: SplitOpt = None,
    json_: bool = typer.Option(False, "--json"),
    option: OptionsOpt = None,
) -> None:
    """Count dialogs, examples, knowledge-seeking examples and knowledge items."""
    dataset = _load(format, path, split, option)
    numbers = dataset.stats()
    if json_:
        typer.echo(json.dumps({"format": format, "split": dataset.split, **numbers}))
        return
    table = Table(title=f"{format} {dataset.split} ({path or dataset.source_path})")
    table.add_column("what")
    table.add_column("count", justify="right")
    for key, value in numbers.items():
        table.add_row(key, f"{value:,}")
    Console().print(table)


@app.command()
def validate(format: FormatArg, path: DefaultPathArg = None, split: SplitOpt = None, option: OptionsOpt = None) -> None:
    """Read every record and check every field and knowledge reference; exit 2 on the first problem."""
    dataset = _load(format, path, split, option)
    for example in dataset.examples:
        for item_id in example.knowledge_ids:
            dataset.kb.get(item_id)
    typer.echo(f"ok: {len(dataset.examples)} examples, {len(dataset.kb)} knowledge items")


@app.command()
def convert(format: FormatArg, path: PathArg, out: Path, split: SplitOpt = None, option: OptionsOpt = None) -> None:
    """Write the unified schema as JSON lines (knowledge items, then examples)."""
    dataset = _load(format, path, split, option)
    write_lines(out, dataset.iter_jsonl())
    typer.echo(f"wrote {out}")
