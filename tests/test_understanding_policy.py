"""The cues before the answer model on hand-written turns: another language, the follow-up and services flags;
the rewrite of a follow-up (from the user's last two turns, the item cited in the last reply, the user's
last question, in that order); ``Decision.allows`` and its scope."""

from __future__ import annotations

import pytest

from ragdial.schema import Knowledge, SourceKind, Speaker, Turn
from ragdial.understanding.decision import GLOBAL, USER_PROFILE, Decision
from ragdial.understanding.policy import TurnIntent, classify_turn, rewrite_turn

NAMES = ["夜间流量包", "Night Pack", "青禾畅享套餐"]
KB = {
    "night": Knowledge("night", "夜间流量包 10元", SourceKind.PRODUCT, {"name": "夜间流量包"}),
    "faq": Knowledge("faq", "怎么查话费：发送CXHF", SourceKind.FAQ, {"question": "怎么查话费"}),
    "mine": Knowledge("mine", "青禾畅享套餐", SourceKind.USER_PROFILE, {"name": "青禾畅享套餐"}, scope="u1"),
    "blank": Knowledge("blank", "一个新套餐 20元", SourceKind.PRODUCT, {"name": ""}),
}


def user(text: str) -> Turn:
    return Turn(Speaker.USER, text)


def system(text: str, *ids: str) -> Turn:
    return Turn(Speaker.SYSTEM, text, list(ids))


@pytest.mark.parametrize(
    ("text", "previous", "expected"),
    [
        # the cues only: the policy and route are the answer model's (tests/test_grounded_path.py)
        ("我的余额还剩多少", (), ("answer", "", False)),
        ("帮我开通夜间流量包", (), ("answer", "", False)),
        ("bonjour, quel est mon solde ?", (), ("other_language", "", False)),
        ("what about that one?", ("how much is the night pack",), ("answer", "", True)),
        ("这个呢", ("我的余额还剩多少",), ("answer", "", True)),
        # a long turn is not a follow-up whatever it says
        (
            "我想问一个很长的问题，今天天气不错我们出去走走吧，顺便聊聊天好不好呀朋友",
            ("怎么查话费",),
            ("answer", "", False),
        ),
    ],
)
def test_the_cues_before_the_model(text, previous, expected):
    intent = classify_turn(text, previous)
    assert (intent.policy, intent.route, intent.follow_up) == expected


@pytest.mark.parametrize(
    ("text", "services"),
    [
        ("我现在都开了哪些业务", True),
        ("which plans do I have?", True),
        ("怎么查询已办理的业务", False),
        ("我每个月都交哪些钱", True),
        ("what else am I paying for", True),
        ("how much am I paying for the plan", False),
    ],
)
def test_asking_which_services_one_has_but_not_how_to_look_them_up(text, services):
    assert classify_turn(text).services is services


def rewrite(*context: Turn) -> tuple[str, tuple[str, ...]]:
    previous = [t.text for t in context[:-1] if t.speaker == Speaker.USER]
    result = rewrite_turn(context, classify_turn(context[-1].text, previous), KB.get, NAMES)
    assert result.original == context[-1].text
    return result.text, result.carried


def test_a_follow_up_carries_the_name_the_user_said_in_the_last_two_turns():
    context = (user("我想了解夜间流量包"), system("好的"), user("那这个多少钱？"))
    assert rewrite(*context) == ("夜间流量包 那这个多少钱？", ("夜间流量包",))
    assert rewrite(user("Night Pack please"), system("ok"), user("how much is it?")) == (
        "Night Pack how much is it?",
        ("Night Pack",),
    )
    # named three user turns ago: too old; the user's last question is carried instead
    context = (
        user("夜间流量包"),
        system("好"),
        user("我想问话费"),
        system("嗯"),
        user("还有"),
        system("嗯", "faq"),  # a reply that cited something: "还有" was a question
        user("那这个多少钱？"),
    )
    assert rewrite(*context) == ("还有 那这个多少钱？", ("还有",))
    context = (user("夜间流量包"), system("好"), user("我想问话费"), system("嗯"), user("那这个多少钱？"))
    assert rewrite(*context) == ("夜间流量包 那这个多少钱？", ("夜间流量包",))


def test_else_the_global_item_cited_in_the_last_reply():
    assert rewrite(user("你好"), system("您好", "night"), user("那这个多少钱？")) == (
        "夜间流量包 那这个多少钱？",
        ("夜间流量包",),
    )
    # an item without a name field: the user's last question; the user's own item: nothing to carry but a greeting
    # whose reply cited nothing is no question to carry either
    assert rewrite(user("怎么查话费"), system("发送CXHF", "faq"), user("那这个多少钱？")) == (
        "怎么查话费 那这个多少钱？",
        ("怎么查话费",),
    )
    assert rewrite(user("你好"), system("您好"), user("那这个多少钱？")) == ("那这个多少钱？", ())
    # a cited item whose name is empty gives no name (never "None"): the user's last question again
    assert rewrite(user("有新套餐吗"), system("有的", "blank"), user("那这个多少钱？")) == (
        "有新套餐吗 那这个多少钱？",
        ("有新套餐吗",),
    )
    assert rewrite(user("hi"), system("hello"), user("how much is it?")) == ("how much is it?", ())


def test_what_is_not_rewritten():
    # a long follow-up, a turn naming a known item, small talk, a first turn with nothing to carry
    long = "how much is it for the whole of this month and next month too?"
    assert rewrite(user("Night Pack please"), system("ok"), user(long)) == (long, ())
    assert rewrite(user("我想了解夜间流量包"), system("好的"), user("青禾畅享套餐这个多少钱？")) == (
        "青禾畅享套餐这个多少钱？",
        (),
    )
    assert rewrite(user("我想了解夜间流量包"), system("好的"), user("谢谢")) == ("谢谢", ())
    assert rewrite(user("那这个多少钱？")) == ("那这个多少钱？", ())


def test_an_action_is_about_the_thing_talked_about():
    assert rewrite(user("我想了解夜间流量包"), system("好的"), user("那帮我办这个")) == (
        "夜间流量包 那帮我办这个",
        ("夜间流量包",),
    )


def test_turn_intent_to_dict():
    assert TurnIntent("answer", "faq", True, services=True).to_dict() == {
        "policy": "answer",
        "route": "faq",
        "follow_up": True,
        "services": True,
        "comparison": False,
        "possession": False,
    }


def test_decision_allows_only_its_lookups_and_the_sessions_own_profile():
    mine, night, faq = KB["mine"], KB["night"], KB["faq"]
    both = Decision(True)
    assert both.allows(mine, "u1") and both.allows(night, "u1") and both.allows(faq, None)
    assert not both.allows(mine, "u2") and not both.allows(mine, None)
    profile_only = Decision(True, (USER_PROFILE,))
    assert profile_only.allows(mine, "u1") and not profile_only.allows(night, "u1")
    faq_only = Decision(True, (GLOBAL,), (SourceKind.FAQ,))
    assert faq_only.allows(faq, "u1") and not faq_only.allows(night, "u1") and not faq_only.allows(mine, "u1")
    assert not Decision(False).allows(night, "u1")
    assert (both.scope("u1").local, both.scope("u1").include_global) == ("u1", True)
    assert (faq_only.scope("u1").local, faq_only.scope("u1").include_global) == (None, True)
    assert (Decision(False).scope("u1").local, Decision(False).scope("u1").include_global) == (None, False)


def test_a_comparison_is_recognised_by_its_words_not_by_names():
    from ragdial.understanding.policy import asks_comparison

    for text in (
        "百兆和千兆差多少钱",
        "视频包跟音乐包哪个流量多",
        "is the weekend pack better value than that?",
        "A vs B",
    ):
        assert asks_comparison(text), text
    for text in (
        "去日本用哪个包 多少钱一天",
        "got anything bigger than that?",
        "how much is left?",
        "账户里还有多少钱",
    ):
        assert not asks_comparison(text), text
