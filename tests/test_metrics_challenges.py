"""Challenge scores on tiny inputs; expected numbers come from the organisers' formulas run on the same inputs
(the official DSTC9/DSTC11 ``scores.py`` and FutureDial ``metrics.py`` in a throwaway harness, see docs/metrics.md)."""

from __future__ import annotations

import json
import math
import shutil

import pytest

import ragdial
from ragdial.errors import DataFormatError
from ragdial.metrics.challenges import dstc, futuredial, kdsd, smp2017

DSTC11_TINY = {
    "detection": {"prec": 0.75, "rec": 0.75, "f1": 0.75},
    "selection": {"prec": 0.5, "rec": 0.6, "f1": 0.5454545454545454, "em_acc": 0.16666666666666666},
    "generation": {
        "bleu": 0.16821134720639538,
        "meteor": 0.27436355205470647,
        "rouge_1": 0.5291068580542264,
        "rouge_2": 0.315158371040724,
        "rouge_l": 0.359250398724083,
    },
}
DSTC9_TINY = {
    "detection": {"prec": 0.75, "rec": 0.75, "f1": 0.75},
    "selection": {"mrr@5": 0.625, "r@1": 0.5, "r@5": 0.75},
    "generation": {
        "bleu-1": 0.43534949397223405,
        "bleu-2": 0.3272402076286844,
        "bleu-3": 0.258260241892607,
        "bleu-4": 0.08771099239096715,
        "meteor": 0.4714129554786596,
        "rouge_1": 0.5393665122050995,
        "rouge_2": 0.2964646428730538,
        "rouge_l": 0.40554298279333484,
    },
}


def _tiny(fixtures):
    root = fixtures / "metrics" / "dstc11"
    return json.loads((root / "val" / "labels.json").read_text()), json.loads((root / "pred.json").read_text())


def _assert_same(actual, expected):
    assert actual.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, dict):
            _assert_same(actual[key], value)
        else:
            assert actual[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key


@pytest.mark.skipif(shutil.which("java") is None, reason="METEOR 1.5 needs Java")
def test_dstc11_tiny_equals_official(fixtures):
    gold, pred = _tiny(fixtures)
    _assert_same(dstc.score_dstc11(gold, pred).scores, DSTC11_TINY)


def test_dstc11_without_meteor_says_so(fixtures):
    gold, pred = _tiny(fixtures)
    result = dstc.score_dstc11(gold, pred, with_meteor=False)
    assert result.scores["generation"]["meteor"] == 0.0
    assert result.signatures["meteor"] == f"meteor|skipped:yes|ragdial:{ragdial.__version__}"
    assert result.scores["selection"] == DSTC11_TINY["selection"]


def test_dstc9_tiny_equals_official(fixtures):
    gold, pred = _tiny(fixtures)
    _assert_same(dstc.score_dstc9(gold, pred).scores, DSTC9_TINY)


def test_dstc_detection_weighting_by_hand():
    gold = [
        {
            "target": True,
            "knowledge": [{"domain": "d", "entity_id": 1, "doc_id": 2}],
            "response": "free parking is available",
        }
    ]
    gold += [{"target": False}, {"target": True, "knowledge": [], "response": "x"}]
    pred = [
        {
            "target": True,
            "knowledge": [{"domain": "d", "entity_id": 1, "doc_id": 2}],
            "response": "free parking is available",
        }
    ]
    pred += [{"target": True, "knowledge": [], "response": "y"}, {"target": False}]
    scores = dstc.score_dstc9(gold, pred).scores
    # tp = 1, fp = 1, fn = 1: a perfect instance sum of 1 -> P = R = F = 1/2 for every weighted metric
    assert scores["detection"]["f1"] == pytest.approx(0.5)
    assert scores["selection"]["mrr@5"] == pytest.approx(0.5)
    assert scores["generation"]["bleu-4"] == pytest.approx(0.5)


def test_check_predictions_names_the_problem(fixtures):
    gold, pred = _tiny(fixtures)
    with pytest.raises(DataFormatError, match="5 predictions for 6 gold"):
        dstc.check_predictions("p.json", pred[:5], gold, "dstc11")
    bad = json.loads(json.dumps(pred))
    del bad[3]["knowledge"][0]["sent_id"]
    with pytest.raises(DataFormatError, match=r"record 3, knowledge 0, field 'sent_id'"):
        dstc.check_predictions("p.json", bad, gold, "dstc11")
    bad = json.loads(json.dumps(pred))
    bad[1]["target"] = "yes"
    with pytest.raises(DataFormatError, match="record 1, field 'target'"):
        dstc.check_predictions("p.json", bad, gold, "dstc11")
    bad = json.loads(json.dumps(pred))
    del bad[2]["response"]
    with pytest.raises(DataFormatError, match="field 'response'"):
        dstc.check_predictions("p.json", bad, gold, "dstc11")
    bad = json.loads(json.dumps(pred))
    bad[1]["knowledge"][0]["doc_id"] = 99
    with pytest.raises(DataFormatError, match="unknown knowledge 'hotel:1:faq:99'"):
        dstc.check_predictions("p.json", bad, gold, "dstc11", {"hotel:1:faq:0"})


def test_futuredial_track1_per_piece():
    gold = [[3, 7], [], [None], [5]]
    ranked = [[7, 1, 3], [1], [2], [0, 1, 2, 3, 4, 5]]
    result = futuredial.score_track1(gold, ranked)
    pieces = 4 + 1e-7
    assert result.scores["R@1"] == pytest.approx(1 / pieces, rel=1e-12)
    assert result.scores["R@5"] == pytest.approx(2 / pieces, rel=1e-12)
    assert result.scores["R@20"] == pytest.approx(3 / pieces, rel=1e-12)
    assert result.scores["score"] == pytest.approx(6 / pieces, rel=1e-12)
    assert result.counts == {"turns": 3, "pieces": 4}


TRACK2_TURNS = [
    futuredial.Track2Turn(
        "您好，您的套餐是流量王，每月三十元。", "您好，您目前办理的是流量王套餐，每月三十元。", "业务名称：流量王"
    ),
    futuredial.Track2Turn("", "请问还有什么可以帮您？", ""),
    futuredial.Track2Turn(
        "已为您查询，视频会员包可以退订。",
        "视频会员包支持随时退订，退订后次月生效。",
        "业务名称：视频会员包，退订规则：随时退订，业务名称：夜间流量包，价格：五元",
    ),
    futuredial.Track2Turn("好的 请稍等", "好的，请稍等。", "参考知识：答案：请稍等"),
]


def test_futuredial_track2_bleu_and_inform_equal_official(monkeypatch):
    # official BLEUScorer and Inform on these turns: BLEU 36.643134634491645, inform 0.5
    monkeypatch.setattr(futuredial.bertscore_metric, "bertscore", _fake_bertscore)
    result = futuredial.score_track2(TRACK2_TURNS)
    assert result.scores["BLEU"] == pytest.approx(36.643134634491645, rel=1e-12)
    assert result.scores["inform"] == pytest.approx(0.5)
    assert result.scores["bert_score"] == 0.75
    assert result.scores["score"] == pytest.approx(0.5 * (0.36643134634491645 + 0.75) + 0.5)
    assert result.counts["bleu_turns"] == 3 and result.counts["bertscore_pairs"] == 3


def _fake_bertscore(candidates, references, model=None, layers=None):
    from ragdial.metrics.result import Score

    assert "" not in candidates and "" not in references  # official: only pairs where both are non-empty
    return Score("bertscore", 0.75, "bertscore|model:fake|layer:0")


def test_kdsd_by_hand():
    triples = ([["a", "b"], ["c"]], [["a"], ["c", "d", "e"]])  # per turn P 1 and 1/3, R 1/2 and 1, F1 2/3 and 1/2
    result = kdsd.score_kdsd(*triples, ["好的呀", "今天天气很好"], ["好的", "天气很好"])
    s = result.scores
    assert s["knowledge"] == {  # averaged over turns (pooled counts would give 1/2, 2/3, 4/7)
        "precision": pytest.approx(2 / 3),
        "recall": pytest.approx(3 / 4),
        "f1": pytest.approx(7 / 12),
    }
    bp = math.exp(1 - 9 / 6)  # 6 hypothesis chars against 9 reference chars, every uni/bigram matched
    assert s["generation"]["bleu-1"] == pytest.approx(bp)
    assert s["generation"]["bleu-2"] == pytest.approx(bp)
    assert s["generation"]["distinct-1"] == pytest.approx(5 / 6)
    assert s["generation"]["distinct-2"] == pytest.approx(1.0)
    assert s["generation"]["f1"] == pytest.approx(0.8)
    assert s["score"] == pytest.approx(0.3 * (2 / 3 + 3 / 4 + 7 / 12) + 0.7 * (2 * bp + 0.8))


def test_kdsd_triples_are_scored_as_the_organisers_baseline_does():
    """Huawei's knowledge-selection scoring: a turn with neither gold nor predicted triples scores 1, a turn with
    only one side 0, and P/R/F1 are means over turns, so F1 may fall below the harmonic mean of P and R (their
    published baseline row: P 0.5015, R 0.4929, F1 0.4856)."""
    replies = ["好的", "好的", "好的", "好的"]
    gold, predicted = [[], [], ["a"], ["b", "c"]], [[], ["x"], [], ["b"]]
    knowledge = kdsd.score_kdsd(gold, predicted, replies, replies).scores["knowledge"]
    assert knowledge == {
        "precision": pytest.approx((1 + 0 + 0 + 1) / 4),
        "recall": pytest.approx((1 + 0 + 0 + 1 / 2) / 4),
        "f1": pytest.approx((1 + 0 + 0 + 2 / 3) / 4),
    }
    p, r = knowledge["precision"], knowledge["recall"]
    assert knowledge["f1"] < 2 * p * r / (p + r)
    silent = kdsd.score_kdsd([[], []], [[], []], ["好", "好"], ["好", "好"]).scores
    assert silent["knowledge"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert kdsd.score_kdsd([[], []], [["a"], []], ["好", "好"], ["好", "好"]).scores["knowledge"]["f1"] == 0.5


def test_smp2017_micro_macro():
    result = smp2017.score_smp2017(["a", "a", "b", "c"], ["a", "b", "b", "c"])
    assert result.scores["accuracy"] == pytest.approx(0.75)
    assert result.scores["micro"]["f1"] == pytest.approx(0.75)
    assert result.scores["macro"]["f1"] == pytest.approx((2 / 3 + 2 / 3 + 1) / 3)
    assert result.extra["confusion"] == [[1, 1, 0], [0, 1, 0], [0, 0, 1]]
