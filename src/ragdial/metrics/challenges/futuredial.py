"""FutureDial-RAG (SereTOD 2024) tracks 1 and 2, as the organisers' ``retrieve_kb.py`` / ``metrics.py`` compute them.

Track 1: recall@1/5/20 counted per gold knowledge piece (a turn with several pieces counts each), over turns that
have gold pieces; each recall is ``hits / (pieces + 1e-7)`` as upstream; score = R@1 + R@5 + R@20. Which turns and
pieces are gold is decided by :mod:`ragdial.datasets.mobilecs2` as the organisers' ``reader.read_data_api`` does
(pieces that match no knowledge item are dropped there; a ``None`` id passed here counts as a miss).

Track 2: BLEU = ``BLEUScorer`` (corpus BLEU-4 on characters, whitespace dropped, punctuation kept, epsilon
smoothing, x100); a turn with an empty generated response is left out of BLEU entirely; BERTScore = mean F1 over
turns whose generated and gold responses are both non-empty (official: bert-base-chinese, no rescaling); Inform =
share of gold knowledge pieces of the turn (its ``查询结果`` split by
:func:`ragdial.datasets.mobilecs2.inform_pieces`, i.e. ``metrics.split_api_result``) found verbatim in the generated
response; score = 0.5 * (BLEU/100 + BERTScore) + Inform.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from ragdial.datasets import mobilecs2_rules
from ragdial.datasets.mobilecs2 import REFERENCE_PREFIX, inform_pieces
from ragdial.metrics import bertscore as bertscore_metric
from ragdial.metrics import bleu, overlap
from ragdial.metrics.result import ChallengeScores, Score, signature

RECALL_EPSILON = 1e-7
RULES = {"organisers": mobilecs2_rules.RULES_NAME, "faq-answer": "faq-answer"}


def _rules(rules: str) -> str:
    if rules not in RULES:
        raise ValueError(f"rules must be one of {', '.join(RULES)}, not {rules!r}")
    return RULES[rules]


def score_track1(
    gold: Sequence[Sequence[Hashable | None]], ranked: Sequence[Sequence[Hashable]], rules: str = "organisers"
) -> ChallengeScores:
    """``gold[i]``: the gold piece ids of turn i (``None`` for a piece missing from the KB); ``ranked[i]``: its
    top-20 ids, best first. Turns without gold pieces are skipped. ``rules`` names how the gold was made
    (:func:`ragdial.datasets.mobilecs2.load`); the signature states it."""
    hits = {1: 0, 5: 0, 20: 0}
    pieces = turns = 0
    for relevant, predicted in zip(gold, ranked, strict=True):
        if not relevant:
            continue
        turns += 1
        predicted = list(predicted)
        for piece in relevant:
            pieces += 1
            for k in hits:
                if piece is not None and piece in predicted[:k]:
                    hits[k] += 1
    recall = {f"R@{k}": hits[k] / (pieces + RECALL_EPSILON) for k in hits}
    result = {**recall, "score": sum(recall.values())}
    sig = signature("recall", k="1,5,20", unit="piece", no_gold="skip", eps=RECALL_EPSILON, rules=_rules(rules))
    return ChallengeScores("futuredial-track1", result, {"recall": sig}, {"turns": turns, "pieces": pieces})


@dataclass(frozen=True)
class Track2Turn:
    """One system turn: what was generated, the gold response and the gold knowledge (``查询结果``)."""

    generated: str
    response: str
    api_result: str = ""


def _prepared(turns: Sequence[Track2Turn], rules: str) -> list[Track2Turn]:
    if rules == "organisers":
        return [Track2Turn(mobilecs2_rules.generated_form(t.generated), t.response, t.api_result) for t in turns]
    return list(turns)


def bleu_and_inform(turns: Sequence[Track2Turn], language: str = "zh", rules: str = "organisers") -> dict[str, Score]:
    """The two track-2 parts that need no model: ``{"bleu": corpus BLEU (0-1), "inform": Inform}``."""
    rule_name = _rules(rules)
    turns = _prepared(turns, rules)
    kept = [t for t in turns if t.generated != ""]
    bleu_score = bleu.corpus_bleu([t.generated for t in kept], [t.response for t in kept], 4, "chars", "epsilon")
    gold_pieces = []
    for turn in turns:
        if rules == "organisers":
            gold_pieces.append(mobilecs2_rules.inform_pieces(turn.api_result))
            continue
        has_knowledge = turn.api_result.replace(REFERENCE_PREFIX, "") != ""
        gold_pieces.append(inform_pieces(turn.api_result, language) if has_knowledge else [])
    inform = overlap.inform(gold_pieces, [t.generated for t in turns])
    return {
        "bleu": Score("bleu", bleu_score.value, bleu_score.signature + f"|rules:{rule_name}"),
        "inform": Score("inform", inform.value, inform.signature + f"|rules:{rule_name}"),
        "pieces": Score("pieces", float(sum(len(p) for p in gold_pieces)), ""),
        "kept": Score("kept", float(len(kept)), ""),
    }


def score_track2(
    turns: Sequence[Track2Turn],
    bertscore_model: str | None = None,
    bertscore_layers: int | None = None,
    language: str = "zh",
    rules: str = "organisers",
) -> ChallengeScores:
    """Track 2 scores: ``BLEU`` (0-100), ``bert_score``, ``inform`` and the combined ``score``.

    ``rules="organisers"``: each generated reply is taken as their pipeline's ``decode_batch`` gives it (lower case,
    spaces removed: :func:`ragdial.datasets.mobilecs2_rules.generated_form`) and Inform pieces are cut by their
    ``metrics.split_api_result``; the gold fields should come from a loader with the same rules."""
    rule_name = _rules(rules)
    parts = bleu_and_inform(turns, language, rules)
    prepared = _prepared(turns, rules)
    pairs = [t for t in prepared if t.generated != "" and t.response != ""]
    bert = bertscore_metric.bertscore(
        [t.generated for t in pairs], [t.response for t in pairs], bertscore_model, bertscore_layers
    )
    bleu100 = parts["bleu"].value * 100
    inform = parts["inform"].value
    result = {
        "BLEU": bleu100,
        "bert_score": bert.value,
        "inform": inform,
        "score": 0.5 * (bleu100 / 100 + bert.value) + inform,
    }
    signatures = {
        "bleu": parts["bleu"].signature + "|x100",
        "bertscore": bert.signature + f"|rules:{rule_name}",
        "inform": parts["inform"].signature,
    }
    counts = {"turns": len(turns), "bleu_turns": int(parts["kept"].value), "bertscore_pairs": len(pairs)}
    counts["gold_pieces"] = int(parts["pieces"].value)
    return ChallengeScores("futuredial-track2", result, signatures, counts)
