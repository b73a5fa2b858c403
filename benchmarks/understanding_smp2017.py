"""SMP2017-ECDT task 1: train on `train`, score on `develop` (accuracy, micro-F1, macro-F1), confusion-matrix PNG.

Usage: PYTHONPATH=src python benchmarks/understanding_smp2017.py [--data ../shared/data] [--png PATH]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ragdial import datasets
from ragdial.metrics.classification import classification_report, plot_confusion
from ragdial.paths import data_root
from ragdial.understanding import intent_classifier, training_data
from understanding_common import latency_ms, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=data_root())
    parser.add_argument("--png", type=Path, default=Path("docs/benchmarks/smp2017_confusion.png"))
    args = parser.parse_args()
    root = args.data / "smp2017_ecdt"
    x, y = training_data("intent", datasets.load("smp2017", root, "train"))
    xd, yd = training_data("intent", datasets.load("smp2017", root, "develop"))
    rows, best = [], None
    for name, embedding in (("char 1-3 + word 1-2 TF-IDF", None), ("+ USE embedding (default)", "use")):
        started = time.perf_counter()
        model = intent_classifier(embedding).fit(x, y)
        fit_s = time.perf_counter() - started
        predicted = model.predict(xd)
        p50, p95 = latency_ms(model.predict_one, xd)
        report = classification_report(yd, predicted, labels=sorted(set(y) | set(yd)))
        scores = [report["accuracy"], report["micro"]["f1"], report["macro"]["f1"]]
        rows.append([name, *scores, f"{fit_s:.0f}", f"{p50:.1f}", f"{p95:.1f}"])
        print(f"{name}: acc={scores[0]:.4f} macro-F1={scores[2]:.4f}", flush=True)
        best = report
    assert best is not None
    plot_confusion(best["confusion"], best["labels"], args.png, "SMP2017-ECDT develop, default model")
    print(f"\nSMP2017-ECDT: train {len(x)} utterances, develop {len(xd)}; confusion matrix: {args.png}\n")
    header = ["features (logistic regression)", "accuracy", "micro-F1", "macro-F1", "fit s", "p50 ms", "p95 ms"]
    print(table(header, rows))


if __name__ == "__main__":
    main()
