"""Choosing the learned act model of the task branch by cross-validation on the utterance banks' train + dev lines.

    PYTHONPATH=src python benchmarks/task_act_model.py [--db PATH] [--folds 5] [--train-bank PATH] [--json OUT]

Lines: ``benchmarks/data/task_utterances_train.jsonl`` (split ``train``, written by a third hand, independent of
the parser) and the ``dev`` half of ``benchmarks/data/task_utterances.jsonl`` (the rules were tuned on it). The
locked ``test`` half is never read here. Folds: every line goes to fold ``index % folds`` (lines in file order).
For every configuration (C, n-gram blocks per context group, the rules' reading as features, the override
margin) the model is fitted on the other folds and the combined reader (``ragdial.task.act_model.combine``)
is scored on the held-out fold with ``task_nlu``'s act accuracy and slot F1; the rule layer alone is the
baseline. Held-out figures are given for all lines and for the train-bank lines alone: the rules were tuned on
dev (they score 1.000 there), so the train-bank lines are the fair comparison.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any, cast

from ragdial.task import act_model as M
from ragdial.task.acts import Context, slots_for, understand

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _task_common import seed_db  # the one seed-0 set-up of the task benchmarks
from task_nlu import score  # the one scorer of the bank

TODAY = dt.date(2026, 12, 1)
GRID: dict[str, tuple[Any, ...]] = {
    "c": (30.0, 100.0, 300.0),
    "grouped_ngrams": (False, True),
    "rule_features": (False, True),
    "delexicalised": (False, True),
}
MARGINS = (0.0, 0.1, 0.2, 0.4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--train-bank", type=Path, default=M.TRAIN_BANKS[0])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rows = M.bank_rows([args.train_bank, M.TRAIN_BANKS[1]])
    with seed_db(args.db) as (db, _tmp):
        gaz = db.gazetteer()
        start = time.perf_counter()
        ctxs = [Context.from_dict(r["context"]) for r in rows]
        rule_acts = [understand(r["text"], c, gaz, TODAY) for r, c in zip(rows, ctxs, strict=True)]
        items = [(r["text"], c, [a.act for a in acts]) for r, c, acts in zip(rows, ctxs, rule_acts, strict=True)]
        targets = [[a["act"] for a in r["acts"]] for r in rows]
        rules_seconds = time.perf_counter() - start
        folds = [i % args.folds for i in range(len(rows))]
        fills: dict[tuple[int, str], dict[str, Any]] = {}

        def fill(index: int, name: str) -> dict[str, Any]:
            key = (index, name)
            if key not in fills:
                fills[key] = slots_for(name, rows[index]["text"], ctxs[index], gaz, TODAY)
            return fills[key]

        def scored(predicted: list[list[Any]], which: list[int]) -> dict[str, float]:
            order = iter(which)  # score() asks for the lines in the order given

            def lookup(text: str, context: dict[str, Any]) -> list[Any]:
                return predicted[next(order)]

            m = score(cast("list[dict[str, Any]]", [rows[i] for i in which]), lookup)
            return {"act_accuracy": m["act_accuracy"], "slot_f1": m["slot_f1"]}

        train_lines = [i for i, r in enumerate(rows) if r["split"] == "train"]
        everything = list(range(len(rows)))
        results: list[dict[str, Any]] = [
            {
                "model": "rules only",
                "all": scored(rule_acts, everything),
                "train_bank": scored(rule_acts, train_lines),
            }
        ]
        fit_seconds = []
        for values in itertools.product(*GRID.values()):
            setting: dict[str, Any] = dict(zip(GRID, values, strict=True))
            probs: list[dict[str, float]] = [{}] * len(rows)
            for fold in range(args.folds):
                fit_idx = [i for i in everything if folds[i] != fold]
                held = [i for i in everything if folds[i] == fold]
                t0 = time.perf_counter()
                model = M.ActModel(M.ActModelConfig(**setting), gaz).fit(
                    [items[i] for i in fit_idx], [targets[i] for i in fit_idx]
                )
                fit_seconds.append(time.perf_counter() - t0)
                for i, p in zip(held, model.probabilities([items[i] for i in held]), strict=True):
                    probs[i] = p
            for margin in MARGINS:
                predicted = [
                    M.combine(rule_acts[i], probs[i], margin, functools.partial(fill, i), rows[i]["text"])
                    for i in everything
                ]
                results.append(
                    {
                        "model": "learned + rules",
                        **setting,
                        "margin": margin,
                        "all": scored(predicted, everything),
                        "train_bank": scored(predicted, train_lines),
                    }
                )
    # the best held-out act accuracy on all lines, then slot F1; on a tie the simpler model (smaller C, fewer blocks)
    best = max(
        results[1:],
        key=lambda r: (
            round(r["all"]["act_accuracy"], 6),
            round(r["all"]["slot_f1"], 6),
            -r["c"],
            -int(r["grouped_ngrams"]) - int(r["rule_features"]) - int(r["delexicalised"]),
            -r["margin"],
        ),
    )
    print(
        f"{len(rows)} lines ({len(train_lines)} train-bank, {len(rows) - len(train_lines)} dev), {args.folds} folds; "
        f"rules on all lines {rules_seconds:.1f} s, one fit {sum(fit_seconds) / len(fit_seconds):.2f} s on average\n"
    )
    print(
        "| model | C | n-grams per context group | rules' reading as features | masked n-grams | margin | "
        "act acc (all) | slot F1 (all) | act acc (train-bank lines) | slot F1 (train-bank lines) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        cells = (
            [r["model"], "", "", "", "", ""]
            if r["model"] == "rules only"
            else [
                r["model"],
                f"{r['c']:g}",
                str(r["grouped_ngrams"]),
                str(r["rule_features"]),
                str(r["delexicalised"]),
                f"{r['margin']:.1f}",
            ]
        )
        mark = " **(chosen)**" if r is best else ""
        print(
            "| " + " | ".join(cells) + f"{mark} | {r['all']['act_accuracy']:.3f} | {r['all']['slot_f1']:.3f} | "
            f"{r['train_bank']['act_accuracy']:.3f} | {r['train_bank']['slot_f1']:.3f} |"
        )
    if args.json:
        args.json.write_text(json.dumps({"results": results, "best": best}, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
