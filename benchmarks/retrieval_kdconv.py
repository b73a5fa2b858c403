"""KdConv and Huawei knowledge-triple selection (micro P/R/F1 on system turns that use triples).

- ``--task kdconv``: train on film + music dev (KB = their triples), evaluate on travel dev with ``kb_travel.json``.
- ``--task huawei``: Huawei ``valid.json``, 5 dialog-grouped folds (the README rule of ``ragdial.datasets.folds``,
  as ``benchmarks/recipe_heldout.py huawei``; runs before 2026-11-23 10:45 UTC grouped by crc32 of the dialog
  index), mean over folds.

Run: ``PYTHONPATH=src python benchmarks/retrieval_kdconv.py --task kdconv|huawei [--noise 0.1]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _retrieval_common import DOCS, average_curves, average_rows, markdown_table, plot_recall, run_systems
from ragdial import datasets
from ragdial.datasets import folds as folds_rule
from ragdial.paths import data_root
from ragdial.retrieval.analyzer import Analyzer
from ragdial.retrieval.config import RetrieverConfig
from ragdial.schema import KnowledgeBase


def systems(pinyin: bool, dense: bool = True) -> dict[str, RetrieverConfig]:
    # candidates: the triples of every entity named so far in the dialog (the topic entity and those it led to)
    common: dict[str, Any] = {"analyzer": Analyzer(pinyin=pinyin), "carry_turns": 100}
    out = {
        "BM25": RetrieverConfig(encoder=None, fusion="bm25", **common),
        "dense (USE)": RetrieverConfig(fusion="dense", **common),
        "hybrid (RRF)": RetrieverConfig(fusion="rrf", **common),
    }
    if not dense:
        del out["dense (USE)"]
    return out


def seeking(dataset):
    return [e for e in dataset.examples if e.needs_knowledge and e.knowledge_ids]


def kdconv(root: Path, pinyin: bool, relative_cut: bool):
    train_sets = [datasets.load("kdconv", root / "kdconv" / d / "dev.json") for d in ("film", "music")]
    train_kb = KnowledgeBase(item for ds in train_sets for item in ds.kb)
    train = []
    for name, ds in zip(("film", "music"), train_sets, strict=True):
        for e in seeking(ds):
            e.dialog_id = f"{name}:{e.dialog_id}"
            train.append(e)
    test_ds = datasets.load("kdconv", root / "kdconv" / "travel")
    test = seeking(test_ds)
    print(f"KdConv: train {len(train)} turns (film+music), eval {len(test)} travel turns, KB {len(test_ds.kb)}")
    return run_systems(test_ds.kb, train, test, systems(pinyin), train_kb=train_kb, relative_cut=relative_cut)


def huawei(root: Path, pinyin: bool, noise: float, folds: int, dense: bool, relative_cut: bool):
    ds = datasets.load("huawei", root / "huawei_kdsd" / "valid.json")
    examples = seeking(ds)
    fold_of = {e.dialog_id: folds_rule.fold_of(e) for e in examples}  # of the clean text, whatever the noise
    if noise:
        from ragdial.text.asr_noise import corrupt_context

        examples = [corrupt_context(e, noise, seed=i) for i, e in enumerate(examples)]
    all_rows, all_curves = [], []
    for fold in range(folds):
        train = [e for e in examples if fold_of[e.dialog_id] != fold]
        test = [e for e in examples if fold_of[e.dialog_id] == fold]
        print(f"Huawei fold {fold}: train {len(train)}, eval {len(test)}, KB {len(ds.kb)}", flush=True)
        rows, curves = run_systems(ds.kb, train, test, systems(pinyin, dense), relative_cut=relative_cut)
        all_rows.append(rows)
        all_curves.append(curves)
    return average_rows(all_rows), average_curves(all_curves)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--task", choices=["kdconv", "huawei"], required=True)
    parser.add_argument("--data", type=Path, default=data_root())
    parser.add_argument("--pinyin", action="store_true", help="add pinyin tokens to BM25")
    parser.add_argument("--noise", type=float, default=0.0, help="homophone noise rate on user turns (huawei)")
    parser.add_argument("--folds", type=int, default=5, help="how many of the 5 huawei folds to run")
    parser.add_argument("--no-dense", action="store_true", help="skip the dense-only system (saves time)")
    parser.add_argument("--relative-cut", action="store_true", help="also tune a relative-to-best selection cut")
    args = parser.parse_args()
    if args.task == "kdconv":
        rows, curves = kdconv(args.data, args.pinyin, args.relative_cut)
        title = "KdConv travel dev (trained on film+music)"
    else:
        rows, curves = huawei(args.data, args.pinyin, args.noise, args.folds, not args.no_dense, args.relative_cut)
        title = f"Huawei valid, {args.folds} folds, noise {args.noise:.0%}"
    print(markdown_table(rows))
    tag = f"{args.task}{'_pinyin' if args.pinyin else ''}{f'_noise{int(args.noise * 100)}' if args.noise else ''}"
    plot_recall(curves, title, DOCS / f"retrieval_{tag}_recall.png")
    (DOCS / f"retrieval_{tag}.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
