"""The 2022 knowledge-driven spoken dialogue challenge (Huawei; KdConv format).

No scoring script was published with the data. Triple P/R/F1 are those of the organisers' own baseline
(``KnowledgeSelection/inference.py``, ``calu_knowledge_selection``): P, R and F1 of each turn's set of (entity,
attribute, value) triples, averaged over turns, a turn with neither gold nor predicted triples scoring 1 — the
published baseline row (P 0.5015, R 0.4929, F1 0.4856 < their harmonic mean 0.4972) cannot come from pooled counts.
The generation half follows the conventions of the evaluations the challenge comes from (DuConv/KdConv), which the
organisers did not publish: character BLEU-1 and BLEU-2 at corpus level without smoothing; corpus DISTINCT-1/2 on
characters; generation F1 = mean per-turn character-overlap F1; characters are every non-space character.
score = 0.3 * (P + R + F1_triples) + 0.7 * (BLEU-1 + BLEU-2 + F1_gen), which gives the baseline's 1.0789 from its
row.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from ragdial.jsontypes import JSONDict
from ragdial.metrics import bleu, overlap
from ragdial.metrics.result import ChallengeScores
from ragdial.metrics.retrieval import set_prf

TOKENS = "chars"


def score_kdsd(
    gold_triples: Sequence[Sequence[Hashable]],
    predicted_triples: Sequence[Sequence[Hashable]],
    gold_responses: Sequence[str],
    generated: Sequence[str],
) -> ChallengeScores:
    """Scores over parallel per-turn lists of triple ids and responses."""
    triples = set_prf(gold_triples, predicted_triples, average="query")
    bleu1 = bleu.corpus_bleu(generated, gold_responses, 1, TOKENS, "none")
    bleu2 = bleu.corpus_bleu(generated, gold_responses, 2, TOKENS, "none")
    distinct1 = overlap.distinct(generated, 1, TOKENS)
    distinct2 = overlap.distinct(generated, 2, TOKENS)
    f1 = overlap.generation_f1(generated, gold_responses, TOKENS)
    p, r, tf = triples["precision"].value, triples["recall"].value, triples["f1"].value
    result: JSONDict = {
        "knowledge": {"precision": p, "recall": r, "f1": tf},
        "generation": {
            "bleu-1": bleu1.value,
            "bleu-2": bleu2.value,
            "distinct-1": distinct1.value,
            "distinct-2": distinct2.value,
            "f1": f1.value,
        },
        "score": 0.3 * (p + r + tf) + 0.7 * (bleu1.value + bleu2.value + f1.value),
    }
    signatures = {
        "knowledge": triples["f1"].signature,
        "bleu": bleu1.signature.replace("n:1", "n:1,2"),
        "distinct": distinct1.signature,
        "f1": f1.signature,
    }
    return ChallengeScores("kdsd", result, signatures, {"turns": len(generated)})
