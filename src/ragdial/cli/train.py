"""``ragdial train``: fit models on benchmark data and save them."""

from __future__ import annotations

import typer

from ragdial.cli import train_understanding

app = typer.Typer(no_args_is_help=True, help="Train understanding classifiers (and retrievers).")
app.command("detector")(train_understanding.detector)
app.command("intent")(train_understanding.intent)
app.command("api-query")(train_understanding.api_query)
