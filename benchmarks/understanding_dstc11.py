"""DSTC11 track 5 val, dialog-grouped fold 0: knowledge-seeking turn detection P/R/F1 (official formula).

Train on folds 1-4 of val (no training split is shared), evaluate on fold 0 (fold = crc32(first turn) % 5).
Usage: PYTHONPATH=src python benchmarks/understanding_dstc11.py [--data ../shared/data]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ragdial import datasets
from ragdial.datasets.folds import split_folds
from ragdial.paths import data_root
from understanding_common import fit_detector, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=data_root())
    args = parser.parse_args()
    dataset = datasets.load("dstc11", args.data / "dstc11_track5", "val")
    train, dev = split_folds(dataset.examples)
    knowledge = [item.text for item in dataset.kb]
    x, y = [e.context for e in train], [bool(e.needs_knowledge) for e in train]
    xd, yd = [e.context for e in dev], [bool(e.needs_knowledge) for e in dev]
    rows = []
    variants: dict[str, dict[str, Any]] = {
        "n-grams": dict(knowledge=None, embedding=None),
        "n-grams + KB match": dict(knowledge=knowledge, embedding=None),
        "n-grams + USE": dict(knowledge=None, embedding="use"),
        "n-grams + USE + KB match (default)": dict(knowledge=knowledge, embedding="use"),
    }
    for name, options in variants.items():
        p, r, f, fit_s, p50, p95 = fit_detector(options, x, y, xd, yd)
        rows.append([name, p, r, f, f"{fit_s:.0f}", f"{p50:.1f}", f"{p95:.1f}"])
        print(f"{name}: P={p:.4f} R={r:.4f} F1={f:.4f}", flush=True)
    print(f"\nDSTC11 val fold 0: train {len(train)} instances (folds 1-4), eval {len(dev)} ({sum(yd)} seeking)\n")
    print(table(["features", "P", "R", "F1", "fit s", "p50 ms/turn", "p95 ms/turn"], rows))


if __name__ == "__main__":
    main()
