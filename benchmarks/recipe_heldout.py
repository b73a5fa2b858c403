"""Held-out figures of a shipped recipe, measured with the recipe alone.

For each dev fold F: ``ragdial train RECIPE --set exclude_fold=F`` (the same ``train_recipe`` the CLI calls; every
training file's fold F is left out, README fold rule ``ragdial.datasets.folds``), then ``ragdial run RECIPE TEST
--fold F`` twice through ``run_recipe``: with the trained detector deciding, and with ``--set detector=null``
(every turn looks knowledge up; on the turns whose gold uses knowledge this is selection with gold detection, what
the retrieval benchmarks measure). ``--folds none``: train on the recipe's data as it is and run the whole test
data (KdConv: film + music → travel).

Per fold and as the mean over folds (detection: pooled over folds, as ``understanding_huawei.py`` counts):
- detection P/R/F1 of the run's decisions against the gold ``needs_knowledge`` of every turn of the fold;
- selection P/R/F1/EM and R@1/R@5 on the turns whose gold uses knowledge, gold detection (``detector=null`` run);
  ``--top-k`` cuts that selection at the first k too (a post-hoc prefix of the same run: the reranker's cut is a
  prefix of its ranking);
- the same selection with the trained detector deciding (a turn it skips selects nothing);
- the challenge's own scores of the detector run (every turn of the fold).

Run: ``PYTHONPATH=src python benchmarks/recipe_heldout.py huawei --test huawei_kdsd/valid.json --folds 0 1 2 3 4
[--set train=[huawei:huawei_kdsd/valid.json]] [--top-k 3]``. Writes ``docs/benchmarks/recipe_heldout_<tag>.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, cast

import numpy as np

from ragdial.evaluation import detection_prf, selection_scores
from ragdial.evaluation.pipeline import prediction_of
from ragdial.pipeline.turn import Reply
from ragdial.recipes import DataSpec, load_recipe
from ragdial.recipes.running import GOLD_DETECTION, run_recipe, trained_recipe
from ragdial.recipes.training import train_recipe
from ragdial.schema import Example

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks"


def run_fold(
    name: str, sets: list[str], test: Path | None, fold: int | None, work: Path, top_ks: list[int]
) -> dict[str, Any]:
    """Train, run twice and score one fold; a row of figures."""
    recipe = load_recipe(name, [*sets, f"exclude_fold={'null' if fold is None else fold}"])
    system = work / f"fold{fold}"
    started = time.perf_counter()
    info = train_recipe(recipe, system, on_step=lambda step: print(f"  fold {fold}: {step}", flush=True))
    train_s = time.perf_counter() - started
    seen: dict[str, list[Example]] = {}

    def keep(dataset, examples) -> None:
        seen["examples"] = examples

    runs = {}
    run_fold_arg = -1 if fold is None else fold
    for label, overrides in (("detector", []), ("always", ["detector=null", "system.top_k=10"])):
        started = time.perf_counter()
        done = run_recipe(
            trained_recipe(system, name, overrides),
            system,
            test,
            work / f"run{fold}-{label}",
            fold=run_fold_arg,
            on_start=keep,
        )
        runs[label] = (done, time.perf_counter() - started)
    examples = seen["examples"]
    seeking = [e for e in examples if e.needs_knowledge and e.knowledge_ids]
    golds = [list(e.knowledge_ids) for e in seeking]
    row: dict[str, Any] = {
        "fold": fold,
        "train_examples": info["examples"],
        "knowledge_items": info["knowledge_items"],
        "turns": len(examples),
        "seeking_turns": len(seeking),
        "train_s": round(train_s, 1),
        "train_steps_s": info["seconds"],
        "run_s": round(runs["detector"][1], 1),
    }
    detected = {k: prediction_of(cast(Reply, r)) for k, r in runs["detector"][0].result.predictions.items()}
    row["detection_counts"] = [[bool(e.needs_knowledge), bool(detected[e.id].needs_knowledge)] for e in examples]
    always = {k: prediction_of(cast(Reply, r)) for k, r in runs["always"][0].result.predictions.items()}
    scored = runs["always"][0].result.scores  # `run --set detector=null` scores selection with gold detection
    row["gold_detection"] = {k: scored[f"{GOLD_DETECTION}.{k}"] for k in ("P", "R", "F1", "EM", "R@1", "R@5")}
    for k in top_ks:  # a post-hoc prefix of the same selections
        row[f"gold_detection_top{k}"] = selection_scores(golds, [list(always[e.id].selection)[:k] for e in seeking])
    row["with_detector"] = selection_scores(golds, [list(detected[e.id].selection) for e in seeking])
    row["challenge"] = runs["detector"][0].result.scores
    return row


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Means over folds; detection pooled over folds."""
    pairs = [pair for row in rows for pair in row["detection_counts"]]
    p, r, f = detection_prf([g for g, _ in pairs], [d for _, d in pairs])
    out: dict[str, Any] = {"folds": [row["fold"] for row in rows], "detection": {"P": p, "R": r, "F1": f}}
    for key, value in rows[0].items():
        if isinstance(value, dict) and key != "train_steps_s":
            out[key] = {k: float(np.mean([row[key][k] for row in rows])) for k in value}
    for key in ("train_s", "run_s", "turns", "seeking_turns"):
        out[key] = float(np.mean([row[key] for row in rows]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recipe")
    parser.add_argument("--test", help="test data (default: the recipe's test.path), under $RAGDIAL_DATA if relative")
    parser.add_argument("--folds", nargs="+", default=["0"], help="dev folds 0-4, or 'none' (no fold)")
    parser.add_argument("--set", dest="sets", action="append", default=[], help="recipe override KEY=VALUE")
    parser.add_argument("--top-k", type=int, action="append", default=[], help="also score the first k selected")
    parser.add_argument("--tag", help="name of the JSON written under docs/benchmarks (default: the recipe)")
    parser.add_argument("--keep", type=Path, help="keep the trained systems and runs in this folder")
    args = parser.parse_args()
    recipe = load_recipe(args.recipe, args.sets)
    test = DataSpec.parse(args.test, recipe.format()).path if args.test else None
    folds = [None if f == "none" else int(f) for f in args.folds]
    work = args.keep or Path(tempfile.mkdtemp(prefix="recipe-heldout-"))
    rows = []
    try:
        for fold in folds:
            row = run_fold(args.recipe, args.sets, test, fold, work, args.top_k)
            rows.append(row)
            shown = {k: v for k, v in row.items() if k not in ("detection_counts", "challenge")}
            print(json.dumps(shown, ensure_ascii=False), flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    result = {"recipe": args.recipe, "sets": args.sets, "test": str(test), "summary": summary(rows)}
    result["per_fold"] = [{k: v for k, v in row.items() if k != "detection_counts"} for row in rows]
    print(json.dumps(result["summary"], indent=2, ensure_ascii=False))
    out = DOCS / f"recipe_heldout_{args.tag or args.recipe}.json"
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
