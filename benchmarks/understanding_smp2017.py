"""SMP2017-ECDT task 1: train on `train`, score on `develop` (accuracy, micro-F1, macro-F1), confusion-matrix PNG.

Usage: PYTHONPATH=src python benchmarks/understanding_smp2017.py [--data ../shared/data] [--png PATH]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from sklearn.metrics import accuracy_score, confusion_matrix, f1_score

from ragdial import datasets
from ragdial.paths import data_root
from ragdial.understanding import intent_classifier, training_data
from understanding_common import latency_ms, table


def save_confusion(path: Path, gold: list[str], predicted: list[str], labels: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matrix = confusion_matrix(gold, predicted, labels=labels)
    fig, ax = plt.subplots(figsize=(7, 6.3), dpi=80)
    ax.imshow(matrix, cmap="Blues")
    ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=7)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    for i in range(len(labels)):
        for j in range(len(labels)):
            if matrix[i, j] and i != j:
                ax.text(j, i, str(matrix[i, j]), ha="center", va="center", fontsize=6, color="red")
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    ax.set_title("SMP2017-ECDT develop (off-diagonal counts in red)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


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
        scores = [
            accuracy_score(yd, predicted),
            f1_score(yd, predicted, average="micro"),
            f1_score(yd, predicted, average="macro"),
        ]
        rows.append([name, *scores, f"{fit_s:.0f}", f"{p50:.1f}", f"{p95:.1f}"])
        print(f"{name}: acc={scores[0]:.4f} macro-F1={scores[2]:.4f}", flush=True)
        best = (model, predicted)
    assert best is not None
    args.png.parent.mkdir(parents=True, exist_ok=True)
    save_confusion(args.png, yd, best[1], sorted(set(y)))
    print(f"\nSMP2017-ECDT: train {len(x)} utterances, develop {len(xd)}; confusion matrix: {args.png}\n")
    header = ["features (logistic regression)", "accuracy", "micro-F1", "macro-F1", "fit s", "p50 ms", "p95 ms"]
    print(table(header, rows))


if __name__ == "__main__":
    main()
