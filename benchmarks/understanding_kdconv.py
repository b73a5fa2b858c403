"""KdConv: does the system turn use a knowledge triple? Train on film + music, score P/R/F1 per turn on travel.

The knowledge base for the match features is the travel KB file plus every triple in the three domains' dialogs.
Usage: PYTHONPATH=src python benchmarks/understanding_kdconv.py [--data ../shared/data]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ragdial import datasets
from ragdial.paths import data_root
from understanding_common import detection_prf, fit_detector, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=data_root())
    args = parser.parse_args()
    root = args.data / "kdconv"
    train_sets = [datasets.load("kdconv", root / domain) for domain in ("film", "music")]
    test = datasets.load("kdconv", root / "travel")
    train = [e for d in train_sets for e in d.examples]
    knowledge = sorted({item.text for d in [*train_sets, test] for item in d.kb})
    x, y = [e.context for e in train], [bool(e.needs_knowledge) for e in train]
    xd, yd = [e.context for e in test.examples], [bool(e.needs_knowledge) for e in test.examples]
    p, r, f = detection_prf(yd, [True] * len(yd))
    rows = [["always 'uses knowledge'", p, r, f, "-", "-"]]
    variants: dict[str, dict[str, Any]] = {
        "n-grams": dict(knowledge=None, embedding=None),
        "n-grams + USE + KB match (default)": dict(knowledge=knowledge, embedding="use"),
    }
    for name, options in variants.items():
        p, r, f, fit_s, p50, _ = fit_detector(options, x, y, xd, yd)
        rows.append([name, p, r, f, f"{fit_s:.0f}", f"{p50:.1f}"])
        print(f"{name}: P={p:.4f} R={r:.4f} F1={f:.4f}", flush=True)
    print(f"\nKdConv: train film+music ({len(x)} system turns) -> travel ({len(xd)}, {sum(yd)} use a triple)\n")
    print(table(["features", "P", "R", "F1", "fit s", "p50 ms/turn"], rows))


if __name__ == "__main__":
    main()
