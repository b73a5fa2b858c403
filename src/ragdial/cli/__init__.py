"""The ``ragdial`` command line: one Typer app, one sub-app per job."""

from __future__ import annotations

import sys

import typer

from ragdial.cli import data as data_cli
from ragdial.cli import eval as eval_cli
from ragdial.cli import generate as generate_cli
from ragdial.cli import index as index_cli
from ragdial.cli import predict as predict_cli
from ragdial.cli import retrieve as retrieve_cli
from ragdial.cli import service as service_cli
from ragdial.cli import simulate as simulate_cli
from ragdial.cli import task as task_cli
from ragdial.cli import train as train_cli
from ragdial.errors import RagdialError

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Knowledge-grounded dialog: data, eval, serve.")
app.add_typer(data_cli.app, name="data")
app.add_typer(index_cli.app, name="index")
app.add_typer(retrieve_cli.app, name="retrieve")
app.add_typer(train_cli.app, name="train")
app.add_typer(generate_cli.app, name="generate")
app.add_typer(eval_cli.app, name="eval")
service_cli.register(app)
app.add_typer(task_cli.app, name="task")
app.command("simulate")(simulate_cli.simulate)
app.command("predict")(predict_cli.predict)


def main() -> None:
    """Entry point: user errors print one line and exit 2, never a traceback."""
    try:
        app(standalone_mode=False)
    except RagdialError as err:
        typer.secho(f"error: {err}", err=True, fg="red")
        sys.exit(2)
    except OSError as err:  # unreadable input, unwritable output
        typer.secho(f"error: {err}", err=True, fg="red")
        sys.exit(2)
    except typer.Abort:
        sys.exit(1)
    except typer.Exit as exit_:
        sys.exit(exit_.exit_code)
    except Exception as err:  # click usage errors
        import click

        if isinstance(err, click.ClickException):
            err.show()
            sys.exit(err.exit_code)
        raise
