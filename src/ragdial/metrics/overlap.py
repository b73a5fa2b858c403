"""Token-overlap metrics for generated responses: DISTINCT-n, generation F1 and FutureDial's Inform."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from ragdial.metrics import tokenizers
from ragdial.metrics.bleu import ngrams
from ragdial.metrics.result import Score, signature


def distinct(responses: Sequence[str], n: int, tokenizer: str = "chars-nopunct") -> Score:
    """Corpus DISTINCT-n: distinct n-grams over all n-grams of all responses (0 when there are none)."""
    tokenize = tokenizers.get(tokenizer)
    seen: Counter = Counter()
    for response in responses:
        seen.update(ngrams(tokenize(response), n))
    total = sum(seen.values())
    value = len(seen) / total if total else 0.0
    return Score(f"distinct-{n}", value, signature("distinct", n=n, tok=tokenizer, level="corpus"))


def token_f1(hypothesis: Sequence[str], reference: Sequence[str]) -> Score:
    """One response's F1 of the multiset overlap of two token lists (0 when either is empty or nothing overlaps):
    the term ``generation_f1`` averages."""
    common = sum((Counter(hypothesis) & Counter(reference)).values())
    value = 0.0
    if common:
        precision, recall = common / len(hypothesis), common / len(reference)
        value = 2 * precision * recall / (precision + recall)
    return Score("f1", value, _TOKEN_F1)


_TOKEN_F1 = signature("token-f1", tok="given", agg="none")


def generation_f1(hypotheses: Sequence[str], references: Sequence[str], tokenizer: str = "chars-nopunct") -> Score:
    """Mean over responses of the token-overlap F1 (characters by default, as the Chinese challenges use)."""
    tokenize = tokenizers.get(tokenizer)
    values = [token_f1(tokenize(h), tokenize(r)).value for h, r in zip(hypotheses, references, strict=True)]
    value = math.fsum(values) / len(values) if values else 0.0
    return Score("f1", value, signature("gen-f1", tok=tokenizer, agg="mean"))


def inform_hits(gold_pieces: Sequence[str], response: str) -> list[bool]:
    """For each gold knowledge piece, whether it appears verbatim in the response."""
    return [piece in response for piece in gold_pieces]


def inform(gold_pieces: Sequence[Sequence[str]], responses: Sequence[str]) -> Score:
    """FutureDial Inform: the share of gold pieces (over all turns) found verbatim in their turn's response.
    0 when no turn has a gold piece (the official script divides by zero there)."""
    hits = [
        hit for pieces, response in zip(gold_pieces, responses, strict=True) for hit in inform_hits(pieces, response)
    ]
    value = sum(hits) / len(hits) if hits else 0.0
    return Score("inform", value, signature("inform", match="substring", unit="piece"))
