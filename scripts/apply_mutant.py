"""Apply ONE mutmut mutant to a copy of ``src/`` and run chosen tests on it: how a new test's kill is checked.

A mutation run (``scripts/mutation.py``) names its survivors, e.g. ``ragdial.task.manager.x__sold_out__mutmut_3`` or
``ragdial.retrieval.entities.xǁEntityTrackerǁ_spans__mutmut_12``. This script regenerates that file's mutants with
mutmut's own generator (the same numbering as a run of the same source), swaps the one mutated function into the
original file, and writes the result into a fresh copy of the repository's ``src/``, ``tests/``, ``benchmarks/`` and
``pyproject.toml`` under a temporary folder. Then it runs pytest there (``PYTHONPATH`` = the copy's ``src/``, the
data absent unless ``--data present``), first on the unmutated copy when ``--baseline`` is given. A test *kills* the
mutant when it passes on the original source and fails on the mutant. Nothing in the worktree is changed.

    python scripts/apply_mutant.py show ragdial.task.manager.x__sold_out__mutmut_3      # the diff only
    python scripts/apply_mutant.py list ragdial.task.manager._sold_out                  # its mutants, with diffs
    python scripts/apply_mutant.py run ragdial.task.manager.x__sold_out__mutmut_3 \\
        tests/test_task_sample30.py --baseline                                          # exit 0 = killed

``run`` exits 0 when the mutant is killed (the tests fail on it, and pass on the original with ``--baseline``),
1 when it survives, 2 when the baseline already fails (the test proves nothing), 3 on bad input.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

ROOT = Path(__file__).resolve().parents[1]
SEPARATOR = "ǁ"
"""mutmut's separator of class and method in a mangled name (``xǁClassǁmethod``)."""


class MutantError(Exception):
    """A mutant name that does not fit the source (no such file, function or mutant number)."""


@dataclass(frozen=True)
class Mutant:
    """One mutant: the source file it lives in, its mangled local name and the function it changes."""

    name: str
    """Full mutmut name, e.g. ``ragdial.task.bookings.xǁBookingActsǁ_class_not_there__mutmut_4``."""
    path: Path
    """The source file, relative to the repository root (``src/ragdial/...py``)."""
    local: str
    """The mangled local name (``xǁBookingActsǁ_class_not_there__mutmut_4``)."""
    function: str
    """The name of the function or method the mutant changes (``_class_not_there``)."""
    cls: str | None
    """The class of a method (``BookingActs``), None for a top-level function."""


def source_path(module: str, root: Path = ROOT) -> Path:
    """The file of a dotted module name under ``root/src`` (a package's ``__init__.py`` too)."""
    base = Path("src", *module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if (root / candidate).is_file():
            return candidate
    raise MutantError(f"no source file for module {module!r} under {root / 'src'}")


def parse_name(name: str, root: Path = ROOT) -> Mutant:
    """Split a full mutmut name into the file, the mangled local name and the function name."""
    if "__mutmut_" not in name:
        raise MutantError(f"{name!r} is not a mutmut mutant name (no '__mutmut_N')")
    parts = name.split(".")
    index = next((i for i, p in enumerate(parts) if p.startswith(("x_", "x" + SEPARATOR))), None)
    if index is None or index == 0:
        raise MutantError(f"{name!r}: no mangled function part ('x_name' or 'xǁClassǁname')")
    local = ".".join(parts[index:])
    mangled = local.partition("__mutmut_")[0]
    if SEPARATOR in mangled:
        _, cls, function = mangled.split(SEPARATOR, 2)
        return Mutant(name, source_path(".".join(parts[:index]), root), local, function, cls)
    return Mutant(name, source_path(".".join(parts[:index]), root), local, mangled[2:], None)


@dataclass(frozen=True)
class FileMutants:
    """Every mutant mutmut generates for one source file, in mutmut's numbering (without rendering the file)."""

    source: str
    module: cst.Module
    """The parsed source (the nodes the mutations refer to)."""
    functions: dict[str, cst.FunctionDef]
    """Mangled function name (``x_name`` / ``xǁClassǁname``) -> its node in ``module``."""
    mutations: dict[str, tuple[str, cst.CSTNode, cst.CSTNode]]
    """Local mutant name -> (mangled function name, the original node, the node that replaces it)."""

    @property
    def names(self) -> list[str]:
        return list(self.mutations)


def file_mutants(path: Path, root: Path = ROOT) -> FileMutants:
    """The mutants of ``path``: mutmut's own generator, numbered as ``combine_mutations_to_source`` numbers them
    (each top-level function and each method of a top-level class, in file order, mutations from 1)."""
    from mutmut.mutation.file_mutation import create_mutations, group_by_top_level_node
    from mutmut.mutation.trampoline_templates import mangle_function_name

    source = (root / path).read_text(encoding="utf-8")
    module, mutations, _, _ = create_mutations(str(path), source)
    grouped = group_by_top_level_node(mutations)
    functions: dict[str, cst.FunctionDef] = {}
    found: dict[str, tuple[str, cst.CSTNode, cst.CSTNode]] = {}
    for node, cls in _top_level_functions(module):
        mangled = mangle_function_name(name=node.name.value, class_name=cls)
        functions[mangled] = node
        for i, mutation in enumerate(grouped.get(node, ()), start=1):
            found[f"{mangled}__mutmut_{i}"] = (mangled, mutation.original_node, mutation.mutated_node)
    return FileMutants(source, module, functions, found)


def _top_level_functions(module: cst.Module) -> list[tuple[cst.FunctionDef, str | None]]:
    """(node, class name or None) of each top-level function and each method of a top-level class, in order."""
    out: list[tuple[cst.FunctionDef, str | None]] = []
    for node in module.body:
        if isinstance(node, cst.FunctionDef):
            out.append((node, None))
        elif isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock):
            out += [(method, node.name.value) for method in node.body.body if isinstance(method, cst.FunctionDef)]
    return out


def apply_to_source(mutant: Mutant, mutants: FileMutants) -> str:
    """The file's source with the one change ``mutant`` makes."""
    from mutmut.mutation.file_mutation import deep_replace

    if mutant.local not in mutants.mutations:
        stem = mutant.local.partition("__mutmut_")[0]
        known = [n for n in mutants.names if n.partition("__mutmut_")[0] == stem]
        hint = f" (this function has {len(known)} mutants)" if known else " (no mutant of this function)"
        raise MutantError(f"{mutant.name!r} is not among the mutants of {mutant.path}{hint}")
    mangled, old, new = mutants.mutations[mutant.local]
    function = mutants.functions[mangled]
    changed = deep_replace(function, old, new)
    assert isinstance(changed, cst.FunctionDef)
    replaced = mutants.module.deep_replace(function, changed)
    assert isinstance(replaced, cst.Module)
    return replaced.code


def diff(mutant: Mutant, source: str, changed: str) -> str:
    """The unified diff of the source and the mutated source (a few lines of context)."""
    lines = difflib.unified_diff(
        source.splitlines(), changed.splitlines(), str(mutant.path), str(mutant.path), n=2, lineterm=""
    )
    return "\n".join(lines)


def copy_tree(root: Path, work: Path) -> None:
    """Copy what the tests need (``src``, ``tests``, ``benchmarks``, ``pyproject.toml``) into ``work``."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for name in ("src", "tests", "benchmarks"):
        if (root / name).is_dir():
            shutil.copytree(root / name, work / name, ignore=ignore)
    shutil.copy2(root / "pyproject.toml", work / "pyproject.toml")


def run_tests(work: Path, tests: list[str], data: str, extra: list[str]) -> int:
    """pytest on ``tests`` in the copy ``work`` (its ``src`` first on the path); returns pytest's exit code."""
    env = {**os.environ, "PYTHONPATH": str(work / "src"), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if data == "absent":
        env["RAGDIAL_DATA"] = str(work / "no-shared-data")
    else:
        sys.path.insert(0, str(ROOT / "src"))
        from ragdial.paths import data_root

        env["RAGDIAL_DATA"] = str(data_root().resolve())
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", *extra, *tests]
    print(f"apply_mutant: {' '.join(command)} (in {work}, data {data})", flush=True)
    return subprocess.run(command, cwd=work, env=env).returncode


def _tests_in_copy(tests: list[str]) -> list[str]:
    """Test paths as given (relative to the repository, or absolute inside it), relative to the copy's root."""
    out = []
    for test in tests:
        path, sep, rest = test.partition("::")
        p = Path(path)
        if p.is_absolute():
            try:
                p = p.resolve().relative_to(ROOT)
            except ValueError as err:
                raise MutantError(f"{test}: not inside {ROOT}") from err
        if not (ROOT / p).exists():
            raise MutantError(f"{test}: no such test file under {ROOT}")
        out.append(str(p) + sep + rest)
    return out


def list_mutants(target: str) -> int:
    """Print every mutant of one function (``ragdial.pkg.module.function`` or ``...Class.method``) with its diff."""
    module, _, function = target.rpartition(".")
    cls = None
    try:
        path = source_path(module)
    except MutantError:  # Class.method
        module, _, cls = module.rpartition(".")
        path = source_path(module)
    mutants = file_mutants(path)
    prefix = f"x{SEPARATOR}{cls}{SEPARATOR}{function}__mutmut_" if cls else f"x_{function}__mutmut_"
    chosen = [n for n in mutants.names if n.startswith(prefix)]
    if not chosen:
        raise MutantError(f"no mutant of {target!r} in {path}")
    for local in chosen:
        mutant = parse_name(f"{module}.{local}")
        print(f"## {mutant.name}\n{diff(mutant, mutants.source, apply_to_source(mutant, mutants))}\n")
    return 0


def sample_names(module: str, size: int, seed: int, root: Path = ROOT) -> list[str]:
    """The mutants ``scripts/mutation.py --modules MODULE --sample SIZE --seed SEED`` tests on the source under
    ``root``, computed without mutmut's run: the same generator, the same order (files as mutmut's result files
    sort, names sorted within a file), the same seeded draw. For a past sample, pass a checkout of its commit."""
    import fnmatch
    import importlib.util
    import random

    spec = importlib.util.spec_from_file_location("mutation", ROOT / "scripts" / "mutation.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)  # (scripts/ is not on mypy's path: the table is read from the file)
    patterns: list[str] = script.MODULES[module][0]
    prefix: str = script.PREFIX.get(module, f"ragdial.{module}.")
    files = sorted(
        p.relative_to(root)
        for p in (root / "src").rglob("*.py")
        if any(fnmatch.fnmatch(str(p.relative_to(root)), pattern) for pattern in patterns)
    )
    every: list[str] = []
    for path in sorted(files, key=lambda p: Path(str(p) + ".meta")):
        dotted = ".".join(path.with_suffix("").parts[1:]).removesuffix(".__init__")
        every += sorted(f"{dotted}.{n}" for n in file_mutants(path, root).names if f"{dotted}.".startswith(prefix))
    return sorted(random.Random(seed).sample(every, min(size, len(every))))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the diff of one mutant")
    show.add_argument("name")
    listing = sub.add_parser("list", help="print every mutant of one function with its diff")
    listing.add_argument("function", help="ragdial.pkg.module.function or ragdial.pkg.module.Class.method")
    drawn = sub.add_parser("sample", help="name the mutants of a seeded sample of scripts/mutation.py")
    drawn.add_argument("module", help="a module of scripts/mutation.py (task, retrieval, ...)")
    drawn.add_argument("--sample", type=int, required=True)
    drawn.add_argument("--seed", type=int, required=True)
    drawn.add_argument("--root", type=Path, default=ROOT, help="the checkout whose source is sampled")
    run = sub.add_parser("run", help="apply one mutant to a copy of src/ and run tests on it")
    run.add_argument("name")
    run.add_argument("tests", nargs="+", help="test files or node ids, relative to the repository root")
    run.add_argument("--data", choices=("absent", "present"), default="absent")
    run.add_argument("--baseline", action="store_true", help="first run the tests on the unmutated copy")
    run.add_argument("--keep", action="store_true", help="keep the temporary copy (its path is printed)")
    run.add_argument("--pytest-args", default="-x", help="extra pytest arguments (default: -x)")
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            return list_mutants(args.function)
        if args.command == "sample":
            print("\n".join(sample_names(args.module, args.sample, args.seed, args.root.resolve())))
            return 0
        mutant = parse_name(args.name)
        mutants = file_mutants(mutant.path)
        changed = apply_to_source(mutant, mutants)
        print(diff(mutant, mutants.source, changed), flush=True)
        if args.command == "show":
            return 0
        tests = _tests_in_copy(args.tests)
    except MutantError as err:
        print(f"apply_mutant: {err}", file=sys.stderr)
        return 3
    work = Path(tempfile.mkdtemp(prefix="apply-mutant-"))
    try:
        copy_tree(ROOT, work)
        extra = args.pytest_args.split()
        if args.baseline and run_tests(work, tests, args.data, extra) != 0:
            print("apply_mutant: the tests fail on the ORIGINAL source: they prove nothing about the mutant")
            return 2
        (work / mutant.path).write_text(changed, encoding="utf-8")
        code = run_tests(work, tests, args.data, extra)
        if code not in (0, 1, 2):  # 0 passed; 1 failed; 2 interrupted (a collection error); else pytest misused
            print(f"apply_mutant: pytest exit {code} (usage error or no test collected): no verdict")
            return 3
        verdict = "KILLED" if code else "SURVIVED"
        print(f"apply_mutant: {mutant.name}: {verdict} (pytest exit {code})")
        return 0 if code else 1
    finally:
        if args.keep:
            print(f"apply_mutant: copy kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
