"""Retrieval speed on the DSTC9 test knowledge (``dstc9_track1/knowledge_eval.json``, 12,039 snippets).

Queries: N snippet titles (seeded sample) asked as one-turn contexts with no entity named, so every query is scored
against the whole KB (the worst case). Each query is timed end to end (tokenisation included) for BM25-only,
dense-only and hybrid (RRF) ``HybridRetriever``, and for plain ``bm25s`` and ``rank-bm25`` over the same tokens.
Run: ``PYTHONPATH=src python benchmarks/retrieval_speed.py [--queries 500]``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _retrieval_common import DOCS, markdown_table
from ragdial.datasets import dstc
from ragdial.evaluation import Latency
from ragdial.paths import data_root
from ragdial.retrieval.analyzer import Analyzer
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.retrieval.index import load_index, save_index
from ragdial.retrieval.lexical import LexicalIndex
from ragdial.schema import Speaker, Turn
from ragdial.text.encoders import QueryCache, encode_cached, get_encoder


def timed(fn, queries) -> dict[str, float]:
    for q in queries[:5]:  # warm-up
        fn(q)
    latencies = []
    start = time.perf_counter()
    for q in queries:
        t = time.perf_counter()
        fn(q)
        latencies.append(time.perf_counter() - t)
    total = time.perf_counter() - start
    summary = Latency.of(seconds * 1000 for seconds in latencies)
    return {"queries/s": len(queries) / total, "p50 ms": summary.p50, "p95 ms": summary.p95}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=data_root())
    parser.add_argument("--queries", type=int, default=500)
    args = parser.parse_args()
    kb = dstc.load_knowledge(args.data / "dstc9_track1" / "knowledge_eval.json")
    items = list(kb)
    texts = [i.text for i in items]
    rng = random.Random(0)
    queries = [str(i.fields["title"]) for i in rng.sample(items, args.queries)]
    analyzer = Analyzer()
    build: dict[str, float] = {}

    start = time.perf_counter()
    corpus_tokens = [analyzer(t) for t in texts]
    build["tokenise"] = time.perf_counter() - start
    start = time.perf_counter()
    LexicalIndex.build(texts, analyzer)
    build["BM25 index (tokenise + bm25s)"] = time.perf_counter() - start
    encoder = get_encoder("use")
    with tempfile.TemporaryDirectory() as cold:
        start = time.perf_counter()
        vectors = encode_cached(encoder, texts, directory=Path(cold))
        build["USE embeddings, cold cache"] = time.perf_counter() - start
        vectors = np.array(vectors)
    hybrid = HybridRetriever(kb, RetrieverConfig(fusion="rrf"), vectors=vectors)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        save_index(hybrid, Path(tmp) / "idx")
        build["save index dir"] = time.perf_counter() - start
        start = time.perf_counter()
        load_index(Path(tmp) / "idx")
        build["load index dir (mmap)"] = time.perf_counter() - start
    print(f"KB: {len(items)} snippets; {len(queries)} queries")
    print(markdown_table([{"step": k, "seconds": v} for k, v in build.items()]))

    systems: dict[str, Callable[[str], Any]] = {}
    for name, fusion in (("ragdial BM25", "bm25"), ("ragdial dense (USE)", "dense"), ("ragdial hybrid (RRF)", "rrf")):
        config = RetrieverConfig(fusion=fusion, encoder="use" if fusion != "bm25" else None)
        retriever = HybridRetriever(kb, config, lexical=hybrid.lexical, vectors=vectors if fusion != "bm25" else None)

        def search(q: str, r: HybridRetriever = retriever) -> Any:
            return r.retrieve([Turn(Speaker.USER, q)], k=20)

        systems[name] = search
    # the same hybrid call when the query's vector is already cached (an earlier turn of the dialog, or a retry)
    systems["ragdial hybrid, query vector cached"] = systems["ragdial hybrid (RRF)"]

    import bm25s

    plain = bm25s.BM25(method="lucene")
    plain.index(corpus_tokens, show_progress=False)

    def plain_bm25s(q: str):
        tokens = analyzer(q)
        return plain.retrieve([tokens], k=20, show_progress=False, n_threads=1) if tokens else None

    systems["plain bm25s"] = plain_bm25s
    from rank_bm25 import BM25Okapi

    okapi = BM25Okapi([t or [""] for t in corpus_tokens])

    def rank_bm25(q: str):
        scores = okapi.get_scores(analyzer(q))
        return np.argsort(-scores)[:20]

    systems["rank-bm25 (BM25Okapi)"] = rank_bm25
    rows = []
    for name, fn in systems.items():
        if "cached" not in name:
            QueryCache.shared(encoder).clear()  # every system encodes its own queries
        n = len(queries) if name != "rank-bm25 (BM25Okapi)" else min(len(queries), 100)
        rows.append({"system": name, **timed(fn, queries[:n]), "queries": n})
        print(rows[-1], flush=True)
    print(markdown_table(rows))
    (DOCS / "retrieval_speed.json").write_text(json.dumps({"build": build, "query": rows}, indent=2))


if __name__ == "__main__":
    main()
