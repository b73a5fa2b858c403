"""The grounding checker's claims one by one on a small hand-written knowledge base: the kind, the text as the reply
says it, whether it is supported and by which item, for numbers, dates, times, dial codes, names, eligibility and
actions; the name list; degenerate text at its boundaries; the totals."""

from __future__ import annotations

from ragdial.metrics.grounding import (
    Evidence,
    check_grounding,
    degenerate_reason,
    grounding_totals,
    knowledge_names,
    unsupported_claim_rate,
)
from ragdial.schema import Knowledge, SourceKind

PLAN = Knowledge(
    "p1",
    "青禾畅享套餐 月费58元，含流量20GB，通话300分钟，有效期12个月。办理须年满18周岁。",
    SourceKind.PRODUCT,
    {"name": "青禾畅享套餐"},
)
NIGHT = Knowledge(
    "p2",
    "夜间流量包：10元，23:00至次日7:00可用，限58元及以上主套餐用户办理。",
    SourceKind.PRODUCT,
    {"attributes": {"业务名称": "夜间流量包"}},
)
PROFILE = Knowledge(
    "u1",
    "业务名称：青禾畅享套餐 业务费用：58元/月 开始时间：2025年3月1日",
    SourceKind.USER_PROFILE,
    {"attributes": {"业务名称": "青禾畅享套餐"}},
    scope="u",
)
CHEAP_PROFILE = Knowledge("u2", "业务费用：38元/月 业务费用：88元/月", SourceKind.USER_PROFILE, {}, scope="u")
PACK_EN = Knowledge(
    "e1",
    "Greenleaf Night Pack: Fee: 10 yuan per month. Dial *#21*8# to activate. Hotline 400 123 4567.",
    SourceKind.PRODUCT,
    {"attributes": {"Service name": "Greenleaf Night Pack"}},
)
NAMES = knowledge_names([PLAN, NIGHT, PACK_EN])


def claims(text: str, items: list[Knowledge], dialog: tuple[str, ...] = ()) -> list[tuple[str, str, bool, str]]:
    result = check_grounding(text, Evidence.of(items, dialog, NAMES))
    return [(c.kind, c.text, c.supported, c.evidence) for c in result.claims]


def test_knowledge_names_from_name_title_and_both_attribute_keys_longest_first():
    items = [
        PLAN,
        NIGHT,
        PACK_EN,
        Knowledge("s", "AB", SourceKind.PRODUCT, {"name": "AB"}),  # two characters: kept
        Knowledge("x", "X", SourceKind.FAQ, {"name": "X"}),  # one character: dropped
        Knowledge("t", "t", SourceKind.PRODUCT, {"title": "Title One"}),
    ]
    assert knowledge_names(items) == ("Greenleaf Night Pack", "Title One", "青禾畅享套餐", "夜间流量包", "AB")


def test_numbers_by_unit_kind_with_their_text_and_evidence():
    assert claims("青禾畅享套餐月费58元，通话300分钟，有效期12个月，可加3张副卡。", [PLAN]) == [
        ("name", "青禾畅享套餐", True, "p1"),
        ("price", "58元", True, "p1"),
        ("duration", "300分钟", True, "p1"),
        ("duration", "12个月", True, "p1"),
        ("number", "3张", False, ""),
    ]
    assert claims("月费68元，通话200分钟，有效期24个月。", [PLAN]) == [
        ("price", "68元", False, ""),
        ("duration", "200分钟", False, ""),
        ("duration", "24个月", False, ""),
    ]


def test_an_amount_of_data_is_one_claim():
    assert claims("含流量20GB。", [PLAN]) == [("data", "20GB", True, "p1")]
    assert claims("含流量30个G。", [PLAN]) == [("data", "30个G", False, "")]


def test_dates_and_times_with_their_text_and_evidence():
    said = claims("夜间流量包23:00开始可用，请在5月1日前办理，开始时间2025年3月1日。", [NIGHT, PROFILE])
    assert said == [
        ("date", "2025年3月1日", True, "u1"),
        ("date", "5月1日", False, ""),
        ("date", "23:00", True, "p2"),
        ("name", "夜间流量包", True, "p2"),
    ]
    # a month and day is supported by a full date with the same month and day; a time must match exactly
    assert claims("夜间流量包22:00开始可用，请在3月1日前办理。", [NIGHT, PROFILE]) == [
        ("date", "3月1日", True, "u1"),
        ("date", "22:00", False, ""),
        ("name", "夜间流量包", True, "p2"),
    ]


def test_a_month_and_day_is_supported_by_an_iso_date_with_the_same_month_and_day():
    iso = Knowledge("u3", "开始时间：2025-03-01", SourceKind.USER_PROFILE, {}, scope="u")
    assert claims("从3月1日开始。", [iso]) == [("date", "3月1日", True, "u3")]
    assert claims("从3月2日开始。", [iso]) == [("date", "3月2日", False, "")]


def test_dial_codes_and_phone_numbers_are_number_claims():
    assert claims("拨打*#21*8#开通，或者拨打400 123 4567。", [PACK_EN]) == [
        ("number", "*#21*8#", True, "e1"),
        ("number", "400 123 4567", True, "e1"),
    ]
    assert claims("Dial *#21*9# or call 400 123 9999.", [PACK_EN]) == [
        ("number", "*#21*9#", False, ""),
        ("number", "400 123 9999", False, ""),
    ]


def test_a_phone_number_spaced_in_the_reply_is_supported_by_the_same_digits_unspaced():
    hotline = Knowledge("h", "Hotline 4001234567, open all day.", SourceKind.FAQ, {})
    assert claims("Call 400 123 4567 please.", [hotline]) == [("number", "400 123 4567", True, "h")]


def test_a_name_pattern_not_in_the_knowledge_base_is_unsupported():
    assert claims("Greenleaf Gold Plan costs 10 yuan.", [PACK_EN]) == [
        ("name", "Greenleaf Gold Plan", False, ""),
        ("price", "10 yuan", True, "e1"),
    ]


def test_the_brand_is_no_claim_but_a_plan_named_after_it_is():
    # "Greenleaf Mobile" (the operator) matches the name pattern first; the plan named after it is still checked
    assert claims("Greenleaf Mobile offers Greenleaf Gold Plan at 10 yuan.", [PACK_EN]) == [
        ("name", "Greenleaf Gold Plan", False, ""),
        ("price", "10 yuan", True, "e1"),
    ]


def test_eligibility_against_the_first_plan_fee_of_the_profile():
    # the user's plan (58) meets the pack's condition (58 and above): "can" agrees, "cannot" does not
    assert claims("您可以办理夜间流量包。", [NIGHT, PROFILE])[-1] == (
        "eligibility",
        "您可以办理夜间流量包。",
        True,
        "p2",
    )
    assert claims("您不能办理夜间流量包。", [NIGHT, PROFILE])[-1] == (
        "eligibility",
        "您不能办理夜间流量包。",
        False,
        "the user's plan (58) vs the condition (58)",
    )
    # only the first fee of the profile counts (38 < 58, although a later fee is 88)
    assert claims("您可以办理夜间流量包。", [NIGHT, CHEAP_PROFILE])[-1] == (
        "eligibility",
        "您可以办理夜间流量包。",
        False,
        "the user's plan (38) vs the condition (58)",
    )


def test_each_eligibility_sentence_is_its_own_claim():
    assert claims("您可以办理夜间流量包。您不能办理夜间流量包。", [NIGHT, PROFILE])[1:] == [
        ("eligibility", "您可以办理夜间流量包。", True, "p2"),
        ("eligibility", "您不能办理夜间流量包。", False, "the user's plan (58) vs the condition (58)"),
    ]


def test_a_number_is_supported_by_the_same_number_said_without_its_unit():
    # the knowledge gives bare numbers; the reply adds the units (and the other way round)
    bare = Knowledge("b", "副卡数量 3 ; 月费 58", SourceKind.FAQ, {})
    assert claims("可加3张副卡，月费58元。", [bare]) == [("number", "3张", True, "b"), ("price", "58元", True, "b")]
    assert claims("可加3张副卡，有效期12。", [PLAN]) == [("number", "3张", False, ""), ("number", "12", True, "p1")]


def test_eligibility_must_state_the_condition_of_the_cited_item():
    assert claims("您可以办理青禾畅享套餐，须年满18周岁。", [PLAN])[-1] == (
        "eligibility",
        "您可以办理青禾畅享套餐，须年满18周岁。",
        True,
        "p1",
    )
    assert claims("您可以办理青禾畅享套餐。", [PLAN])[-1] == (
        "eligibility",
        "您可以办理青禾畅享套餐。",
        False,
        "the condition of the cited item is not stated",
    )
    assert claims("您可以办理。", []) == [("eligibility", "您可以办理。", False, "no cited item")]
    # a cited item without any condition: nothing to contradict
    assert claims("您可以办理。", [PACK_EN]) == [("eligibility", "您可以办理。", True, "e1")]


def test_action_claims_name_why_they_are_unsupported():
    assert claims("已为您开通夜间流量包。", [NIGHT]) == [
        ("action", "已为您开通", False, "the system performs no account action"),
        ("name", "夜间流量包", True, "p2"),
    ]
    assert claims("The Greenleaf Night Pack has been activated.", [PACK_EN])[0] == (
        "action",
        "has been activated",
        False,
        "the system performs no account action",
    )


def test_runaway_digits_at_their_boundaries():
    assert degenerate_reason("号码123456789012") == "runaway digits"  # 12 digits
    assert degenerate_reason("号码12345678901") is None  # 11 digits: a phone number
    assert degenerate_reason("号码11111111") == "runaway digits"  # one digit 8 times
    assert degenerate_reason("号码1111111") is None


def test_mostly_repeated_text_is_degenerate_only_beyond_120_characters():
    # a phrase said three times in a row (never four: no runaway repeat), then "and": fewer than 35% distinct 6-grams
    said = ("the quick brown fox " * 3 + "and ") * 4
    assert degenerate_reason(said[1:121]) is None  # 120 characters
    assert degenerate_reason(said[1:122]) == "repetition"  # 121


def test_totals_count_replies_claims_and_kinds():
    checks = [
        check_grounding("月费88元，含流量20GB。", Evidence.of([PLAN])),
        check_grounding("", Evidence.of([PLAN])),
        check_grounding("月费58元。", Evidence.of([PLAN])),
    ]
    assert grounding_totals(checks).to_dict() == {
        "replies": 3,
        "claims": 3,
        "unsupported": 1,
        "replies_unsupported": 1,
        "degenerate": 1,
        "unsupported_by_kind": {"price": 1},
    }


def test_rate_of_no_replies_is_zero():
    score = unsupported_claim_rate([], [])
    assert score.value == 0.0 and score.name == "unsupported_claim_rate"
