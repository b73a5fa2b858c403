"""Classification metrics: accuracy, micro/macro/per-class precision, recall, F1, confusion matrix (+ PNG)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from pathlib import Path

from ragdial.jsontypes import JSONDict
from ragdial.metrics.result import signature


def prf_counts(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Precision, recall and F1 from true-positive, false-positive and false-negative counts (0 where undefined)."""
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def classification_report(
    gold: Sequence[Hashable], predicted: Sequence[Hashable], labels: Sequence[Hashable] | None = None
) -> JSONDict:
    """Single-label scores. ``labels`` (default: every label seen in gold or predictions, sorted) fixes the classes
    macro averages run over and the confusion-matrix order; a class with no gold and no prediction scores 0.
    Macro F1 is the mean of per-class F1 (as scikit-learn's ``f1_score(average="macro")``)."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold labels for {len(predicted)} predictions")
    labels = list(labels) if labels is not None else sorted({*gold, *predicted}, key=str)
    index = {label: i for i, label in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for g, p in zip(gold, predicted, strict=True):
        if g not in index or p not in index:
            raise ValueError(f"label {g if g not in index else p!r} is not in the label set")
        matrix[index[g]][index[p]] += 1
    per_class = {}
    tp_all = fp_all = fn_all = 0
    for i, label in enumerate(labels):
        tp = matrix[i][i]
        fp = sum(matrix[j][i] for j in range(len(labels))) - tp
        fn = sum(matrix[i]) - tp
        tp_all, fp_all, fn_all = tp_all + tp, fp_all + fp, fn_all + fn
        p, r, f = prf_counts(tp, fp, fn)
        per_class[str(label)] = {"precision": p, "recall": r, "f1": f, "support": sum(matrix[i])}
    n = len(labels) or 1
    micro = dict(zip(("precision", "recall", "f1"), prf_counts(tp_all, fp_all, fn_all), strict=True))
    macro = {key: sum(c[key] for c in per_class.values()) / n for key in ("precision", "recall", "f1")}
    return {
        "accuracy": tp_all / len(gold) if gold else 0.0,
        "micro": micro,
        "macro": macro,
        "per_class": per_class,
        "labels": [str(label) for label in labels],
        "confusion": matrix,
        "signature": signature("classification", labels=len(labels), macro="mean-of-class-f1"),
    }


def plot_confusion(matrix: Sequence[Sequence[int]], labels: Sequence[str], path: str | Path, title: str = "") -> Path:
    """Save a confusion matrix (rows gold, columns predicted) as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    size = max(4.0, 0.32 * len(labels) + 2)
    fig, ax = plt.subplots(figsize=(size, size))
    try:
        image = ax.imshow(matrix, cmap="Blues")
        ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=7)
        ax.set_yticks(range(len(labels)), labels, fontsize=7)
        ax.set_xlabel("predicted")
        ax.set_ylabel("gold")
        if title:
            ax.set_title(title)
        peak = max((max(row) for row in matrix), default=0)
        if len(labels) <= 40:
            for i, row in enumerate(matrix):
                for j, value in enumerate(row):
                    if value:
                        colour = "white" if value > peak / 2 else "black"
                        ax.text(j, i, str(value), ha="center", va="center", fontsize=6, color=colour)
        fig.colorbar(image, ax=ax, fraction=0.046)
        fig.tight_layout()
        fig.savefig(path, dpi=120)
    finally:
        plt.close(fig)
    return path
