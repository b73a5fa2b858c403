"""Shared helpers of the retrieval benchmarks: folds, selection scores, recall@k, plots, a markdown table.

Selection and recall scores come from ``ragdial.metrics.retrieval`` (the one implementation).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ragdial.metrics.retrieval import recall_at_k, set_prf

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks"
KS = (1, 2, 3, 5, 10, 20)


def selection_scores(golds: Sequence[Sequence[str]], preds: Sequence[Sequence[str]]) -> dict[str, float]:
    """DSTC11 selection (``ragdial.metrics``): micro P/R/F1 over deduplicated items, exact match per instance."""
    scores = set_prf(golds, preds)
    return {
        "P": scores["precision"].value,
        "R": scores["recall"].value,
        "F1": scores["f1"].value,
        "EM": scores["exact_match"].value,
    }


def recall_at(
    golds: Sequence[Sequence[str]], rankings: Sequence[Sequence[str]], ks: Iterable[int] = KS
) -> dict[int, float]:
    """Mean share of an instance's gold items found in its top k (``ragdial.metrics`` recall, unit "fraction")."""
    return {k: recall_at_k(golds, rankings, k, unit="fraction").value for k in ks}


def best_top_k(golds: Sequence[Sequence[str]], rankings: Sequence[Sequence[str]], limit: int = 10) -> int:
    """The fixed cut k maximising selection F1 (tuned on training folds for the unsupervised systems)."""
    return max(range(1, limit + 1), key=lambda k: selection_scores(golds, [r[:k] for r in rankings])["F1"])


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
    golds = [e.knowledge_ids for e in test]
    hybrid_config = None
    for name, config in systems.items():
        retriever = HybridRetriever(kb, config)
        train_retriever = retriever if train_kb is None else HybridRetriever(train_kb, config)
        train_rank = [
            [r.item.id for r in train_retriever.retrieve(e.context, e.dialog_id, depth).ranked] for e in train
        ]
        k = best_top_k([e.knowledge_ids for e in train], train_rank)
        start = time.perf_counter()
        rankings = [[r.item.id for r in retriever.retrieve(e.context, e.dialog_id, depth).ranked] for e in test]
        seconds = time.perf_counter() - start
        curves[name] = recall_at(golds, rankings)
        scores = selection_scores(golds, [r[:k] for r in rankings])
        rows.append({"system": name, "cut": f"top-{k}", **scores, "R@1": curves[name][1], "R@5": curves[name][5]})
        log(f"{name}: {rows[-1]} ({seconds / max(len(test), 1) * 1000:.1f} ms/query)")
        if config.fusion == "rrf":
            hybrid_config = config
    if hybrid_config is not None:
        train_retriever = HybridRetriever(train_kb or kb, hybrid_config)
        start = time.perf_counter()
        reranker = rerank.train(train_retriever, train, relative_cut=relative_cut)
        log(f"reranker trained in {time.perf_counter() - start:.1f}s, threshold {reranker.threshold:.3f}")
        retriever = HybridRetriever(kb, hybrid_config, reranker=reranker)
        rankings = [[r.item.id for r in retriever.retrieve(e.context, e.dialog_id, depth).ranked] for e in test]
        preds = [[r.item.id for r in retriever.retrieve(e.context, e.dialog_id, 10).selected] for e in test]
        name = "hybrid + reranker"
        curves[name] = recall_at(golds, rankings)
        scores = selection_scores(golds, preds)
        cut = f"p>={reranker.threshold:.3f}, >={reranker.relative:.1f}xbest"
        rows.append({"system": name, "cut": cut, **scores, "R@1": curves[name][1], "R@5": curves[name][5]})
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
