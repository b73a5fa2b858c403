"""The ``ragdial`` entry point: a command imports only its own module, and usage errors are one message and exit
code 2, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# which modules a run imported, printed after the command (``--help`` exits through SystemExit)
PROBE = """
import sys
from ragdial.cli import main
try:
    main()
finally:
    print("MODULES", " ".join(sorted(m for m in sys.modules if m.startswith("ragdial."))))
"""


def _ragdial(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "100"}
    command = [sys.executable, "-c", PROBE, *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def _modules(result: subprocess.CompletedProcess) -> set[str]:
    line = next(line for line in result.stdout.splitlines() if line.startswith("MODULES"))
    return set(line.split()[1:])


def test_serve_imports_neither_the_other_commands_nor_the_challenges():
    result = _ragdial("serve", "--help")
    assert result.returncode == 0, result.stderr
    assert "--port" in result.stdout and "--workers" in result.stdout
    modules = _modules(result)
    assert "ragdial.cli.service" in modules
    assert not {"ragdial.cli.eval", "ragdial.cli.train", "ragdial.cli.data", "ragdial.challenges"} & modules


def test_the_whole_app_lists_every_command():
    result = _ragdial("--help")
    assert result.returncode == 0, result.stderr
    for command in ("data", "index", "retrieve", "train", "generate", "eval", "chat", "serve", "demo", "run"):
        assert f" {command} " in result.stdout, command
    assert {"ragdial.cli.eval", "ragdial.cli.service", "ragdial.cli.task"} <= _modules(result)
    import ragdial.cli
    from ragdial.cli import app

    assert ragdial.cli.app is app  # built once, on first access
    assert {group.name for group in app.registered_groups} == {
        "data",
        "index",
        "retrieve",
        "train",
        "generate",
        "eval",
        "task",
    }


def test_usage_errors_are_one_message_and_exit_2():
    for args, message in (
        (("nosuch",), "No such command 'nosuch'"),
        (("serve", "--port", "abc"), "Invalid value for '--port'"),
        (("eval", "futuredial-track2", "--no-such-option"), "No such option"),
    ):
        result = _ragdial(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr and "Traceback" not in result.stderr, result.stderr
