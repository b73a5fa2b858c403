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
from typing import cast

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _retrieval_common import DOCS, as_model, best_cut, curve, markdown_table, plot_recall, row
from ragdial.challenges import DSTC11
from ragdial.evaluation import RetrievalEvaluator
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
    parser.add_argument(
        "--shortlist",
        type=int,
        default=None,
        help="force the large-KB path on this KB (prune_above 0: BM25/dense top-N shortlist, faiss dense index); "
        "results go to retrieval_dstc11_shortlist.json, the figure is not redrawn",
    )
    parser.add_argument(
        "--milvus",
        action="store_true",
        help="also run MilvusRetriever (milvus-lite, a temporary file) with and without the same trained reranker; "
        "results go to retrieval_dstc11_milvus.json beside the in-process rows of the same run",
    )
    args = parser.parse_args()
    if args.shortlist is not None:
        for config in SYSTEMS.values():
            config.shortlist, config.prune_above = args.shortlist, 0
    dataset = DSTC11.load(args.data / "dstc11_track5", "val")
    seeking = {e.id for e in dataset.examples if e.needs_knowledge and e.knowledge_ids}
    train = [e for e in DSTC11.examples(dataset, 0, keep=False) if e.id in seeking]
    test = [e for e in DSTC11.examples(dataset, 0) if e.id in seeking]
    print(f"DSTC11 val: {len(seeking)} knowledge-seeking turns; fold 0 eval {len(test)}, folds 1-4 train {len(train)}")
    tune, evaluate = RetrievalEvaluator(train, ks=(1,), name="train"), RetrievalEvaluator(test, name="fold 0")
    rows, curves = [], {}
    hybrid = None
    for name, config in SYSTEMS.items():
        start = time.perf_counter()
        retriever = HybridRetriever(dataset.kb, config)
        build = time.perf_counter() - start
        tuned = tune(as_model(retriever, args.depth))
        ranked = [cast("list[str]", tuned.predictions[e.id]) for e in train]
        evaluate.cut = best_cut([e.knowledge_ids for e in train], ranked)
        result = evaluate(as_model(retriever, args.depth))
        curves[name] = curve(result.scores)
        rows.append(row(name, f"top-{evaluate.cut}", result.scores))
        print(f"{name}: {rows[-1]} (build {build:.1f}s)", flush=True)
        if config.fusion == "rrf":
            hybrid = retriever
    assert hybrid is not None
    start = time.perf_counter()
    hybrid.reranker = rerank.train(hybrid, train, relative_cut=args.relative_cut)
    print(f"reranker trained in {time.perf_counter() - start:.1f}s, threshold {hybrid.reranker.threshold:.3f}")
    result = evaluate(as_model(hybrid, args.depth, select=True))
    name = "hybrid + reranker"
    curves[name] = curve(result.scores)
    rows.append(row(name, f"p>={hybrid.reranker.threshold:.3f}, >={hybrid.reranker.relative:.1f}xbest", result.scores))
    if args.milvus:
        rows = [{**r, "ms/turn": ""} for r in rows] + milvus_rows(dataset, hybrid, evaluate, args.depth)
    table = markdown_table(rows)
    print(table)
    if args.milvus:
        (DOCS / "retrieval_dstc11_milvus.json").write_text(json.dumps(rows, indent=2))
        return
    if args.shortlist is not None:
        (DOCS / "retrieval_dstc11_shortlist.json").write_text(json.dumps(rows, indent=2))
        return
    plot_recall(curves, "DSTC11 val fold 0: recall@k", DOCS / "retrieval_dstc11_recall.png")
    (DOCS / "retrieval_dstc11.json").write_text(json.dumps(rows, indent=2))


def milvus_rows(dataset, hybrid: HybridRetriever, evaluate: RetrievalEvaluator, depth: int) -> list[dict[str, object]]:
    """MilvusRetriever on milvus-lite over the same USE vectors with the in-process RRF's tuned top-k cut: BM25 over
    ragdial's analyzer tokens (``lexical: ragdial``, the default) and over Milvus' own analyzer (``lexical: milvus``),
    then the in-process reranker applied after the first (``MilvusRetriever(reranker=...)``, the same collection)."""
    import tempfile

    from ragdial.retrieval.milvus import MilvusRetriever

    out = []
    config = RetrieverConfig(fusion="rrf")

    def timed(name: str, cut: str, retriever, select: bool = False) -> None:
        start = time.perf_counter()
        result = evaluate(as_model(retriever, depth, select=select))
        per_turn = (time.perf_counter() - start) / len(evaluate.examples) * 1000
        out.append({**row(name, cut, result.scores), "ms/turn": round(per_turn, 1)})
        print(out[-1], flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        for lexical in ("ragdial", "milvus"):
            uri = str(Path(tmp) / f"{lexical}.db")
            start = time.perf_counter()
            plain = MilvusRetriever(uri, "dstc11", config, language="en", lexical=lexical)
            plain.build(dataset.kb, vectors=hybrid.vectors)
            print(f"milvus-lite ({lexical}): {len(dataset.kb)} items in {time.perf_counter() - start:.1f}s", flush=True)
            timed(f"milvus-lite RRF (lexical: {lexical})", f"top-{evaluate.cut}", plain)
            plain.close()
        reranker = hybrid.reranker
        assert isinstance(reranker, rerank.Reranker)  # trained above: the threshold cut's reranker
        uri = str(Path(tmp) / "ragdial.db")
        reranked = MilvusRetriever(uri, "dstc11", config, language="en", kb=dataset.kb, reranker=reranker)
        cut = f"p>={reranker.threshold:.3f}, >={reranker.relative:.1f}xbest"
        timed("milvus-lite + reranker (trained in-process)", cut, reranked, select=True)
        reranked.close()
    return out


if __name__ == "__main__":
    main()
