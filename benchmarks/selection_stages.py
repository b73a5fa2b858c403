"""Where the gold knowledge is lost on the way to the selection (issue 20): per-stage recall on DSTC11 val.

For every gold item of the knowledge-seeking turns (gold detection) the stages are, in order:

- ``linked``: the item's entity is in the tracked focus, or no entity is in focus (every item stays a candidate);
- ``candidate``: the item is among the retriever's candidates (entity scope + items without an entity);
- ``fed``: the item is among the reranker's input, the ``depth`` best candidates by the fused score (the transfer
  reranker with a second encoder: by the fusion of that score and the encoder's cosine);
- ``R@1``/``R@5``/``R@10``/``R@20``: the item is in the reranked top k;
- ``selected``: the reranker's cut keeps it.

Each is the share of all gold items (micro), so the drop from one stage to the next is what that stage loses.
``oracle-k F1/EM`` cut the final ranking at the turn's gold count (what a perfect cut would get from that
ranking); ``F1``/``EM`` are the real cut's (the DSTC11 formula, ``ragdial.evaluation.selection_scores``).

Protocols as in ``zero_shot.py``: ``lodo`` (train one domain with its knowledge only, evaluate the other
domain's dialog groups against the full KB) and ``fold0`` (folds 1-4 train, fold 0 evaluates). No test split is read.

Usage: ``PYTHONPATH=src python benchmarks/selection_stages.py lodo|fold0 [--system transfer|indomain]
[--aux-encoder minilm] [--json OUT]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _zero_shot_protocols import DSTC11_DOMAINS, domain_kb, domain_split, load_dstc11
from ragdial.datasets.folds import split_folds
from ragdial.evaluation import selection_scores
from ragdial.paths import data_root
from ragdial.retrieval import rerank, transfer
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.schema import Example

KS = (1, 5, 10, 20)


def stages(retriever: HybridRetriever, examples: Sequence[Example], depth: int) -> dict[str, float]:
    """Per-stage shares of the gold items of ``examples`` (see the module docstring)."""
    counts = dict.fromkeys(("linked", "candidate", "fed", *[f"R@{k}" for k in KS], "selected"), 0)
    golds, picks, oracle = [], [], []
    total = 0
    for example in examples:
        gold = set(example.knowledge_ids)
        scores = retriever.score(example.context, example.dialog_id)
        candidates = [retriever.items[int(i)].id for i in scores.indices]
        model = retriever.reranker
        if isinstance(model, transfer.TransferReranker):  # its input may be ordered with its second encoder too
            top = transfer.reranker_input(retriever, example.context, scores, depth, model.aux_encoder)
        else:
            top = np.argsort(-scores.fused, kind="stable")[:depth]
        fed = {candidates[i] for i in top}
        found = retriever.rank(example.context, scores, max(KS))
        ranked = [r.item.id for r in found.ranked]
        focus = set(scores.focus)
        for item_id in gold:
            total += 1
            entity = retriever.kb.get(item_id).fields.get("entity")
            counts["linked"] += not focus or entity in focus
            counts["candidate"] += item_id in candidates
            counts["fed"] += item_id in fed
            for k in KS:
                counts[f"R@{k}"] += item_id in ranked[:k]
            counts["selected"] += item_id in {r.item.id for r in found.selected}
        golds.append(example.knowledge_ids)
        picks.append([r.item.id for r in found.selected])
        oracle.append(ranked[: len(gold)])
    row: dict[str, float] = {name: count / max(total, 1) for name, count in counts.items()}
    cut = selection_scores(golds, picks)
    best = selection_scores(golds, oracle)
    row.update({"P": cut["P"], "F1": cut["F1"], "EM": cut["EM"], "oracle-k F1": best["F1"], "oracle-k EM": best["EM"]})
    row["gold items"] = total
    return row


def runs(protocol: str, data: Path):
    dstc11 = load_dstc11(data)
    if protocol == "fold0":
        train, test = split_folds(dstc11.examples)
        yield "folds 1-4 -> fold 0", train, dstc11.kb, test, dstc11.kb
        return
    for source in DSTC11_DOMAINS:
        target = next(d for d in DSTC11_DOMAINS if d != source)
        train, _ = domain_split(dstc11.examples, source)
        test, _ = domain_split(dstc11.examples, target)
        yield f"{source} -> {target}", train, domain_kb(dstc11.kb, source), test, dstc11.kb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("protocol", choices=("lodo", "fold0"))
    parser.add_argument("--data", type=Path, default=data_root())
    parser.add_argument("--system", choices=("transfer", "indomain"), action="append", help="default: both")
    parser.add_argument("--depth", type=int, help="reranker depth (default: each reranker's own)")
    parser.add_argument("--aux-encoder", help="transfer reranker: a second encoder it also reads (e.g. minilm)")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args()
    config = RetrieverConfig(fusion="rrf")
    rows = []
    for name, train, train_kb, test, test_kb in runs(args.protocol, args.data):
        train = [e for e in train if e.needs_knowledge and e.knowledge_ids]
        test = [e for e in test if e.needs_knowledge and e.knowledge_ids]
        train_retriever, retriever = HybridRetriever(train_kb, config), HybridRetriever(test_kb, config)
        for system in args.system or ["transfer", "indomain"]:
            started = time.perf_counter()
            depth = {"depth": args.depth} if args.depth else {}
            aux = args.aux_encoder if system == "transfer" else None
            model: rerank.RerankerModel
            if system == "transfer":
                model = transfer.train(train_retriever, train, aux_encoder=aux, **depth)
            else:
                model = rerank.train(train_retriever, train, relative_cut=True, **depth)
            retriever.reranker = model
            row = {"run": name, "system": system, "depth": model.depth, **stages(retriever, test, model.depth)}
            row["aux encoder"] = aux or "-"
            row["seconds"] = round(time.perf_counter() - started)
            rows.append(row)
            print({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}, flush=True)
            if args.json:
                args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
