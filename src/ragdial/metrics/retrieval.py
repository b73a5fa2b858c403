"""Retrieval and selection metrics over ranked lists and sets of ids.

Every corpus function takes parallel sequences: the gold ids of each query and the ranked (or unordered) predicted
ids. ``reciprocal_rank`` and ``hit_at_k`` score one query (the terms the corpus means average); like every metric
here they return a :class:`Score`.
``no_gold`` says what a query without gold ids counts as: ``"skip"`` (left out of the mean, the default and what
the challenges do), ``"zero"``, ``"one"`` or ``"error"``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from functools import cache

from ragdial.metrics.classification import prf_counts
from ragdial.metrics.result import Score, signature

NO_GOLD = ("skip", "zero", "one", "error")


def reciprocal_rank(relevant: Iterable[Hashable], ranked: Sequence[Hashable], k: int) -> Score:
    """One query's 1/rank of the first item of ``ranked[:k]`` that is in ``relevant`` (0 when none is): the term
    ``mrr_at_k`` averages (and DSTC9's ``scores.py`` sums per instance)."""
    wanted = set(relevant)
    value = 0.0
    for rank, item in enumerate(list(ranked)[:k], start=1):
        if item in wanted:
            value = 1.0 / rank
            break
    return Score(f"rr@{k}", value, _query_signature("rr", k))


def hit_at_k(relevant: Iterable[Hashable], ranked: Sequence[Hashable], k: int) -> Score:
    """One query's hit: 1 when any of ``ranked[:k]`` is in ``relevant``, else 0 (the term of query-level R@k)."""
    wanted = set(relevant)
    value = 1.0 if any(item in wanted for item in list(ranked)[:k]) else 0.0
    return Score(f"hit@{k}", value, _query_signature("hit", k))


@cache
def _query_signature(name: str, k: int) -> str:
    return signature(name, k=k, unit="query")


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _per_query(gold, ranked, no_gold: str, fn) -> list[float]:
    if no_gold not in NO_GOLD:
        raise ValueError(f"no_gold must be one of {NO_GOLD}")
    if len(gold) != len(ranked):
        raise ValueError(f"{len(gold)} gold lists for {len(ranked)} predictions")
    values = []
    for index, (relevant, predicted) in enumerate(zip(gold, ranked, strict=True)):
        if not relevant:
            if no_gold == "error":
                raise ValueError(f"query {index} has no gold ids")
            if no_gold != "skip":
                values.append(0.0 if no_gold == "zero" else 1.0)
            continue
        values.append(fn(set(relevant), list(predicted), relevant))
    return values


def recall_at_k(
    gold: Sequence[Sequence[Hashable]],
    ranked: Sequence[Sequence[Hashable]],
    k: int,
    unit: str = "query",
    no_gold: str = "skip",
) -> Score:
    """Recall@k. ``unit="query"``: a query scores 1 when any gold id is in its top k (DSTC9 R@k).
    ``unit="piece"``: every gold id counts on its own (FutureDial-RAG track 1); ``"fraction"``: the mean per query
    of the share of its gold ids in the top k."""
    if unit == "piece":
        hits = total = 0
        for relevant, predicted in zip(gold, ranked, strict=True):
            top = set(list(predicted)[:k])
            hits += sum(1 for g in relevant if g in top)
            total += len(relevant)
        value = hits / total if total else 0.0
    elif unit in ("query", "fraction"):

        def one(relevant, predicted, raw):
            if unit == "query":
                return hit_at_k(relevant, predicted, k).value
            return len(relevant & set(predicted[:k])) / len(relevant)

        value = _mean(_per_query(gold, ranked, no_gold, one))
    else:
        raise ValueError("unit must be 'query', 'piece' or 'fraction'")
    return Score(f"recall@{k}", value, signature("recall", k=k, unit=unit, no_gold=no_gold))


def mrr_at_k(gold: Sequence[Sequence[Hashable]], ranked: Sequence[Sequence[Hashable]], k: int, no_gold: str = "skip"):
    """Mean reciprocal rank of the first gold id within the top k (0 when none is there)."""

    def one(relevant, predicted, raw):
        return reciprocal_rank(relevant, predicted, k).value

    value = _mean(_per_query(gold, ranked, no_gold, one))
    return Score(f"mrr@{k}", value, signature("mrr", k=k, no_gold=no_gold))


def set_prf(
    gold: Sequence[Sequence[Hashable]], predicted: Sequence[Sequence[Hashable]], average: str = "micro"
) -> dict[str, Score]:
    """Precision/recall/F1 of predicted id sets against gold id sets (duplicates removed), plus exact match over
    the queries where gold or prediction is non-empty.

    ``average="micro"`` pools the counts of every query; ``"query"`` averages each query's P/R/F1, a query with
    neither gold nor predicted ids scoring 1 and a one-sided one 0 (the Huawei knowledge-driven dialogue
    organisers' knowledge-selection scoring, ``calu_knowledge_selection`` in their baseline)."""
    if average not in ("micro", "query"):
        raise ValueError(f"average must be 'micro' or 'query', not {average!r}")
    tp = fp = fn = exact = counted = 0
    per_query: list[tuple[float, float, float]] = []
    for gold_ids, predicted_ids in zip(gold, predicted, strict=True):
        relevant, guessed = set(gold_ids), set(predicted_ids)
        hits = len(relevant & guessed)
        tp += hits
        fp += len(guessed) - hits
        fn += len(relevant) - hits
        if relevant or guessed:
            counted += 1
            exact += relevant == guessed
            per_query.append(prf_counts(hits, len(guessed) - hits, len(relevant) - hits))
        else:
            per_query.append((1.0, 1.0, 1.0))
    if average == "micro":
        p, r, f = prf_counts(tp, fp, fn)
    else:
        p, r, f = (_mean([values[i] for values in per_query]) for i in range(3))
    sig = signature("set-prf", avg=average, dedup=True, **({"both_empty": 1} if average == "query" else {}))
    return {
        "precision": Score("precision", p, sig),
        "recall": Score("recall", r, sig),
        "f1": Score("f1", f, sig),
        "exact_match": Score("exact_match", exact / counted if counted else 0.0, sig + "|em_over:non-empty"),
    }
