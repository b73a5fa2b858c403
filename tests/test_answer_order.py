"""Structural corrections of the answer model's ranking (ragdial.pipeline.answer_order) on a small knowledge base
of our own (a gym: memberships, classes, FAQs), and the knowledge base's unknown-term share
(ragdial.pipeline.grounded.Relevance.unknown) that the policy head reads."""

from __future__ import annotations

import numpy as np

from ragdial.pipeline.answer_features import CANDIDATE_FEATURES, Candidates, TurnView, catalogue_of
from ragdial.pipeline.answer_order import common_fragments, mentions, reorder, says_mine
from ragdial.pipeline.grounded import Relevance
from ragdial.schema import Knowledge, SourceKind


def _faq(index: int, question: str, answer: str) -> Knowledge:
    return Knowledge(f"faq:{index}", f"Question: {question}, Answer: {answer}", SourceKind.FAQ, {"question": question})


def _product(index: int, name: str, rest: str) -> Knowledge:
    return Knowledge(f"product:{index}", f"Service name: {name}, {rest}", SourceKind.PRODUCT, {"name": name})


FREEZE_CLASS = _faq(0, "How do I freeze a class pass", "In the app open My Passes and tap Freeze.")
LOCKER = _faq(1, "How do I rent a locker", "Ask at the desk; say STOP at the desk to end it.")
JOIN = _faq(2, "How do I join the Gold Membership", "Bring an ID to the desk.")
GOLD = _product(3, "Gold Membership", "Fee: 40 euro per month, Classes: all classes, Rules: 12 months minimum")
PASS = _product(4, "Yoga Class Pass", "Fee: 10 euro per month, Classes: 4 yoga classes")
SPIN = _product(5, "Spin Class Pass", "Fee: 12 euro per month, Classes: 4 spin classes")
MINE = Knowledge(
    "u1:local:0",
    "Service name: Gold Membership, Fee: 40 euro per month, Start date: 1 May 2025",
    SourceKind.USER_PROFILE,
    scope="u1",
)
ITEMS = (FREEZE_CLASS, LOCKER, JOIN, GOLD, PASS, SPIN, MINE)
CATALOGUE = catalogue_of(ITEMS)


def _candidates(items, **columns) -> Candidates:
    """Feature rows of ``items``, zero but for ``columns`` (name → one value per item)."""
    rows = np.zeros((len(items), len(CANDIDATE_FEATURES)))
    for name, values in columns.items():
        rows[:, CANDIDATE_FEATURES.index(name)] = values
    return Candidates(tuple(items), rows)


def _ids(order, candidates):
    return [candidates.items[j].id for j in order]


def test_a_bare_reference_stays_with_what_the_last_reply_was_about():
    # "how do I cancel it?" after the locker FAQ: the generic class-pass FAQ names another kind of thing
    view = TurnView("how do I cancel it?", ("how do I rent a locker",), (("faq:1",),), language="en")
    candidates = _candidates(
        (FREEZE_CLASS, LOCKER, PASS), cited_last=[0, 1, 0], cited_last_first=[0, 1, 0], head_cover_dialog=[0, 1, 0]
    )
    assert _ids(reorder([0, 1, 2], candidates, view, CATALOGUE), candidates) == ["faq:1", "faq:0", "product:4"]


def test_a_reference_that_names_its_subject_or_follows_a_profile_figure_is_left_alone():
    candidates = _candidates((FREEZE_CLASS, LOCKER), cited_last=[0, 1], cited_last_first=[0, 1])
    with_number = TurnView("how do I cancel the 10 one?", ("how do I rent a locker",), (("faq:1",),), language="en")
    assert reorder([0, 1], candidates, with_number, CATALOGUE) == [0, 1]  # a number names its subject
    named = _candidates((FREEZE_CLASS, LOCKER), cited_last=[0, 1], cited_last_first=[0, 1], name_cover=[0.6, 0])
    plain = TurnView("how do I cancel it?", ("how do I rent a locker",), (("faq:1",),), language="en")
    assert reorder([0, 1], named, plain, CATALOGUE) == [0, 1]
    # the class pass was talked about: a class-pass FAQ is no stranger
    about_pass = TurnView("how do I stop it?", ("is there a yoga class pass",), (("product:4",),), language="en")
    passes = _candidates((FREEZE_CLASS, PASS), cited_last=[0, 1], cited_last_first=[0, 1])
    assert reorder([0, 1], passes, about_pass, CATALOGUE) == [0, 1]


def test_a_question_about_ones_own_service_cites_the_users_record_first():
    candidates = _candidates((GOLD, MINE, PASS))
    own = TurnView("is my membership the gold one?", language="en")
    assert _ids(reorder([0, 1, 2], candidates, own, CATALOGUE), candidates)[0] == "u1:local:0"
    # not about one's own, or a guest: the product stays first
    general = TurnView("is the gold membership good value?", language="en")
    assert reorder([0, 1, 2], candidates, general, CATALOGUE) == [0, 1, 2]
    guest = TurnView("is my membership the gold one?", guest=True, language="en")
    assert reorder([0, 1, 2], candidates, guest, CATALOGUE) == [0, 1, 2]
    # what is asked is only in the product (its classes): the product stays first
    contents = _candidates((GOLD, MINE, PASS), asked_attribute=[1, 0, 0])
    assert reorder([0, 1, 2], contents, own, CATALOGUE) == [0, 1, 2]


def test_ones_own_service_named_in_the_turn_answers_over_an_faq_about_it():
    view = TurnView("when did my gold membership start", language="en")
    candidates = _candidates((JOIN, MINE), asked_attribute=[0, 1])
    assert _ids(reorder([0, 1], candidates, view, CATALOGUE), candidates) == ["u1:local:0", "faq:2"]
    not_held = _candidates((JOIN, MINE), asked_attribute=[0, 0])  # "how do I join": the record does not say
    assert reorder([0, 1], not_held, TurnView("how do I join my gold membership", language="en"), CATALOGUE) == [0, 1]


def test_a_name_is_mentioned_by_a_part_that_few_names_share():
    names = ["Gold Membership", "Yoga Class Pass", "Spin Class Pass", "Boxing Class Pass"]
    names += ["金卡会员", "瑜伽次卡", "动感单车次卡", "拳击次卡"]
    common = common_fragments(names)
    assert {"class", "pass", "次卡"} <= common and "gold" not in common
    assert mentions("Gold Membership", "when does my gold one end", common)
    assert not mentions("Yoga Class Pass", "is my class pass still valid", common)
    assert mentions("金卡会员", "我的金卡什么时候到期", common) and not mentions("瑜伽次卡", "我的次卡还剩几次", common)


def test_unknown_is_the_share_of_the_turns_terms_no_item_has():
    relevance = Relevance(ITEMS)
    assert relevance.unknown("how do I rent a locker") == 0.0
    assert relevance.unknown("do you sell protein shakes") == 1.0
    assert 0.0 < relevance.unknown("can I bring a friend to the spin class") < 1.0
    assert relevance.unknown("") == 0.0


VISITS = Knowledge(
    "u1:local:1",
    "Visits used this month: 9, Visits left: 3, Guest visits left: 2",
    SourceKind.USER_PROFILE,
    scope="u1",
)
TOWELS = Knowledge("u1:local:2", "Towels used this month: 5, Towels left: 7", SourceKind.USER_PROFILE, scope="u1")


def test_the_users_figure_the_turn_names_by_its_field_words_goes_first():
    # "how many are left?" after a question about visits: the record with "Visits left", not the membership record
    # that the model put first (its fee answers "how much"), nor the towels (their "left" is not the visits')
    view = TurnView("and how many are left?", ("how many visits did I use",), language="en")
    candidates = _candidates((MINE, TOWELS, VISITS))
    assert _ids(reorder([0, 1, 2], candidates, view, CATALOGUE), candidates) == [
        "u1:local:1",
        "u1:local:0",
        "u1:local:2",
    ]
    guests = TurnView("how many guest visits are left", language="en")  # every word of "Guest visits left"
    assert _ids(reorder([0, 1, 2], candidates, guests, CATALOGUE), candidates)[0] == "u1:local:1"


def test_a_named_service_or_an_ambiguous_figure_keeps_the_models_order():
    candidates = _candidates((MINE, TOWELS, VISITS), name_cover=[1.0, 0, 0])
    named = TurnView("how much is left on my gold membership", language="en")
    assert reorder([0, 1, 2], candidates, named, CATALOGUE) == [0, 1, 2]  # the turn names the leading service
    plain = _candidates((MINE, TOWELS, VISITS))
    ambiguous = TurnView("how many are left?", language="en")  # towels or visits: nothing said before settles it
    assert reorder([0, 1, 2], plain, ambiguous, CATALOGUE) == [0, 1, 2]
    product_first = _candidates((GOLD, VISITS))
    assert reorder([0, 1], product_first, ambiguous, CATALOGUE) == [0, 1]  # only the user's own items move


GOLD_ZH = Knowledge(
    "product:7", "业务名称：金卡会员，业务费用：300元/月，课程：全部课程", SourceKind.PRODUCT, {"name": "金卡会员"}
)
JOIN_ZH = _faq(8, "金卡会员怎么办理", "带身份证到前台办理。")
MINE_ZH = Knowledge(
    "u2:local:0", "业务名称：金卡会员，业务费用：300元/月，开始时间：2025年5月1日", SourceKind.USER_PROFILE, scope="u2"
)


def test_i_right_before_a_word_of_the_knowledges_names_is_a_question_about_ones_own():
    names = ["金卡会员", "剩余次数"]
    assert says_mine("我金卡一个月多少钱", names)
    assert says_mine("我剩余次数还有几次", names)
    assert not says_mine("我想办金卡", names)  # 想办 is no name's word: a wish, not a possession
    assert not says_mine("金卡一个月多少钱", names)
    # the user's record goes before the FAQ the model put first, as it does for "我的金卡"
    view = TurnView("我金卡一个月多少钱", ("前台几点关门",), language="zh")
    candidates = _candidates((JOIN_ZH, GOLD_ZH, MINE_ZH), asked_attribute=[0, 1, 1])
    catalogue = catalogue_of((JOIN_ZH, GOLD_ZH, MINE_ZH))
    assert _ids(reorder([0, 1, 2], candidates, view, catalogue), candidates)[0] == "u2:local:0"
    wish = TurnView("我想办金卡，一个月多少钱", language="zh")
    assert reorder([0, 1, 2], candidates, wish, catalogue) == [0, 1, 2]


def test_a_short_turn_going_on_from_ones_figures_stays_with_ones_figures():
    # "and towels?" after the visits left: the towels left, not the product the model put first
    view = TurnView("and towels?", ("how many visits are left",), (("u1:local:1",),), language="en")
    candidates = _candidates((SPIN, VISITS, TOWELS), cited_last=[0, 1, 0], cited_last_first=[0, 1, 0])
    assert _ids(reorder([0, 1, 2], candidates, view, CATALOGUE), candidates)[0] == "u1:local:2"
    # a product named, or a reply that was not about one's figures: the model's order stands
    named = _candidates((SPIN, VISITS, TOWELS), cited_last_first=[0, 1, 0], named_turn=[1, 0, 0])
    spin = TurnView("and the spin class pass?", ("how many visits are left",), (("u1:local:1",),), language="en")
    assert reorder([0, 1, 2], named, spin, CATALOGUE) == [0, 1, 2]
    after_product = _candidates((SPIN, VISITS, TOWELS), cited_last_first=[1, 0, 0])
    towels = TurnView("and towels?", ("is there a spin class pass",), (("product:5",),), language="en")
    assert reorder([0, 1, 2], after_product, towels, CATALOGUE) == [0, 1, 2]


def test_a_chinese_turn_saying_wo_anywhere_asks_for_ones_figure_before_an_faq():
    # "这个月我用了几次" puts 我 after the time word: one's own figure, like "我的本月已用次数", before the FAQ
    visits = Knowledge("u2:local:1", "剩余次数：6次，本月已用次数：2次", SourceKind.USER_PROFILE, scope="u2")
    how = _faq(9, "剩余次数在哪里看", "在APP首页查看。")
    candidates = _candidates((how, visits), asked_attribute=[0, 1])
    view = TurnView("这个月我用了几次", language="zh")
    assert _ids(reorder([0, 1], candidates, view, CATALOGUE), candidates)[0] == "u2:local:1"
    # no 我, or asking where to look: the FAQ stays first
    assert reorder([0, 1], candidates, TurnView("这个月用了几次", language="zh"), CATALOGUE) == [0, 1]
    assert reorder([0, 1], candidates, TurnView("我在哪里看剩余次数", language="zh"), CATALOGUE) == [0, 1]


def test_a_question_which_service_one_has_puts_the_users_record_before_an_faq():
    candidates = _candidates((JOIN, MINE), asked_attribute=[0, 1])
    name = TurnView("what's the name of the one I'm on", language="en")
    assert _ids(reorder([0, 1], candidates, name, CATALOGUE), candidates)[0] == "u1:local:0"
    # another attribute of one's service against an FAQ: the model's order stands (the FAQ may say how)
    fee = TurnView("what does it cost to add a friend to mine", language="en")
    assert reorder([0, 1], candidates, fee, CATALOGUE) == [0, 1]


def test_what_the_speaker_did_or_has_is_asked_of_their_own_records():
    # "when did I join" asks the start of one's own membership, not how to join
    candidates = _candidates((JOIN, GOLD, MINE), asked_attribute=[0, 0, 1])
    did = TurnView("when did I join the gold membership", language="en")
    assert _ids(reorder([0, 1, 2], candidates, did, CATALOGUE), candidates)[0] == "u1:local:0"
    anyone = TurnView("when can people join the gold membership", language="en")
    assert reorder([0, 1, 2], candidates, anyone, CATALOGUE) == [0, 1, 2]


def test_ones_own_figure_goes_before_a_product_that_does_not_hold_it():
    # "Gold Membership, how many visits have I got left": the product the rewrite carried came first, but only the
    # user's record holds visits left
    candidates = _candidates((GOLD, VISITS), asked_attribute=[0, 1])
    view = TurnView("how many visits do I have left this month", language="en")
    assert _ids(reorder([0, 1], candidates, view, CATALOGUE), candidates)[0] == "u1:local:1"
    # the product holds what is asked, or the turn is not about one's own: the product stays first
    holds = _candidates((GOLD, VISITS), asked_attribute=[1, 1])
    assert reorder([0, 1], holds, view, CATALOGUE) == [0, 1]
    anyone = TurnView("how many visits are there in a month", language="en")
    assert reorder([0, 1], candidates, anyone, CATALOGUE) == [0, 1]


# typed products of our own (a swimming pool's cards, a commuter's passes) for the sibling and carry-over rules
SWIM_8 = _product(10, "8-Visit Swim Card", "Type: swim card, Fee: 40 euro")
SWIM_20 = _product(11, "20-Visit Swim Card", "Type: swim card, Fee: 90 euro")
SWIM_50 = _product(12, "50-Visit Swim Card", "Type: swim card, Fee: 200 euro")
SAUNA = _product(13, "Sauna Evening", "Type: wellness, Fee: 15 euro")
SWIM_FAQ = _faq(14, "How long does a new card take to work", "About 30 minutes after you pay at the desk.")
POOL = (SWIM_8, SWIM_20, SWIM_50, SAUNA, SWIM_FAQ)


def _zh_product(index: int, name: str, rest: str) -> Knowledge:
    return Knowledge(f"product:{index}", f"业务名称：{name}，{rest}", SourceKind.PRODUCT, {"name": name})


COMMUTE = _zh_product(20, "全国通勤月票", "业务类型：通勤票，业务费用：300元/月，业务规则：办理次月生效")
REGION = _zh_product(21, "京津冀通勤月票", "业务类型：通勤票，业务费用：120元/月，业务规则：办理次月生效")
YOUTH = _zh_product(22, "青年学生月票", "业务类型：通勤票，业务费用：50元/月，业务规则：限25周岁以下")
COMMUTES = (COMMUTE, REGION, YOUTH)


def test_a_request_for_a_bigger_or_cheaper_one_gets_the_next_sibling_of_the_same_type():
    items = (SWIM_8, SWIM_FAQ, SWIM_20, SWIM_50, SAUNA)
    candidates = _candidates(items, cited_last=[1, 0, 0, 0, 0], cited_last_first=[1, 0, 0, 0, 0])
    after_8 = ("how much is the 8 visit card",), (("product:10",),)
    bigger = TurnView("anything bigger?", *after_8, language="en")
    assert _ids(reorder([0, 1, 2, 3, 4], candidates, bigger, catalogue_of(POOL)), candidates)[0] == "product:11"
    # from the 50-visit card, "cheaper" is the largest smaller one
    top = _candidates(items, cited_last=[0, 0, 0, 1, 0], cited_last_first=[0, 0, 0, 1, 0])
    cheaper = TurnView("got a cheaper one?", ("and the 50 visit card",), (("product:12",),), language="en")
    assert _ids(reorder([3, 0, 1, 2, 4], top, cheaper, catalogue_of(POOL)), top)[0] == "product:11"
    # a comparison of two, a number, or no sibling request: the model's order stays
    for text in ("which is cheaper, that or mine?", "anything bigger than 30?", "how do I pay for it?"):
        view = TurnView(text, *after_8, language="en")
        assert reorder([0, 1, 2, 3, 4], candidates, view, catalogue_of(POOL)) == [0, 1, 2, 3, 4]


def test_a_sibling_named_by_a_part_of_its_name_goes_first():
    # "那天津的呢" after the national pass: 津 of 天津 is in one name only (京津冀), and 天津 is in no product's text
    candidates = _candidates(COMMUTES, cited_last=[1, 0, 0], cited_last_first=[1, 0, 0])
    view = TurnView("那天津的呢", ("全国通勤月票多少钱",), (("product:20",),))
    assert _ids(reorder([0, 1, 2], candidates, view, catalogue_of(COMMUTES)), candidates)[0] == "product:21"
    # 生 of 生效 is a word the products say: not the student pass's 学生
    said = TurnView("办了啥时候生效", ("全国通勤月票多少钱",), (("product:20",),))
    assert reorder([0, 1, 2], candidates, said, catalogue_of(COMMUTES)) == [0, 1, 2]


def test_the_number_the_turn_says_picks_the_member_of_the_family_whose_name_has_it():
    items = (SWIM_8, SWIM_20, SAUNA)
    candidates = _candidates(items)
    twenty = TurnView("what does a card for 20 swims cost", language="en")
    assert _ids(reorder([0, 1, 2], candidates, twenty, catalogue_of(POOL)), candidates)[0] == "product:11"
    # a number no name has, or the first's own number: the model's order stays
    for text in ("what does a card for 30 swims cost", "is the 8 one still 40 euro"):
        assert reorder([0, 1, 2], candidates, TurnView(text, language="en"), catalogue_of(POOL)) == [0, 1, 2]


def test_a_service_on_its_own_puts_its_product_before_the_users_record_of_it():
    items = (MINE, GOLD, PASS)
    candidates = _candidates(items)
    view = TurnView("and what is the Gold fee on its own?", language="en")
    assert _ids(reorder([0, 1, 2], candidates, view, CATALOGUE), candidates)[0] == "product:3"
    plain = TurnView("what do I pay for my membership?", language="en")
    assert reorder([0, 1, 2], candidates, plain, CATALOGUE)[0] == 0
