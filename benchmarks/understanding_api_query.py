"""MobileCS2 api_query prediction, dialog-grouped cross-validation on MobileCS2 dialogs files, scored per label.

MobileCS2 is not redistributed, so by default this runs on our fixtures (tests/fixtures/mobilecs2/official/zh
train + dev and tests/fixtures/mobilecs2/zh: 14 invented dialogs, 54 turns, pooled): a check that the
parts fit, written by the same hand as the code, not a benchmark. Point --data at real dialogs files to measure
(several files are pooled).
Each fold (crc32 of the dialog's first user turn % k) is predicted by a model trained on the others; predictions
are pooled. Per label (and "none" = no look-up): P/R/F1 over turns; overall: exact match of the whole api_query and
micro P/R/F1 over label sets. Models: the majority api_query, the earlier model (n-grams, unweighted, threshold
0.5), class-balanced with per-label thresholds, and that plus routing features from the knowledge match
(ragdial.understanding.SourceMatch; the synthetic [QA] entries of the held-out fold's dialogs are left out of its KB).
Usage: PYTHONPATH=src python benchmarks/understanding_api_query.py [--data a.json b.json] [--folds 4]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any, cast

from ragdial import datasets
from ragdial.datasets.folds import fold_of
from ragdial.metrics.classification import classification_report
from ragdial.metrics.retrieval import set_prf
from ragdial.understanding import api_query_classifier, format_api_query, parse_api_query
from understanding_common import table

FIXTURES = Path(__file__).resolve().parents[1] / "tests/fixtures/mobilecs2"
DEFAULT = [
    FIXTURES / "official/zh/train_final_processed.json",
    FIXTURES / "official/zh/dev_final_processed.json",
    FIXTURES / "zh/dev_final_processed.json",
]
NONE = "none"


def overall(gold: list[list[str]], predicted: list[list[str]]) -> list[float]:
    joined_gold = [format_api_query(g) or NONE for g in gold]
    joined_pred = [format_api_query(p) or NONE for p in predicted]
    exact = float(cast(float, classification_report(joined_gold, joined_pred)["accuracy"]))
    prf = set_prf(gold, predicted)
    return [exact, prf["precision"].value, prf["recall"].value, prf["f1"].value]


def per_label(gold: list[list[str]], predicted: list[list[str]], label: str) -> tuple[int, float, float, float]:
    def has(labels: list[str]) -> bool:
        return not labels if label == NONE else label in labels

    tp = sum(has(g) and has(p) for g, p in zip(gold, predicted, strict=True))
    support, guessed = sum(has(g) for g in gold), sum(has(p) for p in predicted)
    precision = tp / guessed if guessed else 0.0
    recall = tp / support if support else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return support, precision, recall, f1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, nargs="+", default=DEFAULT)
    parser.add_argument("--folds", type=int, default=4)
    args = parser.parse_args()
    loaded = [datasets.load("mobilecs2", path) for path in args.data]
    examples = [e for d in loaded for e in d.examples if e.api_query is not None]
    kb_items = {item.id: item for d in loaded for item in d.kb}
    models: dict[str, dict[str, Any] | None] = {
        "majority api_query": None,
        "earlier: n-grams, unweighted, threshold 0.5": {"class_weight": None, "tune_thresholds": False},
        "balanced + per-label thresholds": {"tune_thresholds": True},
        "balanced + thresholds + routing (knowledge match)": {"knowledge": True, "tune_thresholds": True},
        "balanced + routing, threshold 0.5 (default)": {"knowledge": True},
        "unweighted + routing, threshold 0.5": {"knowledge": True, "class_weight": None},
    }
    predictions: dict[str, list[list[str]]] = {name: [] for name in models}
    gold: list[list[str]] = []
    for fold in range(args.folds):
        train = [e for e in examples if fold_of(e, args.folds) != fold]
        dev = [e for e in examples if fold_of(e, args.folds) == fold]
        if not dev:
            continue
        held_out = {e.dialog_id for e in dev}
        targets = [parse_api_query(e.api_query) for e in train]
        gold += [parse_api_query(e.api_query) for e in dev]
        for name, options in models.items():
            if options is None:
                common = Counter(format_api_query(t) for t in targets).most_common(1)[0][0]
                predictions[name] += [parse_api_query(common) for _ in dev]
                continue
            chosen = dict(options)
            if chosen.pop("knowledge", False):
                chosen["knowledge"] = [k for k in kb_items.values() if k.fields.get("dialog") not in held_out]
            model = api_query_classifier(**chosen).fit([e.context for e in train], targets)
            predictions[name] += cast("list[list[str]]", model.predict([e.context for e in dev]))
    labels = [*sorted({label for g in gold for label in g}), NONE]
    names = ", ".join(str(p) for p in args.data)
    print(f"\nMobileCS2 api_query, {names}: {len(examples)} turns, {args.folds} dialog-grouped folds\n")
    rows = [[name, *overall(gold, predicted)] for name, predicted in predictions.items()]
    print(table(["model", "exact match", "label P", "label R", "label F1"], rows))
    print()
    rows = []
    for label in labels:
        support = per_label(gold, gold, label)[0]
        rows.append([label, support, *(per_label(gold, p, label)[3] for p in predictions.values())])
    print(table(["label", "turns", *(f"F1 {name}" for name in models)], rows))


if __name__ == "__main__":
    main()
