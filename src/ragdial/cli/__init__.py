"""The ``ragdial`` command line: one Typer app, one sub-app per job.

``main`` imports only the module of the command it runs (``ragdial serve`` does not import the evaluation,
training and data commands, nor the challenges they use); ``app`` is the whole app, built on first access.
"""

from __future__ import annotations

import importlib
import sys

import typer

from ragdial.errors import RagdialError

HELP = "Knowledge-grounded dialog: data, eval, serve."
# (command, module under ragdial.cli, how it is added: "app" a sub-app, "register" the service commands, else the
# name of the function that is the command), in the order ``ragdial --help`` lists them
COMMANDS = (
    ("data", "data", "app"),
    ("index", "index", "app"),
    ("retrieve", "retrieve", "app"),
    ("train", "train", "app"),
    ("generate", "generate", "app"),
    ("eval", "eval", "app"),
    ("chat", "service", "register"),
    ("serve", "service", "register"),
    ("demo", "service", "register"),
    ("run", "service", "register"),
    ("task", "task", "app"),
    ("simulate", "simulate", "simulate"),
    ("predict", "predict", "predict"),
)
_whole: typer.Typer | None = None


def build_app(only: str | None = None) -> typer.Typer:
    """The app with every command, or with ``only`` that one when it names a command (then only its module is
    imported); the same group either way (``ragdial serve ...`` parses alike)."""
    wanted = [c for c in COMMANDS if c[0] == only] or list(COMMANDS)
    application = typer.Typer(no_args_is_help=True, add_completion=False, help=HELP)

    @application.callback()
    def _group() -> None:  # a group even with one command: ``ragdial serve`` keeps its command name
        """Knowledge-grounded dialog: data, eval, serve."""

    registered = False
    for name, module_name, how in wanted:
        module = importlib.import_module(f"ragdial.cli.{module_name}")
        if how == "app":
            application.add_typer(module.app, name=name)
        elif how == "register":  # the four service commands at once (one module)
            if not registered:
                module.register(application)
                registered = True
        else:
            application.command(name)(getattr(module, how))
    return application


def __getattr__(name: str) -> typer.Typer:
    """``ragdial.cli.app``: the whole app, built once on first use."""
    global _whole
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _whole is None:
        _whole = build_app()
    return _whole


def _command(argv: list[str]) -> str | None:
    """The command ``argv`` names (its first word), if any."""
    return argv[0] if argv and not argv[0].startswith("-") else None


def main() -> None:
    """Entry point: user errors print one line and exit 2, never a traceback."""
    try:
        build_app(_command(sys.argv[1:]))(standalone_mode=False)
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
    except Exception as err:  # usage errors: click's, or the copy of click newer typer releases carry
        show, code = getattr(err, "show", None), getattr(err, "exit_code", None)
        if callable(show) and isinstance(code, int):
            show()
            sys.exit(code)
        raise
