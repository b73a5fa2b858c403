"""MobileCS2 api_query prediction, dialog-grouped cross-validation on a MobileCS2 dialogs file.

MobileCS2 is not redistributed, so by default this runs on our 6-dialog fixture (tests/fixtures/mobilecs2/zh): a
smoke figure that shows the pipeline end to end, not a benchmark. Point --data at a real dialogs file to measure.
Each fold (crc32 of the dialog's first user turn % k) is predicted by a model trained on the others; predictions
are pooled. Scores: exact match of the whole api_query (ragdial.metrics classification accuracy over the joined
strings), micro P/R/F1 over the label sets (ragdial.metrics.retrieval.set_prf), and the majority-label baseline.
Usage: PYTHONPATH=src python benchmarks/understanding_api_query.py [--data dialogs.json] [--folds 3]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from ragdial import datasets
from ragdial.datasets.folds import fold_of
from ragdial.metrics.classification import classification_report
from ragdial.metrics.retrieval import set_prf
from ragdial.understanding import api_query_classifier, format_api_query, training_data
from understanding_common import table

FIXTURE = Path(__file__).resolve().parents[1] / "tests/fixtures/mobilecs2/zh/dev_final_processed.json"


def scores(gold: list[list[str]], predicted: list[list[str]]) -> list[float]:
    joined_gold = [format_api_query(g) or "none" for g in gold]
    joined_pred = [format_api_query(p) or "none" for p in predicted]
    exact = classification_report(joined_gold, joined_pred)["accuracy"]
    prf = set_prf(gold, predicted)
    return [exact, prf["precision"].value, prf["recall"].value, prf["f1"].value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=FIXTURE)
    parser.add_argument("--folds", type=int, default=3)
    args = parser.parse_args()
    dataset = datasets.load("mobilecs2", args.data)
    examples = [e for e in dataset.examples if e.api_query is not None]
    gold, predicted, majority = [], [], []
    for fold in range(args.folds):
        train = [e for e in examples if fold_of(e, args.folds) != fold]
        dev = [e for e in examples if fold_of(e, args.folds) == fold]
        if not dev:
            continue
        dataset.examples = train
        contexts, targets = training_data("api_query", dataset)
        model = api_query_classifier().fit(contexts, targets)
        common = Counter(format_api_query(t) for t in targets).most_common(1)[0][0]
        dataset.examples = dev
        _, dev_targets = training_data("api_query", dataset)
        gold += dev_targets
        predicted += model.predict([e.context for e in dev])
        majority += [[label for label in common.split("，") if label] for _ in dev]
    rows = [
        ["majority api_query", *scores(gold, majority)],
        ["char+word n-grams, one logistic model per label", *scores(gold, predicted)],
    ]
    print(f"\nMobileCS2 api_query, {args.data}: {len(examples)} turns, {args.folds} dialog-grouped folds\n")
    print(table(["model", "exact match", "label P", "label R", "label F1"], rows))


if __name__ == "__main__":
    main()
