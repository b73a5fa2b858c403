"""ROUGE-1/2/L F-measures in two flavours.

- :func:`rouge` uses Google's ``rouge-score`` (the DSTC11 scorer: ``RougeScorer(['rouge1','rouge2','rougeL'],
  use_stemmer=True)``). Its default tokenizer keeps only ``[a-z0-9]``, so Chinese scores 0: pass ``tokenizer="words"``
  (jieba words) or ``"chars-nopunct"`` for Chinese.
- :func:`rouge_dstc9` reproduces the ``rouge`` package (pltrdy, 1.0.x) that DSTC9's ``scores.py`` calls after its own
  normalisation: n-grams and LCS words are counted as *sets*, F = 2PR/(P+R+1e-8), and ROUGE-L is the summary-level
  union LCS with that package's LCS back-tracking order.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from ragdial.metrics import tokenizers
from ragdial.metrics.result import Score, signature

ROUGE_KEYS = ("rouge1", "rouge2", "rougeL")


class _Tokenizer:
    """Adapter: rouge-score calls ``tokenize(text)``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._fn = tokenizers.get(name)

    def tokenize(self, text: str) -> list[str]:
        return self._fn(text)


@lru_cache(maxsize=8)
def _scorer(tokenizer: str, stemmer: bool):
    from rouge_score import rouge_scorer

    custom = None if tokenizer == "rouge-score" else _Tokenizer(tokenizer)
    return rouge_scorer.RougeScorer(list(ROUGE_KEYS), use_stemmer=stemmer, tokenizer=custom)


def rouge_signature(tokenizer: str = "rouge-score", stemmer: bool = True) -> str:
    return signature("rouge", impl="rouge-score", tok=tokenizer, stem=stemmer, stat="f", agg="sentence")


def rouge(hypothesis: str, reference: str, tokenizer: str = "rouge-score", stemmer: bool = True) -> dict[str, Score]:
    """``{"rouge1", "rouge2", "rougeL"}`` F-measures of one pair (rouge-score; ``tokenizer="rouge-score"`` is its
    default English tokenizer, otherwise a name from :mod:`ragdial.metrics.tokenizers`)."""
    scores = _scorer(tokenizer, stemmer).score(reference, hypothesis)
    sig = rouge_signature(tokenizer, stemmer)
    return {key: Score(key, float(scores[key].fmeasure), sig) for key in ROUGE_KEYS}


def _f(overlap: int, hyp_count: int, ref_count: int) -> float:
    precision = overlap / hyp_count if hyp_count else 0.0
    recall = overlap / ref_count if ref_count else 0.0
    return 2.0 * ((precision * recall) / (precision + recall + 1e-8))


def _ngram_set(words: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def _lcs_words(reference: Sequence[str], hypothesis: Sequence[str]) -> set[str]:
    """The words of one LCS of ``reference`` and ``hypothesis``, back-tracked as the ``rouge`` package does."""
    n, m = len(reference), len(hypothesis)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if reference[i - 1] == hypothesis[j - 1]:
                table[i][j] = table[i - 1][j - 1] + 1
            else:
                table[i][j] = max(table[i - 1][j], table[i][j - 1])
    words, i, j = set(), n, m
    while i > 0 and j > 0:
        if reference[i - 1] == hypothesis[j - 1]:
            words.add(reference[i - 1])
            i, j = i - 1, j - 1
        elif table[i - 1][j] > table[i][j - 1]:
            i -= 1
        else:
            j -= 1
    return words


def _sentences(text: str) -> list[list[str]]:
    return [part.split() for part in text.split(".") if part]


def rouge_dstc9_signature() -> str:
    return signature("rouge", impl="pltrdy-rouge-1.0", tok="dstc9", counts="sets", stat="f", agg="sentence")


def rouge_dstc9(hypothesis: str, reference: str) -> dict[str, Score]:
    """``{"rouge1", "rouge2", "rougeL"}`` as DSTC9 computes them (text normalised with
    :func:`ragdial.metrics.tokenizers.dstc9_normalize` first). An empty hypothesis or reference scores 0 (the
    ``rouge`` package raises ``ValueError`` there, which stops the official script)."""
    hyp_sentences = _sentences(tokenizers.dstc9_normalize(hypothesis))
    ref_sentences = _sentences(tokenizers.dstc9_normalize(reference))
    sig = rouge_dstc9_signature()
    if not hyp_sentences or not ref_sentences:
        return {key: Score(key, 0.0, sig) for key in ROUGE_KEYS}
    hyp_words = [w for s in hyp_sentences for w in s]
    ref_words = [w for s in ref_sentences for w in s]
    result = {}
    for n, key in ((1, "rouge1"), (2, "rouge2")):
        hyp_set, ref_set = _ngram_set(hyp_words, n), _ngram_set(ref_words, n)
        result[key] = _f(len(hyp_set & ref_set), len(hyp_set), len(ref_set))
    union: set[str] = set()
    total = 0
    for ref_sentence in ref_sentences:
        before = len(union)
        for hyp_sentence in hyp_sentences:
            union |= _lcs_words(ref_sentence, hyp_sentence)
        total += len(union) - before
    result["rougeL"] = _f(total, len(set(hyp_words)), len(set(ref_words)))
    return {key: Score(key, value, sig) for key, value in result.items()}
