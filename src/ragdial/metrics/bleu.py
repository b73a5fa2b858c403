"""BLEU: one n-gram core for corpus and sentence level, with the smoothing variants the challenges use.

- ``smoothing="none"``: nltk's ``corpus_bleu``/``sentence_bleu`` without a smoothing function (method0): the score is
  0 when no unigram matches; an n-gram order with no match contributes ``log(sys.float_info.min)``; brevity penalty 0
  for an empty hypothesis. DSTC9 ``scores.py`` (sentence level, BLEU-1..4 with uniform weights) uses this.
- ``smoothing="epsilon"``: FutureDial-RAG ``metrics.BLEUScorer``: ``p_n = clip/(count + 1e-7) + 1e-7`` and
  ``bp = 1 if c > r else exp(1 - r/(c + 1e-7))``.
- :func:`sacrebleu_corpus_bleu`: sacrebleu's corpus BLEU with its defaults (13a, exp smoothing), as the DSTC11
  scorer calls it through summ_eval's ``BleuMetric``.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from ragdial.metrics import tokenizers
from ragdial.metrics.result import Score, signature, with_version

SMOOTHINGS = ("none", "epsilon")
EPSILON = 1e-7


def ngrams(tokens: Sequence[str], n: int) -> Counter:
    """Counts of the n-grams of ``tokens``."""
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


@dataclass
class BleuStats:
    """Clipped matches and n-gram totals per order, hypothesis and closest-reference lengths, summed over
    segments (``floored_totals`` counts at least 1 per segment and order, as nltk's ``modified_precision``)."""

    max_n: int
    matches: list[int] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    floored_totals: list[int] = field(default_factory=list)  # nltk: max(1, n-gram count) per segment
    hyp_len: int = 0
    ref_len: int = 0

    def __post_init__(self) -> None:
        self.matches = self.matches or [0] * self.max_n
        self.totals = self.totals or [0] * self.max_n
        self.floored_totals = self.floored_totals or [0] * self.max_n

    def add(self, hypothesis: Sequence[str], references: Sequence[Sequence[str]]) -> None:
        """Add one segment: a token list and its reference token lists."""
        for order in range(1, self.max_n + 1):
            counts = ngrams(hypothesis, order)
            best: Counter = Counter()
            for reference in references:
                best |= ngrams(reference, order)
            self.matches[order - 1] += sum(min(c, best[g]) for g, c in counts.items())
            self.totals[order - 1] += sum(counts.values())
            self.floored_totals[order - 1] += max(1, sum(counts.values()))
        length = len(hypothesis)
        self.hyp_len += length
        # closest reference length, ties to the shorter (nltk); with one reference every variant agrees
        self.ref_len += min((len(r) for r in references), key=lambda r: (abs(r - length), r))


def bleu_from_stats(stats: BleuStats, weights: Sequence[float], smoothing: str = "none") -> float:
    """BLEU in [0, 1] from accumulated statistics."""
    if smoothing == "none":
        if stats.matches[0] == 0:
            return 0.0
        logs = []
        for order, weight in enumerate(weights):
            match, total = stats.matches[order], stats.floored_totals[order]
            precision = match / total if match else sys.float_info.min
            logs.append(weight * math.log(precision))
        if stats.hyp_len > stats.ref_len:
            penalty = 1.0
        elif stats.hyp_len == 0:
            penalty = 0.0
        else:
            penalty = math.exp(1 - stats.ref_len / stats.hyp_len)
        return penalty * math.exp(math.fsum(logs))
    if smoothing == "epsilon":
        c, r = stats.hyp_len, stats.ref_len
        penalty = 1.0 if c > r else math.exp(1 - r / (c + EPSILON))
        precisions = [stats.matches[i] / (stats.totals[i] + EPSILON) + EPSILON for i in range(len(weights))]
        return penalty * math.exp(math.fsum(w * math.log(p) for w, p in zip(weights, precisions, strict=True) if p))
    raise ValueError(f"unknown smoothing {smoothing!r}; choose one of {', '.join(SMOOTHINGS)}")


def _weights(n: int) -> list[float]:
    return [1.0 / n] * n


def bleu_signature(n: int, tokenizer: str, smoothing: str, level: str) -> str:
    return signature("bleu", n=n, tok=tokenizer, smooth=smoothing, level=level, scale="0-1")


def corpus_bleu(
    hypotheses: Sequence[str],
    references: Sequence[str | Sequence[str]],
    n: int = 4,
    tokenizer: str = "words",
    smoothing: str = "none",
) -> Score:
    """Corpus BLEU-n (uniform weights) in [0, 1]; each reference is a string or a list of strings."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    tokenize = tokenizers.get(tokenizer)
    stats = BleuStats(n)
    for hypothesis, refs in zip(hypotheses, references, strict=True):
        refs = [refs] if isinstance(refs, str) else refs
        stats.add(tokenize(hypothesis), [tokenize(r) for r in refs])
    value = bleu_from_stats(stats, _weights(n), smoothing)
    return Score(f"bleu-{n}", value, bleu_signature(n, tokenizer, smoothing, "corpus"))


def sentence_bleu(
    hypothesis: str, references: str | Sequence[str], n: int = 4, tokenizer: str = "words", smoothing: str = "none"
) -> Score:
    """Sentence BLEU-n (uniform weights) in [0, 1]."""
    score = corpus_bleu([hypothesis], [references], n, tokenizer, smoothing)
    return Score(score.name, score.value, bleu_signature(n, tokenizer, smoothing, "sentence"))


def mean_sentence_bleu(
    hypotheses: Sequence[str],
    references: Sequence[str | Sequence[str]],
    n: int = 4,
    tokenizer: str = "words",
    smoothing: str = "none",
) -> Score:
    """The mean of sentence BLEU-n over segments (0 for an empty list)."""
    values = [sentence_bleu(h, r, n, tokenizer, smoothing).value for h, r in zip(hypotheses, references, strict=True)]
    value = math.fsum(values) / len(values) if values else 0.0
    return Score(f"bleu-{n}", value, bleu_signature(n, tokenizer, smoothing, "sentence-mean"))


def sacrebleu_corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> Score:
    """sacrebleu ``corpus_bleu`` with its defaults (one reference per segment), scaled to [0, 1]."""
    import sacrebleu

    if not hypotheses:
        return Score("bleu", 0.0, signature("sacrebleu", empty=True))
    metric = sacrebleu.metrics.BLEU()
    result = metric.corpus_score(list(hypotheses), [list(references)])
    return Score("bleu", result.score / 100.0, with_version(f"sacrebleu|{metric.get_signature()}|scale:0-1"))
