"""Huawei 2022 knowledge-driven dialogue, valid.json: does the system turn use a knowledge triple? P/R/F1 per turn.

5 dialog-grouped folds (crc32 of the first message % 5): each fold is scored by a model trained on the other four;
the counts are pooled over the five folds. The knowledge base for the match features is every triple in valid.json
(no knowledge-graph file is published), as FutureDial built its global KB.
Usage: PYTHONPATH=src python benchmarks/understanding_huawei.py [--data ../shared/data] [--folds 5]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from ragdial import datasets
from ragdial.datasets.folds import split_folds
from ragdial.paths import data_root
from ragdial.understanding import turn_detector
from understanding_common import detection_prf, latency_ms, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=data_root())
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()
    dataset = datasets.load("huawei", args.data / "huawei_kdsd" / "valid.json")
    knowledge = [item.text for item in dataset.kb]
    gold_all = [bool(e.needs_knowledge) for e in dataset.examples]
    p, r, f = detection_prf(gold_all, [True] * len(gold_all))
    rows = [["always 'uses knowledge'", p, r, f, "-", "-"]]
    variants: dict[str, dict[str, Any]] = {
        "n-grams": dict(knowledge=None, embedding=None),
        "n-grams + KB match": dict(knowledge=knowledge, embedding=None),
        "n-grams + USE + KB match (default)": dict(knowledge=knowledge, embedding="use"),
    }
    for name, options in variants.items():
        gold, predicted, fit_total, p50 = [], [], 0.0, 0.0
        for fold in range(args.folds):
            train, dev = split_folds(dataset.examples, fold, args.folds)
            started = time.perf_counter()
            model = turn_detector(**options).fit([e.context for e in train], [bool(e.needs_knowledge) for e in train])
            fit_total += time.perf_counter() - started
            gold += [bool(e.needs_knowledge) for e in dev]
            predicted += [bool(p) for p in model.predict([e.context for e in dev])]
            if fold == 0:
                p50, _ = latency_ms(model.predict_one, [e.context for e in dev])
        p, r, f = detection_prf(gold, predicted)
        rows.append([name, p, r, f, f"{fit_total / args.folds:.0f}", f"{p50:.1f}"])
        print(f"{name}: P={p:.4f} R={r:.4f} F1={f:.4f}", flush=True)
    print(f"\nHuawei valid: {len(dataset.examples)} system turns, {sum(gold_all)} use a triple; {args.folds} folds\n")
    print(table(["features", "P", "R", "F1", "fit s / fold", "p50 ms/turn"], rows))


if __name__ == "__main__":
    main()
