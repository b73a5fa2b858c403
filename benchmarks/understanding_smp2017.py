"""SMP2017-ECDT task 1: train on `train`, score on `develop` (accuracy, micro-F1, macro-F1), confusion-matrix PNG.

The default configuration was chosen by 5-fold stratified cross-validation on `train` only (``--cv`` prints that
table); `develop` is scored once per configuration listed here.

Usage: PYTHONPATH=src python benchmarks/understanding_smp2017.py [--data ../shared/data] [--png PATH] [--cv]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, cast

from ragdial import datasets
from ragdial.jsontypes import JSONDict
from ragdial.metrics.classification import classification_report, plot_confusion
from ragdial.paths import data_root
from ragdial.understanding import intent_classifier, training_data
from understanding_common import latency_ms, table

OLD_HEAD: dict[str, Any] = {"c": 10.0, "embedding_weight": 1.0, "class_weight": None, "max_word_n": 2}
CONFIGS: dict[str, dict[str, Any]] = {
    "char 1-3 + word 1-2 TF-IDF": {**OLD_HEAD, "embedding": None},
    "+ USE (previous default)": {**OLD_HEAD, "embedding": "use"},
    "+ USE ×2": {**OLD_HEAD, "embedding": "use", "embedding_weight": 2.0},
    "+ USE ×2 + e5 ×2": {**OLD_HEAD, "embedding": "use+e5", "embedding_weight": 2.0},
    "+ USE ×2 + e5 ×2, balanced, C=30": {"max_word_n": 2},
    "+ USE ×2 + e5 ×2, balanced, C=30, word 1-3 (default)": {},
}


def macro_f1(report: JSONDict) -> float:
    """The macro-averaged F1 of a ``classification_report``."""
    return float(cast("dict[str, float]", report["macro"])["f1"])


def cross_validate(x: list, y: list[str], options: dict[str, Any], folds: int = 5) -> float:
    """Macro-F1 of out-of-fold predictions (stratified folds of `train`)."""
    from sklearn.model_selection import StratifiedKFold

    predicted: list[str] = [""] * len(y)
    for train_idx, test_idx in StratifiedKFold(folds, shuffle=True, random_state=0).split(x, y):
        model = intent_classifier(**options).fit([x[i] for i in train_idx], [y[i] for i in train_idx])
        for i, label in zip(test_idx, model.predict([x[i] for i in test_idx]), strict=True):
            predicted[i] = str(label)
    return macro_f1(classification_report(y, predicted))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=data_root())
    parser.add_argument("--png", type=Path, default=Path("docs/benchmarks/smp2017_confusion.png"))
    parser.add_argument("--cv", action="store_true", help="also print 5-fold CV macro-F1 on train (slow)")
    args = parser.parse_args()
    root = args.data / "smp2017_ecdt"
    x, targets = training_data("intent", datasets.load("smp2017", root, "train"))
    xd, gold = training_data("intent", datasets.load("smp2017", root, "develop"))
    y, yd = [str(t) for t in targets], [str(t) for t in gold]  # intent targets are labels
    rows, best = [], None
    for name, options in CONFIGS.items():
        cv = [f"{cross_validate(x, y, options):.4f}"] if args.cv else []
        started = time.perf_counter()
        model = intent_classifier(**options).fit(x, y)
        fit_s = time.perf_counter() - started
        predicted = [str(label) for label in model.predict(xd)]
        p50, p95 = latency_ms(model.predict_one, xd)
        report = classification_report(yd, predicted, labels=sorted(set(y) | set(yd)))
        micro = cast("dict[str, float]", report["micro"])
        scores = [float(cast(float, report["accuracy"])), float(micro["f1"]), macro_f1(report)]
        rows.append([name, *cv, *scores, f"{fit_s:.0f}", f"{p50:.1f}", f"{p95:.1f}"])
        print(f"{name}: {cv} acc={scores[0]:.4f} macro-F1={scores[2]:.4f}", flush=True)
        best = report
    assert best is not None
    matrix, labels = cast("list[list[int]]", best["confusion"]), cast("list[str]", best["labels"])
    plot_confusion(matrix, labels, args.png, "SMP2017-ECDT develop, default model")
    print(f"\nSMP2017-ECDT: train {len(x)} utterances, develop {len(xd)}; confusion matrix: {args.png}\n")
    header = ["features (logistic regression)", *(["train 5-fold CV macro-F1"] if args.cv else [])]
    header += ["accuracy", "micro-F1", "macro-F1", "fit s", "p50 ms", "p95 ms"]
    print(table(header, rows))


if __name__ == "__main__":
    main()
