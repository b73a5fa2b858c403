"""``ragdial generate``: learn a template model, and generate replies over a benchmark into its submission file."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress

from ragdial import challenges, datasets
from ragdial.challenges import Prediction
from ragdial.components import BuildContext
from ragdial.generation import GENERATORS, create
from ragdial.generation.batch import generate_all
from ragdial.generation.exemplars import EXEMPLARS
from ragdial.generation.template import TemplateGenerator

app = typer.Typer(no_args_is_help=True, help="Grounded response generation (template, llama.cpp, OpenAI-compatible).")
FormatArg = Annotated[str, typer.Argument(help=f"one of: {', '.join(datasets.FORMATS)}")]
PathArg = Annotated[Path, typer.Argument(help="data file or folder (see README)")]
SplitOpt = Annotated[str | None, typer.Option(help="split (val, dev, ...)")]


@app.command()
def train(
    format: FormatArg,
    path: PathArg,
    out: Annotated[Path, typer.Option(help="where to write the template model JSON")],
    split: SplitOpt = None,
) -> None:
    """Learn a template model (patterns, framing sentences, fallback) from a labelled split."""
    dataset = datasets.load(format, path, split)
    generator = TemplateGenerator.train(dataset.examples, dataset.kb, dataset.language)
    generator.save(out)
    model = generator.model
    typer.echo(
        f"wrote {out}: {len(model.attribute_patterns)} attribute patterns, {len(model.closers)} closers, "
        f"learned from {model.trained_on} replies"
    )


@app.command()
def batch(
    format: FormatArg,
    path: PathArg,
    out: Annotated[Path, typer.Option(help="the submission file to write")],
    split: SplitOpt = None,
    backend: Annotated[str, typer.Option(help=f"one of: {', '.join(GENERATORS.names())}")] = "template",
    template_model: Annotated[Path | None, typer.Option(help="template model JSON (template backend)")] = None,
    model: Annotated[str | None, typer.Option(help="GGUF path (llama) or served model name (openai)")] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible server, e.g. http://127.0.0.1:8000")] = None,
    exemplars_from: Annotated[
        Path | None, typer.Option(help="training data (same format) for exemplars, as a config's exemplars block")
    ] = None,
    n_exemplars: int = 2,
    prompt_turns: Annotated[
        int,
        typer.Option(
            min=0,
            help="llama: dialog turns shown to the model (0: the whole dialog; the service shows the last 3 for speed)",
        ),
    ] = 0,
    max_tokens: int = 128,
    seed: int = 0,
    limit: Annotated[int | None, typer.Option(help="a seeded random sample of this many examples")] = None,
) -> None:
    """Generate a reply for every example (grounded in its knowledge labels) and write the official file."""
    challenge = challenges.for_format(format)
    track = challenge.track("response")
    dataset = challenge.load(path, split, format)
    options: dict[str, object] = {"language": dataset.language} if backend == "template" else {}
    if backend == "template":
        options["template_model"] = str(template_model) if template_model else None
    elif backend == "llama":
        options.update(model=model, prompt_turns=prompt_turns)
    else:
        options.update(base_url=base_url, model=model)
    generator = create(backend, **options)
    exemplars = None
    if exemplars_from is not None and backend != "template":
        ctx = BuildContext(dataset, dataset.language)
        exemplars = EXEMPLARS.build("dataset", ctx, format=format, path=str(exemplars_from), k=n_exemplars)
    examples = list(dataset.examples)
    if limit is not None and limit < len(examples):
        chosen = set(random.Random(seed).sample(range(len(examples)), limit))
        examples = [e for i, e in enumerate(examples) if i in chosen]
    try:
        with Progress(transient=True) as progress:
            task = progress.add_task("generating", total=len(examples))
            generate_all(
                generator,
                dataset,
                examples,
                on_done=lambda _: progress.advance(task),
                max_tokens=max_tokens,
                seed=seed,
                exemplars=exemplars,
            )
    finally:
        generator.close()
    predictions = {e.id: Prediction.of_example(e) for e in examples}
    challenge.write_track(track, out, dataset, examples, predictions)
    typer.echo(f"wrote {out}: {len(examples)} examples, backend {backend}")
