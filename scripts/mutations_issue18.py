"""Plant the 17 bugs of issue 18 one at a time and check that the fast tests, without the shared data, catch each.

Issue 18 names 7 of its 17 planted bugs (4 that survived every test, 3 caught only with ``../shared/data``); the
other 10 were caught but not described, so the last 10 below are realistic bugs of our own choosing in the same
modules. Each bug is a text replacement found by its content anywhere under ``src/`` (so it still applies after a
module moves); a replacement that no longer matches exactly once is reported as ``stale``, never skipped silently.

For each bug the script copies ``src/``, ``tests/`` and ``pyproject.toml`` to a temporary folder, applies the
patch there, and runs the listed test files with ``RAGDIAL_DATA`` pointing at a folder that does not exist and
``-m "not shared_data and not slow"``. First it runs every listed test file unpatched (they must pass, or a "caught"
means nothing). Exit status 0 only when every bug is caught.

    python scripts/mutations_issue18.py            # all 17
    python scripts/mutations_issue18.py --only 1,5 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Bug:
    number: int
    what: str
    old: str
    new: str
    tests: tuple[str, ...]
    before: str  # what issue 18 reports for it before this work


METRICS = ("tests/test_metrics_challenges.py", "tests/test_metrics_precision_recall.py")
BUGS = [
    Bug(1, "KdConv/Huawei triple precision and recall swapped",
        'p, r, tf = triples["precision"].value, triples["recall"].value,',
        'p, r, tf = triples["recall"].value, triples["precision"].value,',
        (*METRICS, "tests/test_metrics_retrieval.py"), "survived"),
    Bug(2, "entity-scoped candidates include other dialogs' local items",
        "            pool = pool[np.isin(pool, self._global)] if len(self._local) else pool\n",
        "",
        ("tests/test_retrieval_scope.py", "tests/test_retrieval_hybrid.py"), "survived"),
    Bug(3, "api_query detector drops the current user turn",
        "self.classifier.predict_one(list(context))",
        "self.classifier.predict_one(list(context)[:-1])",
        ("tests/test_understanding_detectors.py", "tests/test_service_pipeline.py"), "survived"),
    Bug(4, "knowledge-seeking decision threshold inverted",
        "needs = probability >= self.threshold",
        "needs = probability < self.threshold",
        ("tests/test_understanding_detectors.py", "tests/test_service_pipeline.py"), "survived"),
    Bug(5, "DSTC detection precision and recall swapped",
        'return {"prec": p, "rec": r, "f1": f}',
        'return {"prec": r, "rec": p, "f1": f}',
        METRICS, "caught only with shared data"),
    Bug(6, "template puts the last knowledge item first",
        "items = list(request.knowledge)[: self.max_items]\n",
        "items = list(request.knowledge)[: self.max_items]\n        items = items[-1:] + items[:-1]\n",
        ("tests/test_generation_template.py", "tests/test_generation_template_items.py"),
        "caught only with shared data"),
    Bug(7, "template takes the last max_items items",
        "items = list(request.knowledge)[: self.max_items]",
        "items = list(request.knowledge)[-self.max_items :]",
        ("tests/test_generation_template.py", "tests/test_generation_template_items.py"),
        "caught only with shared data"),
    Bug(8, "hit@k looks at the top k+1",
        "any(item in wanted for item in list(ranked)[:k])",
        "any(item in wanted for item in list(ranked)[: k + 1])",
        ("tests/test_metrics_retrieval.py", *METRICS), "not described"),
    Bug(9, "reciprocal rank counted from 0",
        "if item in wanted:\n            value = 1.0 / rank",
        "if item in wanted:\n            value = 1.0 / (rank + 1)",
        ("tests/test_metrics_retrieval.py", *METRICS), "not described"),
    Bug(10, "FutureDial track 1 recall divided by turns instead of pieces",
        'hits[k] / (pieces + RECALL_EPSILON) for k in hits',
        'hits[k] / (turns + RECALL_EPSILON) for k in hits',
        METRICS, "not described"),
    Bug(11, "macro average over the classes with gold support only",
        "n = len(labels) or 1",
        'n = sum(1 for c in per_class.values() if c["support"]) or 1',
        ("tests/test_metrics_classification.py", *METRICS), "not described"),
    Bug(12, "DSTC11 selection counts duplicate predicted items",
        'pred_keys = _dedup(hyp["knowledge"]) if "knowledge" in hyp else []',
        'pred_keys = [_dstc11_key(k) for k in hyp["knowledge"]] if "knowledge" in hyp else []',
        METRICS, "not described"),
    Bug(13, "task branch reads 后天 (the day after tomorrow) as tomorrow",
        '"后天": 2,',
        '"后天": 1,',
        ("tests/test_task_slots.py", "tests/test_task_dialog.py"), "not described"),
    Bug(14, "travel search drops trips priced exactly at the budget",
        'add("price <= ?", constraints.get("max_price"))',
        'add("price < ?", constraints.get("max_price"))',
        ("tests/test_task_slots.py", "tests/test_task_dialog.py", "tests/test_boundaries.py"), "not described"),
    Bug(15, "history view includes the current user turn",
        "context[max(0, end - window) : end]",
        "context[max(0, end - window) : end + 1]",
        ("tests/test_understanding_models.py", "tests/test_understanding_detectors.py", "tests/test_boundaries.py"),
        "not described"),
    Bug(16, "weighted fusion swaps the lexical and dense weights",
        "[config.lexical_weight, 1.0 - config.lexical_weight]",
        "[1.0 - config.lexical_weight, config.lexical_weight]",
        ("tests/test_retrieval_hybrid.py", "tests/test_retrieval_components.py", "tests/test_boundaries.py"),
        "not described"),
    Bug(17, "template ignores the learned no-knowledge reply",
        "return self.model.fallback or DEFAULT_FALLBACK.get(language, \"\")",
        "return DEFAULT_FALLBACK.get(language, \"\") or self.model.fallback",
        ("tests/test_generation_template.py", "tests/test_generation_template_items.py"), "not described"),
]  # fmt: skip


def locate(src: Path, old: str) -> list[Path]:
    return [p for p in sorted(src.rglob("*.py")) if old in p.read_text(encoding="utf-8")]


def run_tests(work: Path, tests: list[str]) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(work / "src"), "OMP_NUM_THREADS": "1"}
    env["RAGDIAL_DATA"] = str(work / "no-shared-data")
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:randomly", "-p", "no:cacheprovider"]
    command += ["-m", "not shared_data and not slow", *tests]
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, lines[-1] if lines else done.stderr.strip()[-200:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="comma-separated bug numbers")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    chosen = {int(n) for n in args.only.split(",")} if args.only else {b.number for b in BUGS}
    bugs = [b for b in BUGS if b.number in chosen]
    results = []
    with tempfile.TemporaryDirectory(prefix="ragdial-mutations-") as tmp:
        work = Path(tmp)
        for name in ("src", "tests"):
            shutil.copytree(ROOT / name, work / name, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy2(ROOT / "pyproject.toml", work / "pyproject.toml")
        test_sets = {b.number: [t for t in b.tests if (ROOT / t).is_file()] for b in bugs}
        baseline = sorted({t for tests in test_sets.values() for t in tests})
        code, summary = run_tests(work, baseline)
        print(f"baseline (no bug planted), {len(baseline)} test files: {summary}", flush=True)
        if code != 0:
            print("the unpatched tests fail: fix that first", file=sys.stderr)
            return 2
        for bug in bugs:
            files = locate(work / "src", bug.old)
            where = [str(p.relative_to(work)) for p in files]
            if len(files) != 1 or files[0].read_text(encoding="utf-8").count(bug.old) != 1:
                status, summary = "stale", f"patch text found {len(files)} time(s): {where}"
            else:
                path = files[0]
                original = path.read_text(encoding="utf-8")
                path.write_text(original.replace(bug.old, bug.new), encoding="utf-8")
                try:
                    code, summary = run_tests(work, test_sets[bug.number])
                finally:
                    path.write_text(original, encoding="utf-8")
                status = "caught" if code == 1 else "survived" if code == 0 else f"error (pytest exit {code})"
            results.append(
                {"bug": bug.number, "what": bug.what, "file": where[0] if len(where) == 1 else where,
                 "before": bug.before, "now": status, "tests": test_sets[bug.number], "pytest": summary}
            )  # fmt: skip
            print(f"{bug.number:2d}. {status:8s} {bug.what} [{', '.join(where)}]: {summary}", flush=True)
    caught = sum(r["now"] == "caught" for r in results)
    print(f"\n{caught} of {len(results)} planted bugs caught without the shared data")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0 if caught == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
