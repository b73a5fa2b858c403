"""What a user reads besides the numbers: every signature, score name and error message, pinned; plus the edge
cases of the metric cores that mutation testing found untested (docs/testing.md).

Signatures are compared without their ``ragdial:<version>`` part, so a release does not break them; any other
change to a signature changes what a reported number claims, and should be made here on purpose.
"""

from __future__ import annotations

import json
import math

import pytest

from ragdial.errors import DataFormatError
from ragdial.metrics import bleu, overlap, retrieval
from ragdial.metrics.challenges import dstc, futuredial, kdsd, smp2017


def parts(sig: str) -> list[str]:
    return [p for p in sig.split("|") if not p.startswith("ragdial:")]


def unversioned(signatures: dict[str, str]) -> dict[str, list[str]]:
    return {key: parts(value) for key, value in signatures.items()}


def _tiny(fixtures):
    root = fixtures / "metrics" / "dstc11"
    return json.loads((root / "val" / "labels.json").read_text()), json.loads((root / "pred.json").read_text())


def test_challenge_signatures(fixtures):
    gold, pred = _tiny(fixtures)
    assert unversioned(dstc.score_dstc9(gold, pred).signatures) == {
        "weighting": ["dstc-weighting", "by:detection", "report:f1"],
        "selection": ["selection", "match:domain,entity,doc", "k:1,5", "mrr_k:5"],
        "bleu": ["bleu", "n:4", "tok:dstc9", "smooth:none", "level:sentence", "scale:0-1", "n:1-4"],
        "meteor": ["meteor", "impl:nltk-3.5-semantics", "wordnet:3.0", "tok:dstc9", "agg:sentence"],
        "rouge": ["rouge", "impl:pltrdy-rouge-1.0", "tok:dstc9", "counts:sets", "stat:f", "agg:sentence"],
    }
    signatures = unversioned(dstc.score_dstc11(gold, pred, with_meteor=False).signatures)
    assert signatures.pop("bleu")[:6] == ["sacrebleu", "nrefs:1", "case:mixed", "eff:no", "tok:13a", "smooth:exp"]
    assert signatures == {
        "weighting": ["dstc-weighting", "by:detection", "report:f1", "corpus_metrics:times-tp"],
        "selection": ["selection", "match:faq=domain,entity,doc;review=+sent", "dedup_pred:yes"],
        "meteor": ["meteor", "skipped:yes"],
        "rouge": ["rouge", "impl:rouge-score", "tok:rouge-score", "stem:yes", "stat:f", "agg:sentence"],
    }
    assert unversioned(kdsd.score_kdsd([["a"]], [["a"]], ["好的"], ["好的"]).signatures) == {
        "knowledge": ["set-prf", "avg:query", "dedup:yes", "both_empty:1"],
        "bleu": ["bleu", "n:1,2", "tok:chars", "smooth:none", "level:corpus", "scale:0-1"],
        "distinct": ["distinct", "n:1", "tok:chars", "level:corpus"],
        "f1": ["gen-f1", "tok:chars", "agg:mean"],
    }
    track1 = unversioned(futuredial.score_track1([[1]], [[1]]).signatures)
    assert track1["recall"][:5] == ["recall", "k:1,5,20", "unit:piece", "no_gold:skip", "eps:1e-07"]
    assert unversioned(smp2017.score_smp2017(["a", "b"], ["a", "a"]).signatures) == {
        "classification": ["classification", "labels:2", "macro:mean-of-class-f1"]
    }


def test_score_names_and_signatures_of_the_metric_cores():
    cases = [
        (bleu.corpus_bleu(["a b"], ["a b"], 2), "bleu-2", ["bleu", "n:2", "tok:words", "smooth:none", "level:corpus"]),
        (bleu.sentence_bleu("a b", "a b", 3, "chars", "epsilon"), "bleu-3",
         ["bleu", "n:3", "tok:chars", "smooth:epsilon", "level:sentence"]),
        (bleu.mean_sentence_bleu(["a b"], ["a b"]), "bleu-4",
         ["bleu", "n:4", "tok:words", "smooth:none", "level:sentence-mean"]),
        (overlap.distinct(["ab"], 2), "distinct-2", ["distinct", "n:2", "tok:chars-nopunct", "level:corpus"]),
        (overlap.generation_f1(["ab"], ["ab"]), "f1", ["gen-f1", "tok:chars-nopunct", "agg:mean"]),
        (overlap.inform([["a"]], ["a"]), "inform", ["inform", "match:substring", "unit:piece"]),
        (retrieval.recall_at_k([["a"]], [["a"]], 3), "recall@3", ["recall", "k:3", "unit:query", "no_gold:skip"]),
        (retrieval.mrr_at_k([["a"]], [["a"]], 5, "zero"), "mrr@5", ["mrr", "k:5", "no_gold:zero"]),
    ]  # fmt: skip
    for score, name, signature in cases:
        assert (score.name, parts(score.signature)[: len(signature)]) == (name, signature)
        assert parts(score.signature)[len(signature) :] in ([], ["scale:0-1"])
    prf = retrieval.set_prf([["a"]], [["a"]])
    assert {key: s.name for key, s in prf.items()} == {
        "precision": "precision",
        "recall": "recall",
        "f1": "f1",
        "exact_match": "exact_match",
    }
    assert parts(prf["exact_match"].signature) == ["set-prf", "avg:micro", "dedup:yes", "em_over:non-empty"]


@pytest.mark.parametrize(
    ("mutate", "version", "message"),
    [
        (lambda p: {"not": "a list"}, "dstc11", "p.json: expected a JSON list of labels, found dict"),
        (lambda p: p[:2], "dstc11", "p.json, field 'length': 2 predictions for 6 gold instances"),
        (lambda p: [*p[:5], "x"], "dstc11", "p.json, record 5: expected an object, found str"),
        (lambda p: [*p[:1], {"knowledge": []}, *p[2:]], "dstc11",
         "p.json, record 1, field 'target': required boolean is missing or not a boolean"),
        (lambda p: [*p[:1], {"target": True, "response": "x"}, *p[2:]], "dstc11",
         "p.json, record 1, field 'knowledge': a target instance needs a knowledge list"),
        (lambda p: [*p[:1], {"target": True, "knowledge": ["x"], "response": "x"}, *p[2:]], "dstc11",
         "p.json, record 1, knowledge 0: expected an object"),
        (lambda p: [*p[:1], {"target": True, "knowledge": [{"domain": "hotel", "entity_id": 1, "doc_id": 0}],
                             "response": "x"}, *p[2:]], "dstc11",
         "p.json, record 1, knowledge 0, field 'doc_type': required field is missing"),
        (lambda p: [*p[:1], {"target": True, "knowledge": [{"domain": "hotel", "doc_id": 0}], "response": "x"},
                    *p[2:]], "dstc9",
         "p.json, record 1, knowledge 0, field 'entity_id': required field is missing"),
        (lambda p: [*p[:1], {"target": True, "knowledge": []}, *p[2:]], "dstc11",
         "p.json, record 1, field 'response': a target instance needs a response string"),
    ],
)  # fmt: skip
def test_check_predictions_messages(fixtures, mutate, version, message):
    gold, pred = _tiny(fixtures)
    with pytest.raises(DataFormatError) as caught:
        dstc.check_predictions("p.json", mutate(pred), gold, version)
    assert str(caught.value).startswith(message)  # a hint on what to do may follow


def test_check_predictions_accepts_what_the_scorer_reads(fixtures):
    gold, pred = _tiny(fixtures)
    assert dstc.check_predictions("p.json", pred, gold, "dstc11") is pred
    # DSTC9 needs no doc_type; a non-target may carry no knowledge and no response
    dstc9 = [{"target": False}] + [
        {"target": True, "knowledge": [{"domain": "hotel", "entity_id": 1, "doc_id": 0}], "response": "ok"}
    ] * 5
    assert dstc.check_predictions("p.json", dstc9, gold, "dstc9") is dstc9
    with pytest.raises(DataFormatError, match="field 'doc_type'"):
        dstc.check_predictions("p.json", dstc9, gold, "dstc11")
    # a non-target that does list knowledge has it checked too
    listed = [{"target": False, "knowledge": [{"domain": "hotel"}]}, *dstc9[1:]]
    with pytest.raises(DataFormatError, match=r"record 0, knowledge 0, field 'entity_id'"):
        dstc.check_predictions("p.json", listed, gold, "dstc9")
    kb_ids = {"hotel:1:faq:0"}
    assert dstc.check_predictions("p.json", dstc9, gold, "dstc9", {"hotel:1:0"}) is dstc9
    with pytest.raises(DataFormatError) as caught:
        dstc.check_predictions("p.json", dstc9, gold, "dstc9", kb_ids)
    assert str(caught.value) == "p.json, record 1, knowledge 0, field 'knowledge': unknown knowledge 'hotel:1:0'"


def test_set_prf_averaged_per_query():
    gold, predicted = [["a", "b"], [], []], [["a"], [], ["x"]]
    micro = retrieval.set_prf(gold, predicted)
    assert (micro["precision"].value, micro["recall"].value) == (0.5, 0.5)
    query = retrieval.set_prf(gold, predicted, average="query")
    assert query["precision"].value == pytest.approx((1 + 1 + 0) / 3)
    assert query["recall"].value == pytest.approx((0.5 + 1 + 0) / 3)
    assert query["f1"].value == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert query["exact_match"].value == micro["exact_match"].value == 0.0
    assert "avg:query" in query["f1"].signature
    with pytest.raises(ValueError, match="average"):
        retrieval.set_prf(gold, predicted, average="macro")


def test_set_prf_exact_match_counts_one_sided_queries():
    scores = retrieval.set_prf([["a"], [], ["b"], ["c"]], [["a"], ["x"], [], ["c"]])
    # queries 0 and 3 are exact; 1 (only a prediction) and 2 (only gold) count as misses; none is skipped
    assert scores["exact_match"].value == pytest.approx(2 / 4)
    assert (scores["precision"].value, scores["recall"].value) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert retrieval.set_prf([[], []], [[], []])["exact_match"].value == 0.0
    assert retrieval.set_prf([[]], [[]])["f1"].value == 0.0
    with pytest.raises(ValueError):
        retrieval.set_prf([["a"]], [])


def test_bleu_brevity_and_references_by_hand():
    # equal lengths: no brevity penalty; every n-gram matches -> 1
    assert bleu.corpus_bleu(["a b c d"], ["a b c d"]).value == pytest.approx(1.0)
    assert bleu.corpus_bleu(["a b c d"], ["a b c d"], smoothing="epsilon").value == pytest.approx(1.0, abs=1e-6)
    # 2 words against 4: unigram and bigram precision 1, brevity exp(1 - 4/2)
    assert bleu.corpus_bleu(["a b"], ["a b c d"], 2).value == pytest.approx(math.exp(-1))
    eps = bleu.corpus_bleu(["a b"], ["a b c d"], 2, smoothing="epsilon").value
    assert eps == pytest.approx(math.exp(1 - 4 / 2), rel=1e-5)
    # several references: clipped against the best count of any, length against the closest (ties: shorter)
    multi = bleu.corpus_bleu(["a a b"], [["a b x y", "a a z"]], 1)
    assert multi.value == pytest.approx(1.0)  # both "a" match the second reference, 3 words vs closest 3
    closest = bleu.BleuStats(1)
    closest.add(["a", "b", "c"], [["a", "b"], ["a", "b", "c", "d"]])
    assert closest.ref_len == 2  # 2 and 4 are both 1 away: the shorter wins
    assert bleu.corpus_bleu([""], ["a b"]).value == 0.0
    assert bleu.mean_sentence_bleu([], []).value == 0.0
    with pytest.raises(ValueError, match="unknown smoothing 'add-one'; choose one of none, epsilon"):
        bleu.corpus_bleu(["a"], ["a"], 1, smoothing="add-one")
    with pytest.raises(ValueError, match="2 hypotheses for 1 references"):
        bleu.corpus_bleu(["a", "b"], ["a"])


def test_mean_sentence_bleu_is_the_mean_of_sentence_scores():
    hyps, refs = ["a b c d", "a b x y"], ["a b c d", "a b c d"]
    values = [bleu.sentence_bleu(h, r, 2).value for h, r in zip(hyps, refs, strict=True)]
    assert values == [pytest.approx(1.0), pytest.approx(math.sqrt(0.5 * 1 / 3))]
    assert bleu.mean_sentence_bleu(hyps, refs, 2).value == pytest.approx(sum(values) / 2)
    smoothed = [bleu.sentence_bleu(h, r, 2, smoothing="epsilon").value for h, r in zip(hyps, refs, strict=True)]
    assert smoothed[1] != pytest.approx(values[1], rel=1e-9, abs=0)  # the smoothing argument is passed on
    mean = bleu.mean_sentence_bleu(hyps, refs, 2, smoothing="epsilon").value
    assert mean == pytest.approx(sum(smoothed) / 2, rel=1e-12)


def test_overlap_metrics_by_hand():
    assert overlap.distinct(["好好好", "好的"], 1, "chars").value == pytest.approx(2 / 5)
    assert overlap.distinct(["好好好", "好的"], 2, "chars").value == pytest.approx(2 / 3)
    assert overlap.distinct([], 1).value == 0.0
    # per response: 2 of 3 vs 2 of 2 chars -> F 0.8; nothing shared -> 0; mean 0.4
    assert overlap.generation_f1(["好的呀", "不"], ["好的", "是"], "chars").value == pytest.approx(0.4)
    assert overlap.generation_f1([], []).value == 0.0
    assert overlap.token_f1([], ["a"]).value == 0.0
    one = overlap.token_f1(list("好的呀"), list("好的"))
    assert one.value == pytest.approx(0.8) and one.signature.startswith("token-f1|tok:given|agg:none|ragdial:")
    assert one.name == "f1"
    assert overlap.inform([["流量王", "三十元"], [], ["五元"]], ["流量王套餐", "好", "六元"]).value == pytest.approx(
        1 / 3
    )
    assert overlap.inform([[], []], ["a", "b"]).value == 0.0


def test_futuredial_track1_counts_and_missing_pieces():
    result = futuredial.score_track1([[1, 2], [], [3, None]], [[2, *range(10, 29), 1], [5], [3]])
    # pieces 1 (rank 21: missed), 2 (rank 1), 3 (rank 1), None (a piece missing from the KB: always a miss)
    assert result.counts == {"turns": 2, "pieces": 4}
    assert result.scores["R@1"] == pytest.approx(2 / (4 + 1e-7), rel=1e-12)
    assert result.scores["R@20"] == pytest.approx(2 / (4 + 1e-7), rel=1e-12)
    assert result.scores["score"] == pytest.approx(6 / (4 + 1e-7), rel=1e-12)


def test_dstc11_selection_without_any_gold_knowledge():
    # no gold lists knowledge: recall and exact match have nothing to count and are 0 (not an error, not 1)
    gold = [{"target": True, "knowledge": [], "response": "a"}, {"target": False}]
    pred = [{"target": True, "knowledge": [faq_ref(1, 0)], "response": "a"}, {"target": False}]
    selection = dstc.score_dstc11(gold, pred, with_meteor=False).scores["selection"]
    assert selection == {"prec": 0.0, "rec": 0.0, "f1": 0.0, "em_acc": 0.0}
    nothing = dstc.score_dstc11([{"target": False}], [{"target": False}], with_meteor=False).scores["selection"]
    assert nothing["em_acc"] == 0.0


def faq_ref(entity: int, doc: int) -> dict:
    return {"domain": "hotel", "entity_id": entity, "doc_type": "faq", "doc_id": doc}


def test_dstc11_selection_matches_an_faq_by_its_domain_too():
    # the same entity and document numbers in another domain are another FAQ (the ids restart in each domain)
    gold = [{"target": True, "knowledge": [faq_ref(1, 0)], "response": "yes"}]
    elsewhere = {**faq_ref(1, 0), "domain": "restaurant"}
    for predicted, hit in (([faq_ref(1, 0)], 1.0), ([elsewhere], 0.0), ([elsewhere, faq_ref(1, 0)], 0.5)):
        pred = [{"target": True, "knowledge": predicted, "response": "yes"}]
        selection = dstc.score_dstc11(gold, pred, with_meteor=False).scores["selection"]
        assert (selection["prec"], selection["rec"]) == (pytest.approx(hit), pytest.approx(1.0 if hit else 0.0))


def test_selection_only_keeps_detection_and_selection(fixtures):
    gold, pred = _tiny(fixtures)
    full = dstc.score_dstc11(gold, pred, with_meteor=False)
    only = dstc.selection_only(full)
    assert list(only.scores) == ["detection", "selection"]
    assert only.scores["selection"] == full.scores["selection"]
    assert set(only.signatures) == {"weighting", "selection", "generation"}
    assert only.signatures["weighting"] == full.signatures["weighting"]
    assert parts(only.signatures["generation"]) == ["generation", "scored:no"]
    assert only.to_dict()["signatures"] == only.signatures and only.to_dict()["counts"] == full.counts


def test_refuse_identical_stops_only_a_file_that_equals_its_gold():
    from ragdial.metrics.challenges.checks import refuse_identical

    with pytest.raises(DataFormatError, match="every one of 2 predictions equals its gold response"):
        refuse_identical("p.json", [("a", "a"), ("b", "x", "b")])
    refuse_identical("p.json", [("a", "a"), ("b", "x")])  # one differs: fine
    refuse_identical("p.json", [("a", "a")], allow=True)
    refuse_identical("p.json", [])
    refuse_identical("p.json", [("a", "b", "c")])  # the prediction is compared with every gold string after it


def test_krippendorff_alpha_with_the_fewest_pairable_values():
    from ragdial.metrics.agreement import krippendorff_alpha

    assert krippendorff_alpha([[1, 2]]) == pytest.approx(0.0)  # two values, as far apart as they can be
    assert krippendorff_alpha([[1]]) is None  # nothing pairable
    assert krippendorff_alpha([[3, 3]]) is None  # no variation at all
    # a unit rated once pairs nothing and is skipped, wherever it comes; units may be given by name
    assert krippendorff_alpha([[5], [1, 2], [3, 3]]) == krippendorff_alpha([[1, 2], [3, 3], [5]])
    assert krippendorff_alpha([[5], [1, 2], [3, 3]]) == pytest.approx(krippendorff_alpha([[1, 2], [3, 3]]))
    assert krippendorff_alpha({"d1": [1, 2], "d2": [3, 3]}) == pytest.approx(krippendorff_alpha([[1, 2], [3, 3]]))


def test_every_set_prf_score_carries_the_signature_and_bad_units_are_named():
    scores = retrieval.set_prf([["a"]], [["a", "b"]])
    assert {parts(s.signature)[0] for s in scores.values()} == {"set-prf"}
    with pytest.raises(ValueError, match=r"^unit must be 'query', 'piece' or 'fraction'$"):
        retrieval.recall_at_k([["a"]], [["a"]], 1, unit="pieces")


def test_track2_scores_the_organisers_form_of_the_replies_and_says_so(monkeypatch):
    from ragdial.datasets.mobilecs2_rules import generated_form
    from ragdial.metrics.result import Score

    seen = []

    def fake_bertscore(candidates, references, model=None, layers=None):
        seen.extend(candidates)
        return Score("bertscore", 0.5, "bertscore|model:fake")

    monkeypatch.setattr(futuredial.bertscore_metric, "bertscore", fake_bertscore)
    turns = [futuredial.Track2Turn("Your Plan 流量王 costs 30", "您的套餐是流量王", "业务名称：流量王")]
    result = futuredial.score_track2(turns)
    assert seen == [generated_form("Your Plan 流量王 costs 30")] and seen[0] != turns[0].generated
    assert set(result.signatures) == {"bleu", "bertscore", "inform"}
    assert all("rules:organisers-2024" in parts(sig) for sig in result.signatures.values())
    assert parts(result.signatures["bleu"])[-1] == "x100"
    faq = futuredial.score_track2(turns, rules="faq-answer")
    assert all("rules:faq-answer" in parts(sig) for sig in faq.signatures.values())
    assert result.counts == {"turns": 1, "bleu_turns": 1, "bertscore_pairs": 1, "gold_pieces": 1}
    with pytest.raises(ValueError, match=r"^rules must be one of organisers, faq-answer, not 'official'$"):
        futuredial.score_track2(turns, rules="official")


def test_inform_refuses_lists_of_different_lengths():
    with pytest.raises(ValueError):
        overlap.inform([["a"], ["b"]], ["a"])


def test_dstc11_matches_an_faq_on_its_entity_too():
    gold = [{"target": True, "knowledge": [faq_ref(1, 0)], "response": "a"}]
    other_entity = [{"target": True, "knowledge": [faq_ref(2, 0)], "response": "a"}]
    selection = dstc.score_dstc11(gold, other_entity, with_meteor=False).scores["selection"]
    assert (selection["prec"], selection["rec"], selection["em_acc"]) == (0.0, 0.0, 0.0)
    same = dstc.score_dstc11(gold, gold, with_meteor=False).scores["selection"]
    assert same["em_acc"] == 1.0


def test_challenge_names_and_the_empty_sacrebleu_case():
    assert smp2017.score_smp2017(["a"], ["a"]).challenge == "smp2017"
    assert kdsd.score_kdsd([["a"]], [["a"]], ["好"], ["好"]).challenge == "kdsd"
    assert futuredial.score_track1([[1]], [[1]]).challenge == "futuredial-track1"
    empty = bleu.sacrebleu_corpus_bleu([], [])
    assert (empty.name, empty.value, parts(empty.signature)) == ("bleu", 0.0, ["sacrebleu", "empty:yes"])


def test_require_all_names_how_many_are_missing_and_the_first_few():
    from ragdial.metrics.challenges.checks import require_all

    with pytest.raises(DataFormatError) as caught:
        require_all("p.json", {"a": 1}, ["a", "b", "c", "d", "e", "f", "g", "h"], "turns")
    assert str(caught.value) == "p.json: no prediction for 7 of 8 turns (first: b, c, d, e, f)"
    require_all("p.json", {"a": 1}, ["a"], "turns")
