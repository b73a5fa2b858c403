"""DSTC9 track 1 and DSTC11 track 5: the ``scripts/scores.py`` of each official repository, re-implemented.

Both walk the gold and predicted ``labels.json`` in parallel and count knowledge-seeking turn detection. Selection
and generation are then *weighted by detection*: a sum over the instances that are gold **and** predicted targets is
divided by the number of predicted targets (precision), of gold targets (recall), and their harmonic mean is
reported (DSTC9 reports only that F for selection and generation).

DSTC9 (alexa/alexa-with-dstc9-track1-dataset): selection MRR@5, R@1, R@5 per true-positive instance, a knowledge
item matching on (domain, entity_id, doc_id); generation BLEU-1..4 = nltk ``sentence_bleu`` without smoothing,
METEOR = nltk ``single_meteor_score`` with nltk 3.5 semantics (the official numbers were made with nltk 3.5),
ROUGE-1/2/L = the ``rouge`` package, all on text normalised by lower-casing, dropping ASCII punctuation and the
articles a/an/the.

DSTC11 (alexa/dstc11-track5): selection P/R/F micro-averaged over every instance where the gold or the prediction
lists knowledge (predicted duplicates removed first; an FAQ matches on domain/entity/doc, a review sentence also on
sent_id) and exact-match accuracy over those instances; generation BLEU = sacrebleu corpus BLEU/100 and METEOR = the
METEOR 1.5 corpus score (summ_eval), each multiplied by the number of true positives before weighting, ROUGE =
rouge-score F with Porter stemming summed per true positive.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ragdial.errors import DataFormatError
from ragdial.metrics import bleu, meteor, rouge
from ragdial.metrics.challenges.detection import DetectionCounts
from ragdial.metrics.result import ChallengeScores, signature
from ragdial.metrics.retrieval import hit_at_k, reciprocal_rank
from ragdial.metrics.tokenizers import dstc9_normalize

if TYPE_CHECKING:
    from ragdial.datasets.dstc import KnowledgeRef, LabelRecord


def check_predictions(
    path: str | Path,
    predictions: object,
    gold: Sequence[object],
    version: str,
    kb_ids: set[str] | None = None,
    need_response: bool = True,
) -> list[LabelRecord]:
    """What ``check_results.py`` checks, plus what ``scores.py`` needs: one entry per gold instance, a boolean
    ``target``, and for targets a knowledge list (DSTC11: with ``doc_type``; reviews with ``sent_id``) whose items
    exist, and a ``response``."""
    from ragdial.datasets.dstc import knowledge_id

    if not isinstance(predictions, list):
        raise DataFormatError(path, f"expected a JSON list of labels, found {type(predictions).__name__}")
    if len(predictions) != len(gold):
        raise DataFormatError(path, f"{len(predictions)} predictions for {len(gold)} gold instances", field="length")
    for index, item in enumerate(predictions):
        if not isinstance(item, dict):
            raise DataFormatError(path, f"expected an object, found {type(item).__name__}", index)
        if not isinstance(item.get("target"), bool):
            raise DataFormatError(path, "required boolean is missing or not a boolean", index, "target")
        if not item["target"] and "knowledge" not in item:
            continue
        knowledge = item.get("knowledge")
        if not isinstance(knowledge, list):
            raise DataFormatError(path, "a target instance needs a knowledge list", index, "knowledge")
        for ref_index, ref in enumerate(knowledge):
            where = f"{index}, knowledge {ref_index}"
            if not isinstance(ref, dict):
                raise DataFormatError(path, "expected an object", where)
            needed = ["domain", "entity_id", "doc_id"] + (["doc_type"] if version == "dstc11" else [])
            if version == "dstc11" and ref.get("doc_type") == "review":
                needed.append("sent_id")
            for key in needed:
                if key not in ref:
                    raise DataFormatError(path, "required field is missing", where, key)
            if kb_ids is not None and knowledge_id(ref) not in kb_ids:
                raise DataFormatError(path, f"unknown knowledge {knowledge_id(ref)!r}", where, "knowledge")
        if need_response and item["target"] and not isinstance(item.get("response"), str):
            raise DataFormatError(
                path,
                "a target instance needs a response string (score selection alone: --selection-only)",
                index,
                "response",
            )
    return cast("list[LabelRecord]", predictions)  # checked above


# --- DSTC9 -------------------------------------------------------------------------------------------------------


def _dstc9_key(ref: KnowledgeRef) -> tuple[object, ...]:
    return (ref.get("domain"), ref.get("entity_id"), ref.get("doc_id"))


METEOR_SEMANTICS = ("nltk-3.5", "installed")


def score_dstc9(
    gold: Sequence[LabelRecord], predictions: Sequence[LabelRecord], meteor_semantics: str = "nltk-3.5"
) -> ChallengeScores:
    """DSTC9 track 1 scores, keys as in the official score file. METEOR: ``nltk-3.5`` (default) reproduces the
    official ``scores.py`` as it was run (nltk 3.5, :func:`ragdial.metrics.meteor.nltk35_single_meteor`);
    ``installed`` uses the installed nltk's ``single_meteor_score`` on the normalised tokens.
    The signature says which."""
    if meteor_semantics not in METEOR_SEMANTICS:
        raise ValueError(f"meteor_semantics must be one of {', '.join(METEOR_SEMANTICS)}, not {meteor_semantics!r}")
    counts = DetectionCounts()
    sums = dict.fromkeys(
        ["mrr@5", "r@1", "r@5", "bleu-1", "bleu-2", "bleu-3", "bleu-4", "meteor", "rouge_1", "rouge_2", "rouge_l"], 0.0
    )
    for ref, hyp in zip(gold, predictions, strict=True):
        counts.add(ref["target"] is True, hyp["target"] is True)
        if not (ref["target"] is True and hyp["target"] is True):
            continue
        relevant = {_dstc9_key(k) for k in ref["knowledge"]}
        ranked = [_dstc9_key(k) for k in hyp["knowledge"]]
        sums["mrr@5"] += reciprocal_rank(relevant, ranked, 5).value
        sums["r@1"] += hit_at_k(relevant, ranked, 1).value
        sums["r@5"] += hit_at_k(relevant, ranked, 5).value
        for n in range(1, 5):
            sums[f"bleu-{n}"] += bleu.sentence_bleu(hyp["response"], ref["response"], n, "dstc9", "none").value
        if meteor_semantics == "nltk-3.5":
            sums["meteor"] += meteor.dstc9_meteor(hyp["response"], ref["response"], dstc9_normalize).value
        else:
            sums["meteor"] += meteor.nltk_meteor(
                dstc9_normalize(hyp["response"]).split(), dstc9_normalize(ref["response"]).split()
            ).value
        scores = rouge.rouge_dstc9(hyp["response"], ref["response"])
        sums["rouge_1"] += scores["rouge1"].value
        sums["rouge_2"] += scores["rouge2"].value
        sums["rouge_l"] += scores["rougeL"].value
    f = {key: counts.weighted(total)[2] for key, total in sums.items()}
    result = {
        "detection": counts.prf(),
        "selection": {key: f[key] for key in ("mrr@5", "r@1", "r@5")},
        "generation": {key: f[key] for key in ("bleu-1", "bleu-2", "bleu-3", "bleu-4", "meteor")}
        | {"rouge_1": f["rouge_1"], "rouge_2": f["rouge_2"], "rouge_l": f["rouge_l"]},
    }
    signatures = {
        "weighting": signature("dstc-weighting", by="detection", report="f1"),
        "selection": signature("selection", match="domain,entity,doc", k="1,5", mrr_k=5),
        "bleu": bleu.bleu_signature(4, "dstc9", "none", "sentence") + "|n:1-4",
        "meteor": meteor.nltk35_meteor_signature()
        if meteor_semantics == "nltk-3.5"
        else meteor.nltk_meteor_signature(),
        "rouge": rouge.rouge_dstc9_signature(),
    }
    return ChallengeScores("dstc9", result, signatures, _counts(counts, len(gold)))


# --- DSTC11 ------------------------------------------------------------------------------------------------------


def _dstc11_key(ref: KnowledgeRef) -> tuple[object, ...] | None:
    """The identity DSTC11 matches on; ``None`` for a doc_type it never matches."""
    doc_type = ref.get("doc_type")
    if doc_type == "review":
        return ("review", ref.get("domain"), ref.get("entity_id"), ref.get("doc_id"), ref.get("sent_id"))
    if doc_type == "faq":
        return ("faq", ref.get("domain"), ref.get("entity_id"), ref.get("doc_id"))
    return None


def _dedup(refs: Sequence[KnowledgeRef]) -> list[tuple[object, ...] | None]:
    kept: list[tuple[object, ...] | None] = []
    for ref in refs:
        key = _dstc11_key(ref)
        if key is None or key not in kept:
            kept.append(key)
    return kept


def score_dstc11(
    gold: Sequence[LabelRecord], predictions: Sequence[LabelRecord], with_meteor: bool = True
) -> ChallengeScores:
    """DSTC11 track 5 scores, keys as in the official score file (METEOR 1.5 needs Java; ``with_meteor=False``
    reports it as 0 and says so in the signature)."""
    counts = DetectionCounts()
    sel_tp = sel_fp = sel_fn = exact = sel_total = 0
    rouge_sums = {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
    hyps, refs = [], []
    for ref, hyp in zip(gold, predictions, strict=True):
        counts.add(ref["target"] is True, hyp["target"] is True)
        if ref["target"] is True and hyp["target"] is True:
            hyps.append(hyp["response"])
            refs.append(ref["response"])
            for key, score in rouge.rouge(hyp["response"], ref["response"]).items():
                rouge_sums[key] += score.value
        gold_keys = [_dstc11_key(k) for k in ref.get("knowledge") or []] if "knowledge" in ref else []
        pred_keys = _dedup(hyp["knowledge"]) if "knowledge" in hyp else []
        if gold_keys or pred_keys:
            sel_total += 1
            matched = sum(1 for g in gold_keys for p in pred_keys if g is not None and g == p)
            sel_tp += matched
            sel_fp += len(pred_keys) - matched
            sel_fn += len(gold_keys) - matched
            exact += len(gold_keys) == len(pred_keys) == matched
    sp = sel_tp / (sel_tp + sel_fp) if sel_tp + sel_fp > 0 else 0.0
    sr = sel_tp / (sel_tp + sel_fn) if sel_tp + sel_fn > 0 else 0.0
    sf = 2 * sp * sr / (sp + sr) if sp + sr > 0 else 0.0
    bleu_score = bleu.sacrebleu_corpus_bleu(hyps, refs)
    meteor_value = meteor.meteor15(hyps, refs).value if with_meteor and hyps else 0.0
    result = {
        "detection": counts.prf(),
        "selection": {"prec": sp, "rec": sr, "f1": sf, "em_acc": exact / sel_total if sel_total else 0.0},
        "generation": {
            "bleu": counts.weighted(bleu_score.value * counts.tp)[2],
            "meteor": counts.weighted(meteor_value * counts.tp)[2],
            "rouge_1": counts.weighted(rouge_sums["rouge1"])[2],
            "rouge_2": counts.weighted(rouge_sums["rouge2"])[2],
            "rouge_l": counts.weighted(rouge_sums["rougeL"])[2],
        },
    }
    signatures = {
        "weighting": signature("dstc-weighting", by="detection", report="f1", corpus_metrics="times-tp"),
        "selection": signature("selection", match="faq=domain,entity,doc;review=+sent", dedup_pred=True),
        "bleu": bleu_score.signature,
        "meteor": meteor.meteor15_signature() if with_meteor else signature("meteor", skipped=True),
        "rouge": rouge.rouge_signature(),
    }
    return ChallengeScores(
        "dstc11", result, signatures, _counts(counts, len(gold)) | {"selection_instances": sel_total}
    )


def _counts(counts: DetectionCounts, instances: int) -> dict[str, int]:
    return {"instances": instances, "tp": counts.tp, "fp": counts.fp, "fn": counts.fn, "tn": counts.tn}


def selection_only(scores: ChallengeScores) -> ChallengeScores:
    """Detection and selection of a score set, the generation part removed (a file without responses, such as
    ``ragdial retrieve batch`` writes)."""
    result = {k: v for k, v in scores.scores.items() if k != "generation"}
    keep = ("weighting", "selection")
    signatures = {k: v for k, v in scores.signatures.items() if k in keep}
    signatures["generation"] = signature("generation", scored=False)
    return ChallengeScores(scores.challenge, result, signatures, scores.counts, scores.extra)
