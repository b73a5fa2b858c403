"""Which of the user's figures a question asks for, read from the knowledge base's own field names
(``ragdial.generation.extractive.named_keys``), and the extractive reply that states it; fields of our own."""

from __future__ import annotations

import pytest

from ragdial.generation.base import GenerationRequest
from ragdial.generation.extractive import extractive_reply, named_keys
from ragdial.schema import Knowledge, SourceKind, Speaker, Turn

LOCKER = {"Hours used this week": "6", "Hours left": "4", "Weekend hours left": "2", "Deposit": "20 euro"}


@pytest.mark.parametrize(
    ("question", "before", "keys"),
    [
        ("how many are left?", "how many hours have I used", ["Hours left"]),  # "hours" said before, not "weekend"
        ("how many weekend hours are left", "", ["Weekend hours left"]),
        ("what is my deposit", "", ["Deposit"]),
        ("how much is left for the weekend?", "", []),  # "Weekend hours left" half said: not named
        ("how many hours can I still use this week", "", []),  # not "Hours used this week" (three words of four)
        ("how many are left?", "", []),  # hours or weekend hours: nothing settles it
        ("can I bring a friend", "", []),
    ],
)
def test_a_question_names_the_field_by_the_fields_own_words(question, before, keys):
    assert named_keys(question, LOCKER, before) == keys


def test_chinese_keys_are_named_by_their_character_pairs_and_a_shared_word_alone_names_none():
    fields = {"本周已用时长": "6小时", "剩余时长": "4小时", "押金": "20欧元"}
    assert named_keys("押金是多少", fields) == ["押金"]
    assert named_keys("剩余时长还有多少", fields) == ["剩余时长"]
    assert named_keys("时长用掉多少了", fields) == []  # "时长" is in two keys, neither said whole


@pytest.mark.parametrize(
    ("question", "keys"),
    [
        ("停车场里我还存着多少钱", ["停车押金"]),  # 停车 and 押金 said, neither key said whole: 押金 is its own
        ("储物柜还能用几个小时", ["储物柜剩余时长"]),  # 储物柜 is a word of that key alone
        ("这周已经花了多少", []),  # 本周 is not said; a pair across two words (周已) names nothing
        ("还剩多少", []),
    ],
)
def test_a_chinese_key_is_named_by_a_word_no_other_key_has(question, keys):
    fields = {"本周已用时长": "6小时", "储物柜剩余时长": "4小时", "停车押金": "20欧元"}
    assert named_keys(question, fields) == keys


def _reply(*turns: str) -> str:
    figures = Knowledge(
        "u9:local:1",
        "Hours used this week: 6, Hours left: 4, Weekend hours left: 2",
        SourceKind.USER_PROFILE,
        scope="u9",
    )
    context = [Turn(Speaker.USER if i % 2 == 0 else Speaker.SYSTEM, t) for i, t in enumerate(turns)]
    return extractive_reply(GenerationRequest(context, [figures], language="en"))


def test_the_extractive_reply_states_the_figure_named_and_every_figure_when_none_is():
    assert _reply("how many hours have I used", "Your hours used this week: 6.", "and how many are left?") == (
        "Your hours left: 4."
    )
    assert _reply("what does my locker account say") == (
        "Your hours used this week: 6. Your hours left: 4. Your weekend hours left: 2."
    )


SAUNA = Knowledge(
    "product:9",
    "Service name: Sauna Pass, Fee: 4 euro per visit, Data: 2 towels included (usable 6:30 to 9:00), Minutes: none, "
    "Rules: one visit a day, Channels: the front desk; bring a padlock",
    SourceKind.PRODUCT,
)


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("what hours can I use the sauna pass", "6:30 to 9:00"),  # a clock time for hours asked
        ("sauna pass: what after the 2 towels", "2 towels included"),  # an amount the question says
        ("sauna pass, is a padlock needed", "bring a padlock"),  # a word one value alone has
    ],
)
def test_a_product_answer_states_the_field_whose_value_holds_what_is_asked(question, said):
    reply = extractive_reply(GenerationRequest([Turn(Speaker.USER, question)], [SAUNA], language="en"))
    assert said in reply and "4 euro per visit" in reply  # beside the price it always says


def test_no_value_is_added_when_the_question_says_nothing_a_value_holds():
    from ragdial.generation.extractive import said_in_values

    fields = {"Fee": "4 euro per visit", "Rules": "open 6:30 to 22:00"}
    assert said_in_values("how much is it", fields) == []
    assert said_in_values("is it open on sundays", fields) == []  # "open" is four letters: too short to say


def test_the_balance_the_total_and_the_usage_are_asked_for_in_plain_words():
    # "还有多少话费" names no field, "what's the total" says no "charges", "how much did I use" says no "data"
    from ragdial.generation.extractive import asked_keys

    account = {"账户余额": "3.10元", "本月已产生费用": "41.00元"}
    assert asked_keys("手机里还有多少话费啊", account) == ["账户余额"]
    english = {"Balance": "3.10 yuan", "Charges this month": "41.00 yuan", "Data used this month": "2.2GB"}
    assert asked_keys("ugh, what's the total so far", english) == ["Charges this month"]
    assert asked_keys("how much did I use", english) == ["Data used this month"]
