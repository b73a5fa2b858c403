"""The template generator with several knowledge items: it uses the first ``max_items`` in the order given (the
retriever's best first), never the last ones, and never reorders them."""

from __future__ import annotations

import pytest

from ragdial.datasets import kdconv
from ragdial.generation.base import GenerationRequest
from ragdial.generation.template import TemplateGenerator, TemplateModel
from ragdial.schema import Knowledge, SourceKind, Speaker, Turn


@pytest.fixture(scope="module")
def model(fixtures) -> TemplateModel:
    travel = kdconv.load(fixtures / "generation" / "travel_dialogs.json")
    return TemplateGenerator.train(travel.examples, travel.kb, "zh").model


def ask(text: str) -> list[Turn]:
    return [Turn(Speaker.USER, text)]


TRIPLES = [
    kdconv.triple("红枫谷", "门票", "旺季60元"),
    kdconv.triple("红枫谷", "开放时间", "8:00-17:30"),
    kdconv.triple("红枫谷", "电话", "0571-1234567"),
]
FAQS = [
    Knowledge(f"f{i}", f"Q{i}? {answer}", SourceKind.FAQ, {"body": answer})
    for i, answer in enumerate(
        ["Parking is free.", "Breakfast starts at 7.", "Pets are not allowed.", "The pool closes at 9."]
    )
]


def test_triples_keep_their_order_and_all_fit(model):
    reply = TemplateGenerator(model).generate(GenerationRequest(ask("红枫谷门票和开放时间？"), TRIPLES))
    assert reply == "红枫谷的门票是旺季60元。开放时间是8:00-17:30。电话是0571-1234567。"


def test_max_items_takes_the_first_triples(model):
    reply = TemplateGenerator(model, max_items=2).generate(GenerationRequest(ask("红枫谷门票和开放时间？"), TRIPLES))
    assert reply == "红枫谷的门票是旺季60元。开放时间是8:00-17:30。"
    one = TemplateGenerator(model, max_items=1).generate(GenerationRequest(ask("红枫谷门票？"), TRIPLES[::-1]))
    assert one == "电话是0571-1234567。"  # the first of the list given, whatever it is


def test_text_items_first_ones_in_order():
    model = TemplateModel(language="en", closers={"faq": "Anything else?"}, content_budget={"faq": 40})
    request = GenerationRequest(ask("Tell me about parking"), FAQS, language="en")
    assert TemplateGenerator(model, max_items=3).generate(request) == (
        "Parking is free. Breakfast starts at 7. Pets are not allowed. Anything else?"
    )
    assert TemplateGenerator(model, max_items=2).generate(request) == (
        "Parking is free. Breakfast starts at 7. Anything else?"
    )
    reversed_request = GenerationRequest(ask("Tell me about the pool"), FAQS[::-1], language="en")
    assert TemplateGenerator(model, max_items=1).generate(reversed_request) == "The pool closes at 9. Anything else?"


def test_length_budget_keeps_the_best_items_first():
    # budget 8 words: the first answer (3 words) and the second (4 words) fit, the third would not
    model = TemplateModel(language="en", content_budget={"faq": 8})
    reply = TemplateGenerator(model, max_items=4).generate(GenerationRequest(ask("parking?"), FAQS, language="en"))
    assert reply == "Parking is free. Breakfast starts at 7."
    # a first item over the budget is still used whole: a reply always carries the best item
    tight = TemplateModel(language="en", content_budget={"faq": 1})
    assert TemplateGenerator(tight).generate(GenerationRequest(ask("x"), FAQS, language="en")) == "Parking is free."


def test_triples_and_text_together_keep_the_given_items_only(model):
    items = [
        TRIPLES[0],
        Knowledge("f9", "Q? 园区内可以停车。", SourceKind.FAQ, {"body": "园区内可以停车。"}),
        TRIPLES[1],
    ]
    reply = TemplateGenerator(model, max_items=2).generate(GenerationRequest(ask("门票和停车？"), items))
    assert reply.startswith("红枫谷的门票是旺季60元。")
    assert "园区内可以停车" in reply and "8:00-17:30" not in reply


PACKS = [
    Knowledge(
        "p1", "Service name: Sunny 3GB Pack, Type: data add-on, Fee: 7 yuan per month, Data: 3GB", SourceKind.PRODUCT
    ),
    Knowledge(
        "p2", "Service name: Sunny 9GB Pack, Type: data add-on, Fee: 16 yuan per month, Data: 9GB", SourceKind.PRODUCT
    ),
]


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        (
            "which of the two Sunny packs costs less?",
            "The Sunny 3GB Pack costs 7 yuan per month. The Sunny 9GB Pack costs 16 yuan per month.",
        ),
        (
            "what's the difference in data between them",
            "The Sunny 3GB Pack costs 7 yuan per month. The Sunny 3GB Pack includes 3GB. "
            "The Sunny 9GB Pack costs 16 yuan per month. The Sunny 9GB Pack includes 9GB.",
        ),
    ],
)
def test_a_comparison_states_both_named_items_with_their_values(question, reply):
    request = GenerationRequest(ask(question), PACKS, language="en")
    assert TemplateGenerator(TemplateModel(language="en")).generate(request) == reply


def test_a_question_that_compares_nothing_or_one_named_item_is_not_a_comparison_reply():
    plain = TemplateGenerator(TemplateModel(language="en")).generate(
        GenerationRequest(ask("how much is the 3GB pack"), PACKS, language="en")
    )
    assert plain.startswith("Service name: Sunny 3GB Pack") and "costs" not in plain  # the template's usual reply
    faq = Knowledge(
        "f9", "Q: can I switch packs? A: Yes, once a month.", SourceKind.FAQ, {"answer": "Yes, once a month."}
    )
    mixed = TemplateGenerator(TemplateModel(language="en")).generate(
        GenerationRequest(ask("which is better, the 3GB pack or switching?"), [PACKS[0], faq], language="en")
    )
    assert "Sunny 9GB" not in mixed and "once a month" in mixed  # one named item: no two-sided reply


def test_an_account_action_gets_the_action_reply_not_an_item_dump_or_a_bare_ok():
    template = TemplateGenerator(TemplateModel(language="zh", fallback="好的，还有什么可以帮您的吗？"))
    pack = Knowledge("p3", "业务名称：晴天3G包，业务费用：7元/月，办理渠道：APP或营业厅", SourceKind.PRODUCT)
    done = template.generate(GenerationRequest(ask("直接给我开一个"), [pack], language="zh", policy="action"))
    assert done == (
        "这项操作我无法直接为您办理，也不会替您提交。您可以这样自己办理：晴天3G包可以通过APP或营业厅办理。"
        "如需人工办理，我可以为您转接人工客服。"
    )
    bare = template.generate(GenerationRequest(ask("直接给我开一个"), [], language="zh", policy="action"))
    assert bare.startswith("这项操作我无法直接为您办理") and "好的" not in bare
    answer = template.generate(GenerationRequest(ask("晴天3G包多少钱"), [pack], language="zh"))
    assert answer.startswith("业务名称：晴天3G包")  # an answer turn: the template's own reply, as before
