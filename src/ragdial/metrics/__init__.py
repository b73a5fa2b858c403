"""Metrics, each implemented once; challenge scores composed from them (:mod:`ragdial.metrics.challenges`).

Every function returns a :class:`~ragdial.metrics.result.Score` (or a dict of floats with a ``*_signature()``
beside it) whose signature names what changes the number: tokenisation, smoothing, backbone and layer, k.
See docs/metrics.md for each metric and the official script it matches. ROUGE, METEOR and BERTScore live in
their modules (``ragdial.metrics.rouge``, ``.meteor``, ``.bertscore``), imported where used.
"""

from ragdial.metrics.bleu import corpus_bleu, mean_sentence_bleu, sacrebleu_corpus_bleu, sentence_bleu
from ragdial.metrics.classification import classification_report, plot_confusion
from ragdial.metrics.overlap import distinct, generation_f1, inform
from ragdial.metrics.result import ChallengeScores, Score
from ragdial.metrics.retrieval import hit_at_k, mrr_at_k, recall_at_k, reciprocal_rank, set_prf

__all__ = [
    "ChallengeScores",
    "Score",
    "classification_report",
    "corpus_bleu",
    "distinct",
    "generation_f1",
    "hit_at_k",
    "inform",
    "mean_sentence_bleu",
    "mrr_at_k",
    "plot_confusion",
    "recall_at_k",
    "reciprocal_rank",
    "sacrebleu_corpus_bleu",
    "sentence_bleu",
    "set_prf",
]
