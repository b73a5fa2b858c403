"""The grounding checker on the bundled demo knowledge base: supported and invented values, names, dates,
eligibility against the user's plan, action claims, degenerate text, and the corpus metric."""

from __future__ import annotations

import json

import pytest

from ragdial.datasets.mobilecs2 import load_demo
from ragdial.metrics.grounding import (
    Evidence,
    check_grounding,
    cut_degenerate,
    degenerate_reason,
    knowledge_names,
    unsupported_claim_rate,
)


@pytest.fixture(scope="module")
def kbs():
    return {language: load_demo(language).kb for language in ("zh", "en")}


def check(kbs, language, text, ids, dialog=()):
    kb = kbs[language]
    return check_grounding(text, Evidence.of([kb.get(i) for i in ids], dialog, knowledge_names(kb)))


def unsupported(result):
    return [(c.kind, c.text) for c in result.unsupported]


def test_values_from_the_cited_item_are_supported(kbs):
    result = check(kbs, "zh", "您的账户余额为23.50元，本月已产生费用63.00元。", ["demo-u1:local:2"])
    assert [c.kind for c in result.claims] == ["price", "price"] and result.ok
    assert check(kbs, "en", "Your balance is 23.5 yuan.", ["demo-u1:local:2"]).ok  # 23.5 == 23.50


def test_a_value_in_another_unit_or_not_cited_is_unsupported(kbs):
    # 88 is in the item as minutes, not as money
    assert unsupported(check(kbs, "zh", "您的账户余额为88元。", ["demo-u1:local:4"])) == [("price", "88元")]
    # the international pass's price on a Hong Kong answer
    assert unsupported(check(kbs, "zh", "港澳台漫游日包25元/天。", ["product:18"])) == [("price", "25元")]


def test_names_must_be_cited_and_invented_names_are_caught(kbs):
    result = check(kbs, "zh", "青禾超级无限套餐只要18元。", ["product:0"])
    assert ("name", "青禾超级无限套餐") in unsupported(result)
    assert unsupported(check(kbs, "en", "Try the Night Data Pack.", ["faq:4"])) == [("name", "Night Data Pack")]
    assert check(kbs, "en", "The Night Data Pack costs 5 yuan per month.", ["product:10"]).ok


def test_dates_and_dial_codes(kbs):
    assert check(kbs, "zh", "您的套餐从2025年3月1日开始。", ["demo-u1:local:0"]).ok
    assert check(kbs, "en", "Your plan started on March 1, 2025.", ["demo-u1:local:0"]).ok
    assert unsupported(check(kbs, "en", "Your plan started on March 2, 2025.", ["demo-u1:local:0"])) == [
        ("date", "March 2, 2025")
    ]
    assert check(kbs, "zh", "输入“##21#”取消。", ["faq:25"]).ok


def test_eligibility_agrees_with_the_users_plan(kbs):
    ids = ["demo-u1:local:0", "product:25"]  # a 58 yuan plan; the gigabit bundle needs 88 or more
    assert unsupported(check(kbs, "zh", "可以办理千兆宽带融合。", ids))[0][0] == "eligibility"
    assert check(kbs, "zh", "您的58元套餐不能办理千兆宽带融合，需要88元及以上主套餐。", ids).ok
    assert not check(kbs, "en", "Yes, you can get the 1000M Home Broadband Bundle.", ids).ok
    # age limits are not in the profile: a yes must state the condition
    assert not check(kbs, "en", "Yes, you can get it.", ["product:6"]).ok
    assert check(kbs, "en", "You can get it if you are 25 or under.", ["product:6"]).ok


def test_action_claims_are_never_supported(kbs):
    assert unsupported(check(kbs, "zh", "已为您退订。", ["faq:4"])) == [("action", "已为您退订")]
    assert unsupported(check(kbs, "en", "Done, it has been cancelled.", ["faq:4"])) == [
        ("action", "has been cancelled")
    ]
    assert check(kbs, "zh", "您可以在APP“已办业务”中退订，月包退订后次月生效。", ["faq:4"]).ok


def test_the_users_own_words_are_evidence(kbs):
    assert check(kbs, "zh", "10GB通用流量月包20元/月。", ["product:12"], ["有没有10个G的包"]).ok
    assert not check(kbs, "zh", "有的，30GB。", [], ["有没有10个G的包"]).ok


def test_degenerate_text():
    assert degenerate_reason("") == "empty"
    assert degenerate_reason("您的余额是1000000000000000000") == "runaway digits"
    assert degenerate_reason("好的好的好的好的好的") == "repetition"
    assert degenerate_reason("您的余额是23.50元。") is None
    assert cut_degenerate("余额是1000000000000000") == "余额是"


def test_unsupported_claim_rate(kbs):
    kb = kbs["zh"]
    evidence = Evidence.of([kb.get("demo-u1:local:2")], (), knowledge_names(kb))
    score = unsupported_claim_rate(["余额23.50元。", "余额99元。", "1111111111111"], [evidence] * 3)
    assert score.value == pytest.approx(2 / 3) and score.signature.startswith("unsupported-claims|unit:reply")
    with pytest.raises(ValueError):
        unsupported_claim_rate(["a"], [])


def test_dstc_file_scores_carry_the_unsupported_claim_rate(fixtures, tmp_path):
    from ragdial.challenges import DSTC11

    root = fixtures / "metrics" / "dstc11"
    records = json.loads((root / "pred.json").read_text(encoding="utf-8"))
    honest = DSTC11.score_file(root / "pred.json", dataroot=root, split="val", meteor=False).extra["grounding"]
    assert honest["replies"] == 4 and honest["unsupported_claim_rate"] == 0.0
    records[0]["response"] = "Maple Court Inn has free parking for 25 dollars a night."
    lying = tmp_path / "pred.json"
    lying.write_text(json.dumps(records), encoding="utf-8")
    grounding = DSTC11.score_file(lying, dataroot=root, split="val", meteor=False).extra["grounding"]
    assert grounding["unsupported_claim_rate"] == pytest.approx(0.25) and grounding["unsupported"] == 1
