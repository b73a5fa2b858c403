"""``ragdial train RECIPE [DATA…] --out DIR``: train every component a shipped recipe (or a recipe YAML) names, with
a progress display, into a system folder that ``ragdial run RECIPE TEST --system DIR`` answers with."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ragdial import recipes
from ragdial.jsontypes import as_texts

SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="override a recipe option: KEY=VALUE, dotted keys, YAML values (system.top_k=5)"),
]
DataArg = Annotated[
    list[str] | None,
    typer.Argument(help="training data, [FORMAT:]PATH[@SPLIT] (default: the recipe's, under $RAGDIAL_DATA)"),
]


def train_recipe(recipe: str, data: list[str] | None, out: Path | None, set_: list[str] | None, seed: int) -> None:
    """Train ``recipe`` and report where its system folder went."""
    from ragdial.recipes.running import default_system
    from ragdial.recipes.training import train_recipe as train

    loaded = recipes.load_recipe(recipe, set_ or [])
    out = out or default_system(loaded.name)
    console = Console(stderr=True)
    started = time.perf_counter()
    with console.status(f"{loaded.name}: starting") as status:
        current = [""]
        since = [started]

        def step(name: str) -> None:
            if current[0]:
                console.print(f"  [green]done[/] {current[0]} ({time.perf_counter() - since[0]:.1f}s)")
            current[0], since[0] = name, time.perf_counter()
            status.update(f"{loaded.name}: {name} ...")

        info = train(loaded, out, data or [], step, seed)
        step("")
    typer.echo(
        f"trained {loaded.name} on {', '.join(as_texts(info['data']))} ({info['examples']} examples, "
        f"{info['knowledge_items']} knowledge items) in {time.perf_counter() - started:.1f}s; system in {out}\n"
        f"next: ragdial run {loaded.name} TEST_DATA --system {out}"
    )


def command(name: str) -> Callable[..., None]:
    """The ``ragdial train NAME`` command of one shipped recipe."""

    def train_one(
        data: DataArg = None,
        out: Annotated[Path | None, typer.Option("--out", "-o", help="system folder (default: systems/NAME)")] = None,
        set_: SetOpt = None,
        seed: int = 0,
    ) -> None:
        train_recipe(name, data, out, set_, seed)

    recipe = recipes.load_recipe(name)
    train_one.__doc__ = f"Recipe: {recipe.get('title') or name}. Trains every component it names."
    return train_one


def from_file(
    recipe: Annotated[Path, typer.Argument(help="a recipe YAML file (see src/ragdial/recipes/*.yaml)")],
    data: DataArg = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="system folder (default: systems/NAME)")] = None,
    set_: SetOpt = None,
    seed: int = 0,
) -> None:
    """Train every component of a recipe YAML file of your own."""
    train_recipe(str(recipe), data, out, set_, seed)


def register(app: typer.Typer) -> None:
    """Add ``train <recipe>`` for every shipped recipe and ``train recipe FILE`` to the ``train`` app."""
    for name in recipes.names():
        app.command(name)(command(name))
    app.command("recipe")(from_file)
