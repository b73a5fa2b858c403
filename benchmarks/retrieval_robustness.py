"""Robustness to ASR errors: selection R@1 (DSTC9 definition: the top item is gold) on Huawei valid turns that use
triples, with simulated pinyin-homophone noise on the user turns at 0 %, 10 % and 20 % (``ragdial.text.asr_noise``,
seeded), no training involved. The plot shows recall@k (share of gold found) at the highest noise rate.

Run: ``PYTHONPATH=src python benchmarks/retrieval_robustness.py [--rates 0 0.1 0.2]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _retrieval_common import DOCS, markdown_table, plot_recall, recall_at
from ragdial import datasets
from ragdial.metrics.retrieval import recall_at_k
from ragdial.paths import data_root
from ragdial.retrieval.analyzer import Analyzer
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.text.asr_noise import corrupt_context


def systems() -> dict[str, RetrieverConfig]:
    pinyin = Analyzer(pinyin=True)  # pinyin bigram tokens and pinyin entity matching
    return {
        "BM25": RetrieverConfig(encoder=None, fusion="bm25", carry_turns=100),
        "BM25 + pinyin": RetrieverConfig(encoder=None, fusion="bm25", analyzer=pinyin, carry_turns=100),
        "hybrid (RRF)": RetrieverConfig(fusion="rrf", carry_turns=100),
        "hybrid + pinyin": RetrieverConfig(fusion="rrf", analyzer=pinyin, carry_turns=100),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=data_root())
    parser.add_argument("--rates", type=float, nargs="+", default=[0.0, 0.1, 0.2])
    args = parser.parse_args()
    ds = datasets.load("huawei", args.data / "huawei_kdsd" / "valid.json")
    clean = [e for e in ds.examples if e.needs_knowledge and e.knowledge_ids]
    print(f"Huawei valid: {len(clean)} turns with triples, KB {len(ds.kb)}")
    golds = [e.knowledge_ids for e in clean]
    rows, curves = [], {}
    for name, config in systems().items():
        retriever = HybridRetriever(ds.kb, config)
        row: dict[str, Any] = {"system": name}
        for rate in args.rates:
            examples = [corrupt_context(e, rate, seed=i) for i, e in enumerate(clean)] if rate else clean
            rankings = [[r.item.id for r in retriever.retrieve(e.context, e.dialog_id, 20).ranked] for e in examples]
            curve = recall_at(golds, rankings)
            row[f"R@1 {rate:.0%}"] = recall_at_k(golds, rankings, 1, unit="query").value
            if rate == max(args.rates):
                curves[f"{name} @{rate:.0%}"] = curve
        row["drop (points)"] = 100 * (row[f"R@1 {args.rates[0]:.0%}"] - row[f"R@1 {args.rates[-1]:.0%}"])
        rows.append(row)
        print(row, flush=True)
    print(markdown_table(rows))
    plot_recall(
        curves, f"Huawei valid, {max(args.rates):.0%} homophone noise", DOCS / "retrieval_robustness_recall.png"
    )
    (DOCS / "retrieval_robustness.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
