"""``Any`` only where a third-party type demands it: every ``Any`` in ``src/ragdial`` is on a line marked
``# Any: <library>`` (the untyped library that makes it so)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "ragdial"
MARK = "# Any:"

# every module of src/ragdial: each Any is typed away or marked (the list of typed packages grew to all of src)
TYPED = sorted(p.name for p in SRC.iterdir() if (p.is_dir() and (p / "__init__.py").is_file()) or p.suffix == ".py")


def unmarked(path: Path) -> list[str]:
    """``file:line: text`` of each line of ``path`` whose code uses ``Any`` (``Any``, ``typing.Any``, also in a
    string annotation) without a ``# Any: <library>`` mark on that line."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Name) and node.id == "Any") or (
            isinstance(node, ast.Attribute) and node.attr == "Any"
        ):
            found.add(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "Any" in node.value:
            try:  # a string annotation such as "dict[str, Any]"
                inner = ast.parse(node.value, mode="eval")
            except SyntaxError:
                continue
            if any(isinstance(n, ast.Name) and n.id == "Any" for n in ast.walk(inner)):
                found.add(node.lineno)
    return [f"{path}:{n}: {lines[n - 1].strip()}" for n in sorted(found) if MARK not in lines[n - 1]]


def files(entry: str) -> list[Path]:
    target = SRC / entry
    return sorted(target.rglob("*.py")) if target.is_dir() else [target]


def test_every_package_is_checked():
    assert {"task", "understanding", "recipes", "pipeline", "jsontypes.py", "schema.py"} <= set(TYPED)
    assert sum(len(files(entry)) for entry in TYPED) == len(list(SRC.rglob("*.py")))


def test_typed_packages_use_any_only_where_a_library_demands_it():
    problems = [problem for entry in TYPED for path in files(entry) for problem in unmarked(path)]
    assert not problems, "an unmarked Any (type it, or mark the line '# Any: <library>'):\n" + "\n".join(problems)


def test_the_check_finds_each_unmarked_any(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import typing\nfrom typing import Any\n\n"
        "a: Any = 1\n"
        "b: typing.Any = 2\n"
        "c: 'dict[str, Any]' = {}\n"
        "d: Any = 3  # Any: numpy\n"
        "e = 'Any text in a string'\n",
        encoding="utf-8",
    )
    assert [p.split(":")[1] for p in unmarked(sample)] == ["4", "5", "6"]
