"""Mutation testing of the core modules with mutmut 3 (``make mutation``; not part of ``make test``: it is slow).

Each run works in its own copy of ``src/``, ``tests/`` and ``pyproject.toml`` under ``build/mutation/<data>/``
(mutmut writes its ``mutants/`` folder and result cache there, so the worktree stays clean and a second run only
re-tests what changed). ``--data absent`` points ``RAGDIAL_DATA`` at a folder that does not exist (a user's fresh
clone); ``--data present`` at the shared data. Only the fast tests of each module run (the ``slow`` marker is
deselected, and tests that drive the CLI in a subprocess are left out: mutmut cannot see which code a child process
ran). At the end it prints, per module, how many mutants were killed, survived, timed out or had no test, the
mutation score (killed + timeout) / (all - skipped), and the names of the survivors; ``summary.json`` keeps it.

    python scripts/mutation.py --modules metrics,understanding --data absent --max-children 2
    cd build/mutation/absent && ../../../.venv/bin/python -m mutmut show NAME   # the diff of one mutant
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# module -> (files mutmut mutates, the fast tests that exercise them: globs under tests/, minus EXCLUDED)
MODULES: dict[str, tuple[list[str], list[str]]] = {
    "metrics": (
        ["src/ragdial/metrics/*"],
        [
            "test_metrics_*.py",
            "test_challenges_*.py",
            "test_grounding_*.py",
            "test_task_agreement.py",
            "test_mobilecs2_official.py",
        ],
    ),
    "understanding": (
        ["src/ragdial/understanding/*"],
        [
            "test_understanding_*.py",
            "test_kb_calibration.py",
            "test_zero_shot*.py",
            "test_service_pipeline.py",
            "test_grounded_path.py",
            "test_boundaries.py",
        ],
    ),
    "task": (["src/ragdial/task/*"], ["test_task_*.py", "test_boundaries.py"]),
    # the grounding checker alone (it is part of metrics too): small enough for a full run
    "grounding": (["src/ragdial/metrics/grounding.py"], ["test_grounding_*.py", "test_metrics_*.py"]),
    "retrieval": (
        ["src/ragdial/retrieval/*"],
        [
            "test_retrieval_*.py",
            "test_zero_shot*.py",
            "test_boundaries.py",
            "test_precedent.py",  # retrieval/precedent.py
            "test_triple_selection.py",  # retrieval/triples.py
            "test_tuned*.py",  # retrieval/tuned.py (session 9: its 9 sampled mutants were "no tests" without it)
            "test_saved_meta.py",  # a saved reranker's metadata (retrieval/rerank.py)
        ],
    ),
}
EXCLUDED = {"test_metrics_cli.py", "test_understanding_cli.py", "test_task_cli.py"}
"""Tests that drive the CLI in a child process (mutmut cannot see what a child ran). ``test_retrieval_milvus.py``
runs against milvus-lite (a local file, no server), so it is in retrieval's selection."""


def test_files(modules: list[str]) -> list[str]:
    found = {p.name for m in modules for pattern in MODULES[m][1] for p in (ROOT / "tests").glob(pattern)}
    return [f"tests/{name}" for name in sorted(found - EXCLUDED)]


KILLED = {"killed", "timeout", "caught by type check"}
GENERATE = """
import os
from mutmut.__main__ import copy_also_copy_files, copy_src_dir, create_mutants, set_mutant_under_test
from mutmut.utils.file_utils import setup_source_paths
set_mutant_under_test("mutant_generation")
os.makedirs("mutants", exist_ok=True)
copy_src_dir()
copy_also_copy_files()
setup_source_paths()
create_mutants(1)
"""
"""mutmut's first step alone (mutmut 3.8): write the mutants without running any test, so a sample can be drawn."""


TIMEOUT_MULTIPLIER, TIMEOUT_CONSTANT = 3.0, 15.0
"""mutmut stops a mutant after ``(t + constant) * multiplier * 2`` CPU seconds, ``t`` the time its tests' calls took
in the clean run (fixture set-up is not counted in ``t``, hence the constant: at least 90 CPU seconds, several times
what the whole task selection uses). mutmut's defaults (1 and 15) let a mutant that makes a task dialog loop forever
run for up to half an hour of CPU; CPU time does not grow with the machine's load, so the margin holds when it is
busy. A mutant stopped this way is a "timeout" (counted as killed)."""


def _toml_list(values: list[str]) -> str:
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


def prepare(work: Path, modules: list[str]) -> None:
    """Copy the sources and tests into ``work`` and write the mutmut configuration for ``modules``."""
    work.mkdir(parents=True, exist_ok=True)
    for name in ("src", "tests", "benchmarks"):  # some tests read our locked sets under benchmarks/data
        shutil.rmtree(work / name, ignore_errors=True)
        shutil.copytree(ROOT / name, work / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    mutate = [p for m in modules for p in MODULES[m][0]]
    tests = test_files(modules)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    pyproject = pyproject.split("\n[tool.mutmut]")[0]
    pyproject += (
        "\n[tool.mutmut]\n"
        'source_paths = ["src/"]\n'
        'also_copy = ["benchmarks/"]\n'
        f"only_mutate = {_toml_list(mutate)}\n"
        f"pytest_add_cli_args = {_toml_list(['-p', 'no:randomly', '-p', 'no:cacheprovider', '-m', 'not slow'])}\n"
        f"pytest_add_cli_args_test_selection = {_toml_list(tests)}\n"
        "use_git_change_detection = false\n"
        f"timeout_multiplier = {TIMEOUT_MULTIPLIER}\n"
        f"timeout_constant = {TIMEOUT_CONSTANT}\n"
    )
    (work / "pyproject.toml").write_text(pyproject, encoding="utf-8")


def wilson(killed: int, tested: int, z: float = 1.96) -> list[float] | None:
    """95% Wilson interval of a score measured on ``tested`` mutants (a sample or an unfinished run)."""
    if not tested:
        return None
    p = killed / tested
    centre = (p + z * z / (2 * tested)) / (1 + z * z / tested)
    half = z * ((p * (1 - p) / tested + z * z / (4 * tested * tested)) ** 0.5) / (1 + z * z / tested)
    return [round(centre - half, 4), round(centre + half, 4)]


PREFIX = {"grounding": "ragdial.metrics.grounding."}
"""The mutant-name prefix of a module whose name is not its package's (default ``ragdial.<module>.``)."""


def _metas(work: Path, module: str) -> list[tuple[str, int | None]]:
    """(mutant name, exit code) of every mutant of ``module`` in mutmut's result files."""
    prefix = PREFIX.get(module, f"ragdial.{module}.")
    out = []
    for meta in sorted((work / "mutants" / "src" / "ragdial").rglob("*.meta")):
        codes = json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {})
        out += [(name, code) for name, code in sorted(codes.items()) if name.startswith(prefix)]
    return out


def mutant_names(work: Path, module: str) -> list[str]:
    """Every mutant mutmut generated for ``module`` (from its result files)."""
    return [name for name, _ in _metas(work, module)]


def collect(
    work: Path, modules: list[str], only: set[str] | None = None, earlier: dict[str, dict[str, str]] | None = None
) -> dict:
    """Statuses of every mutant of ``modules`` (or of those in ``only``) from mutmut's result files; ``earlier``
    (module -> mutant -> status of the run before a ``--survivors`` re-run) fills in the mutants not re-tested."""
    from mutmut.stats import status_by_exit_code

    summary: dict = {}
    for module in modules:
        statuses: dict[str, str] = {}
        for name, code in _metas(work, module):
            if only is None or name in only:
                statuses[name] = status_by_exit_code[code]
        if earlier is not None:  # a --survivors run: every mutant not re-tested keeps its earlier status
            statuses = {**earlier.get(module, {}), **{n: s for n, s in statuses.items() if s != "not checked"}}
        counts: Counter[str] = Counter(statuses.values())
        survivors = [
            f"{name}: {status}"
            for name, status in sorted(statuses.items())
            if status not in KILLED and status not in ("skipped", "not checked")
        ]
        total = sum(counts.values())
        tested = total - counts["skipped"] - counts["not checked"]  # an unfinished run scores what it checked
        killed = sum(counts[s] for s in KILLED)
        summary[module] = {
            "total": total,
            "tested": tested,
            "counts": dict(counts),
            "score": killed / tested if tested else None,
            "ci95": wilson(killed, tested),
            "survivors": survivors,
            "statuses": statuses,
        }
    return summary


def earlier_statuses(work: Path, module: str, row: dict) -> dict[str, str]:
    """Each mutant's status in the summary ``row`` of an earlier run (summaries written before statuses were kept:
    the survivors as listed, every other mutant of the sample killed)."""
    if "statuses" in row:
        return dict(row["statuses"])
    sample = work / "sample.txt"
    names = sample.read_text(encoding="utf-8").split() if sample.is_file() else []
    statuses = {name: "killed" for name in names if name.startswith(PREFIX.get(module, f"ragdial.{module}."))}
    statuses.update(dict(s.split(": ", 1) for s in row.get("survivors", [])))
    return statuses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modules", default="metrics,understanding,task,retrieval")
    parser.add_argument("--data", choices=("absent", "present", "both"), default="both")
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument("--workdir", type=Path, default=ROOT / "build" / "mutation")
    parser.add_argument("--report-only", action="store_true", help="summarise the last run without running")
    parser.add_argument(
        "--sample",
        type=int,
        default=0,
        help="test a seeded random sample of this many mutants per module (the score is then an estimate)",
    )
    parser.add_argument("--seed", type=int, default=18, help="seed of --sample")
    parser.add_argument(
        "--survivors", action="store_true", help="re-test only the mutants that survived the last run (after new tests)"
    )
    parser.add_argument(
        "--from-absent",
        action="store_true",
        help="with --data present: start from the data-absent run of the same --workdir and re-test only its survivors "
        "with the data (a mutant killed without the data is killed with it: the data only adds tests)",
    )
    args = parser.parse_args()
    modules = [m.strip() for m in args.modules.split(",") if m.strip()]
    unknown = [m for m in modules if m not in MODULES]
    if unknown:
        parser.error(f"unknown module(s) {', '.join(unknown)}; known: {', '.join(MODULES)}")
    sys.path.insert(0, str(ROOT / "src"))
    from ragdial.paths import data_root

    modes = ["absent", "present"] if args.data == "both" else [args.data]
    status = 0
    for mode in modes:
        work = (args.workdir / mode).resolve()
        survivors_only = args.survivors
        if mode == "present" and args.from_absent and not args.report_only:
            absent = (args.workdir / "absent").resolve()
            if not (absent / "summary.json").is_file():
                parser.error(f"--from-absent: no data-absent run in {absent}")
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(absent, work, symlinks=True)
            (work / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)  # map the shared-data tests too
            (work / "mutmut.log").unlink(missing_ok=True)
            survivors_only = True
        earlier = None
        if not args.report_only:
            prepare(work, modules)
            env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
            env.pop("PYTHONPATH", None)
            env["RAGDIAL_DATA"] = str(work / "no-shared-data") if mode == "absent" else str(data_root())
            if mode == "present" and not data_root().is_dir():
                print(f"mutation: shared data not found at {data_root()}; skipping the data-present run")
                continue
            command = [sys.executable, "-m", "mutmut", "run", "--max-children", str(args.max_children)]
            if survivors_only and (work / "summary.json").is_file():
                last = json.loads((work / "summary.json").read_text(encoding="utf-8"))
                names = [s.split(": ")[0] for m in modules for s in last.get(m, {}).get("survivors", [])]
                earlier = {m: earlier_statuses(work, m, last.get(m, {})) for m in modules}
                command += names or ["no-survivors-left"]
            elif args.sample:  # generate the mutants only (mutmut's first step), then sample their names
                subprocess.run([sys.executable, "-c", GENERATE], cwd=work, env=env, check=True, capture_output=True)
                rng = random.Random(args.seed)
                names = []
                for module in modules:
                    every = mutant_names(work, module)
                    names += sorted(rng.sample(every, min(args.sample, len(every))))
                (work / "sample.txt").write_text("\n".join(names) + "\n", encoding="utf-8")
                command += names
            print(f"mutation[{mode}]: {' '.join(command)} in {work}", flush=True)
            # mutmut's fork runner can die (KeyError in wait_for_result) when a child process that the clean-test
            # run started, such as the METEOR 1.5 Java server, exits; it keeps its results, so run it again
            for attempt in range(3):
                with (work / "mutmut.log").open("a", encoding="utf-8") as log:
                    code = subprocess.run(command, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
                if code == 0:
                    break
                print(f"mutation[{mode}]: mutmut exited with {code} (attempt {attempt + 1}); resuming", flush=True)
            status |= code
        sample = work / "sample.txt"
        only = set(sample.read_text(encoding="utf-8").split()) if sample.is_file() else None  # a sampled workdir
        if args.report_only and (work / "summary.json").is_file():  # as the last run left it (merged, if it was one)
            last = json.loads((work / "summary.json").read_text(encoding="utf-8"))
            summary = {m: last[m] for m in modules if m in last}
        else:
            summary = collect(work, modules, only, earlier)
            (work / "summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False), encoding="utf-8")
        header = "| module | mutants | tested | killed+timeout | survived | no tests | other | score (95% CI) |"
        print(f"\n## data {mode}\n\n{header}\n|---|---|---|---|---|---|---|---|")
        for module, row in summary.items():
            c = row["counts"]
            killed = sum(c.get(s, 0) for s in KILLED)
            other = row["tested"] - killed - c.get("survived", 0) - c.get("no tests", 0)
            score = "-"
            if row["score"] is not None:
                low, high = row["ci95"]
                score = f"{row['score']:.1%} ({low:.0%}-{high:.0%})"
            line = f"| {module} | {row['total']} | {row['tested']} | {killed} | {c.get('survived', 0)} |"
            print(f"{line} {c.get('no tests', 0)} | {other} | {score} |")
        for module, row in summary.items():
            if row["survivors"]:
                print(f"\n{module} survivors ({len(row['survivors'])}):")
                print("\n".join(f"  {s}" for s in row["survivors"]))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
