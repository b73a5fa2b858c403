"""DSTC11 track 5 knowledge selection on val fold 0 (folds 1-4 train the reranker and tune cuts).

Run: ``PYTHONPATH=src python benchmarks/retrieval_dstc11.py [--data ../shared/data]``. Scores are the official
selection formulas (micro P/R/F1, exact match) on the knowledge-seeking turns of fold 0 (gold detection).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _retrieval_common import (
    DOCS,
    best_top_k,
    markdown_table,
    plot_recall,
    recall_at,
    selection_scores,
)
from ragdial import datasets
from ragdial.datasets.folds import fold_of
from ragdial.paths import data_root
from ragdial.retrieval import rerank
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever

SYSTEMS = {
    "BM25": RetrieverConfig(encoder=None, fusion="bm25"),
    "dense (USE)": RetrieverConfig(fusion="dense"),
    "hybrid (RRF)": RetrieverConfig(fusion="rrf"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=data_root())
    parser.add_argument("--depth", type=int, default=20, help="ranking depth kept per query")
    parser.add_argument("--relative-cut", action="store_true", help="also tune a relative-to-best selection cut")
    args = parser.parse_args()
    dataset = datasets.load("dstc11", args.data / "dstc11_track5", "val")
    seeking = [e for e in dataset.examples if e.needs_knowledge and e.knowledge_ids]
    fold = {e.id: fold_of(e) for e in seeking}
    train = [e for e in seeking if fold[e.id] != 0]
    test = [e for e in seeking if fold[e.id] == 0]
    print(f"DSTC11 val: {len(seeking)} knowledge-seeking turns; fold 0 eval {len(test)}, folds 1-4 train {len(train)}")
    rows, curves = [], {}
    hybrid = None
    for name, config in SYSTEMS.items():
        start = time.perf_counter()
        retriever = HybridRetriever(dataset.kb, config)
        build = time.perf_counter() - start
        rank = {
            e.id: [r.item.id for r in retriever.retrieve(e.context, e.dialog_id, args.depth).ranked] for e in seeking
        }
        k = best_top_k([e.knowledge_ids for e in train], [rank[e.id] for e in train])
        golds, rankings = [e.knowledge_ids for e in test], [rank[e.id] for e in test]
        scores = selection_scores(golds, [r[:k] for r in rankings])
        curves[name] = recall_at(golds, rankings)
        rows.append({"system": name, "cut": f"top-{k}", **scores, "R@1": curves[name][1], "R@5": curves[name][5]})
        print(f"{name}: {rows[-1]} (build {build:.1f}s)", flush=True)
        if config.fusion == "rrf":
            hybrid = retriever
    assert hybrid is not None
    start = time.perf_counter()
    hybrid.reranker = rerank.train(hybrid, train, relative_cut=args.relative_cut)
    print(f"reranker trained in {time.perf_counter() - start:.1f}s, threshold {hybrid.reranker.threshold:.3f}")
    golds = [e.knowledge_ids for e in test]
    rankings = [[r.item.id for r in hybrid.retrieve(e.context, e.dialog_id, args.depth).ranked] for e in test]
    preds = [[r.item.id for r in hybrid.retrieve(e.context, e.dialog_id, 10).selected] for e in test]
    name = "hybrid + reranker"
    curves[name] = recall_at(golds, rankings)
    cut = f"p>={hybrid.reranker.threshold:.3f}, >={hybrid.reranker.relative:.1f}xbest"
    rows.append(
        {"system": name, "cut": cut, **selection_scores(golds, preds), "R@1": curves[name][1], "R@5": curves[name][5]}
    )
    table = markdown_table(rows)
    print(table)
    plot_recall(curves, "DSTC11 val fold 0: recall@k", DOCS / "retrieval_dstc11_recall.png")
    (DOCS / "retrieval_dstc11.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
