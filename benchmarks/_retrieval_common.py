"""Shared helpers of the retrieval benchmarks: the retriever as a ``RetrievalModel``, plots, a markdown table.

Scores, cuts and latency come from ``ragdial.evaluation`` (``RetrievalEvaluator`` over ``ragdial.metrics``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import cast

import numpy as np

from ragdial.evaluation import KS, RetrievalEvaluator, RetrievalModel, best_cut, recall_at, selection_scores
from ragdial.schema import Example

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks"
__all__ = ["KS", "best_cut", "recall_at", "selection_scores"]


def ranked_ids(retriever, example: Example, depth: int) -> list[str]:
    """The retriever's top ``depth`` knowledge ids for an example (its dialog's local items included)."""
    return [r.item.id for r in retriever.retrieve(example.context, example.dialog_id, depth).ranked]


def selected_ids(retriever, example: Example, limit: int = 10) -> list[str]:
    """The ids the retriever selects for an example (the reranker's cut, at most ``limit``)."""
    return [r.item.id for r in retriever.retrieve(example.context, example.dialog_id, limit).selected]


def as_model(retriever, depth: int = 20, select: bool = False) -> RetrievalModel:
    """A retriever as the evaluation layer calls it (``select``: its own cut instead of a fixed top-k)."""
    return RetrievalModel(
        rank=lambda e: ranked_ids(retriever, e, depth),
        select=(lambda e: selected_ids(retriever, e)) if select else None,
    )


def row(name: str, cut: str, scores: dict[str, float]) -> dict[str, object]:
    """A table row: system, cut, P/R/F1/EM and R@1, R@5."""
    picked = {key: scores[key] for key in ("P", "R", "F1", "EM")}
    return {"system": name, "cut": cut, **picked, "R@1": scores["R@1"], "R@5": scores["R@5"]}


def curve(scores: dict[str, float], ks: Sequence[int] = KS) -> dict[int, float]:
    return {k: scores[f"R@{k}"] for k in ks}


def plot_recall(curves: dict[str, dict[int, float]], title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.5, 3.2), dpi=90)
    for name, curve in curves.items():
        ax.plot(list(curve), list(curve.values()), marker="o", label=name)
    ax.set_xscale("log")
    ax.set_xticks(KS, [str(k) for k in KS])
    ax.set_xlabel("k")
    ax.set_ylabel("recall@k")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def markdown_table(rows: list[dict[str, object]]) -> str:
    head = list(rows[0])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values()]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_systems(
    kb, train, test, systems, depth: int = 20, log=print, train_kb=None, relative_cut: bool = False
) -> tuple[list[dict], dict]:
    """Score each unsupervised system (its top-k cut tuned on ``train``) and the hybrid + reranker system.

    ``systems`` maps a name to a RetrieverConfig; the one with ``fusion == "rrf"`` gets the reranker (trained on
    ``train`` over ``train_kb`` or ``kb``). Returns table rows and recall@k curves on ``test``.
    """
    import time

    from ragdial.retrieval import rerank
    from ragdial.retrieval.hybrid import HybridRetriever

    rows, curves = [], {}
    tune, evaluate = RetrievalEvaluator(train, ks=(1,), name="train"), RetrievalEvaluator(test, name="test")
    hybrid_config = None
    for name, config in systems.items():
        retriever = HybridRetriever(kb, config)
        train_retriever = retriever if train_kb is None else HybridRetriever(train_kb, config)
        tuned = tune(as_model(train_retriever, depth))
        k = best_cut([e.knowledge_ids for e in train], [cast("list[str]", tuned.predictions[e.id]) for e in train])
        evaluate.cut = k
        result = evaluate(as_model(retriever, depth))
        curves[name] = curve(result.scores)
        rows.append(row(name, f"top-{k}", result.scores))
        log(f"{name}: {rows[-1]} ({result.latency['rank'].mean:.1f} ms/query)")
        if config.fusion == "rrf":
            hybrid_config = config
    if hybrid_config is not None:
        train_retriever = HybridRetriever(train_kb or kb, hybrid_config)
        start = time.perf_counter()
        reranker = rerank.train(train_retriever, train, relative_cut=relative_cut)
        log(f"reranker trained in {time.perf_counter() - start:.1f}s, threshold {reranker.threshold:.3f}")
        retriever = HybridRetriever(kb, hybrid_config, reranker=reranker)
        result = evaluate(as_model(retriever, depth, select=True))
        name = "hybrid + reranker"
        curves[name] = curve(result.scores)
        rows.append(row(name, f"p>={reranker.threshold:.3f}, >={reranker.relative:.1f}xbest", result.scores))
        log(f"{name}: {rows[-1]}")
    return rows, curves


def average_rows(fold_rows: list[list[dict]]) -> list[dict]:
    """Mean of the numeric cells of per-fold tables with the same systems."""
    out = []
    for rows in zip(*fold_rows, strict=True):
        merged = dict(rows[0])
        for key, value in rows[0].items():
            if isinstance(value, float):
                merged[key] = float(np.mean([r[key] for r in rows]))
        merged["cut"] = "per fold"
        out.append(merged)
    return out


def average_curves(fold_curves: list[dict]) -> dict:
    return {
        name: {k: float(np.mean([c[name][k] for c in fold_curves])) for k in fold_curves[0][name]}
        for name in fold_curves[0]
    }
