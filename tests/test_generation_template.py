"""The template generator: patterns learned from a fixture, values copied verbatim, streaming, save/load."""

from __future__ import annotations

import threading

import pytest

from ragdial.datasets import kdconv
from ragdial.errors import DataFormatError
from ragdial.generation.base import GenerationRequest
from ragdial.generation.template import TemplateGenerator, TemplateModel, central_reply
from ragdial.schema import Example, Knowledge, KnowledgeBase, SourceKind, Speaker, Turn


@pytest.fixture()
def travel(fixtures):
    return kdconv.load(fixtures / "generation" / "travel_dialogs.json")


@pytest.fixture()
def generator(travel):
    return TemplateGenerator.train(travel.examples, travel.kb, "zh")


def ask(text: str) -> list[Turn]:
    return [Turn(Speaker.USER, text)]


def test_learns_attribute_patterns_and_fallback(generator):
    model = generator.model
    assert model.attribute_patterns["门票"] == "{entity}的门票是{value}。"
    assert model.attribute_patterns["开放时间"] == "开放时间是{value}。"
    assert "地址" not in model.attribute_patterns  # seen once: below the minimum count
    assert model.fallback == "不客气。"


def test_fallback_is_the_central_reply_not_the_most_frequent():
    # "不客气！" is the most frequent reply without knowledge, but it shares no character with the typical one (a
    # question back); the fallback is the reply sharing most characters with the others
    questions = ["那你知道它是哪年建成的吗？", "你知道它是哪年开放的吗？", "那它是哪年修建的呢？", "它是哪年建的？"]
    replies = ["不客气！"] * 2 + questions
    examples = [
        Example(f"d:{i}", "d", 1, ask("好的。"), needs_knowledge=False, response=r) for i, r in enumerate(replies)
    ]
    model = TemplateGenerator.train(examples, KnowledgeBase([]), "zh").model
    assert model.fallback == "那你知道它是哪年建成的吗？"
    assert central_reply(replies, "zh") == model.fallback
    assert central_reply(["不客气！"], "zh") is None  # too few to choose from


def test_learns_an_opening_clause_for_triple_replies():
    # three of four replies open with "是的，"; "60元，" carries the value, so it is no opening clause
    items = [
        kdconv.triple("红枫谷", "门票", "60元"),
        kdconv.triple("白云寺", "地址", "山顶"),
        kdconv.triple("湖", "电话", "123"),
    ]
    said = [("是的，门票60元。", 0), ("是的，在山顶。", 1), ("是的，电话是123。", 2), ("60元，不贵。", 0)]
    examples = [
        Example(f"d:{n}", "d", 1, ask("问"), needs_knowledge=True, knowledge_ids=[items[i].id], response=reply)
        for n, (reply, i) in enumerate(said)
    ]
    generator = TemplateGenerator.train(examples, KnowledgeBase(items), "zh")
    assert generator.model.leads["kg_triple"] == "是的，"
    reply = generator.generate(GenerationRequest(ask("电话多少？"), [kdconv.triple("塔", "电话", "456")]))
    assert reply.startswith("是的，") and "456" in reply


def test_values_of_one_attribute_form_one_sentence(generator):
    items = [kdconv.triple("红枫谷", "门票", "旺季60元"), kdconv.triple("红枫谷", "门票", "淡季40元")]
    reply = generator.generate(GenerationRequest(ask("门票多少钱？"), items))
    assert reply == "红枫谷的门票是旺季60元、淡季40元。"


def test_fills_pattern_with_value_verbatim(generator):
    item = kdconv.triple("红枫谷", "门票", "旺季60元，淡季40元")
    reply = generator.generate(GenerationRequest(ask("红枫谷门票多少钱？"), [item]))
    assert reply == "红枫谷的门票是旺季60元，淡季40元。"


def test_unknown_attribute_uses_generic_pattern(generator):
    item = kdconv.triple("红枫谷", "电话", "0571-1234567")
    reply = generator.generate(GenerationRequest(ask("电话多少？"), [item]))
    assert "0571-1234567" in reply


def test_no_knowledge_gives_learned_fallback(generator):
    assert generator.generate(GenerationRequest(ask("好的，再见。"))) == "不客气。"


def test_long_value_is_cut_to_clauses_near_the_question(generator):
    value = "园内有一座古塔。湖边种满了垂柳。夜晚有灯光喷泉表演。南门附近可以租自行车。" * 3
    item = kdconv.triple("红枫谷", "Information", value)
    reply = generator.generate(GenerationRequest(ask("晚上有喷泉表演吗？"), [item]))
    assert "夜晚有灯光喷泉表演" in reply
    assert len(reply) < len(value)


def test_text_knowledge_is_copied():
    faq = Knowledge(
        "f1",
        "Is there parking? Yes, free parking is on site.",
        SourceKind.FAQ,
        {"body": "Yes, free parking is on site."},
    )
    generator = TemplateGenerator(TemplateModel(language="en", closers={"faq": "Anything else?"}))
    reply = generator.generate(GenerationRequest(ask("Can I park there?"), [faq], language="en"))
    assert reply == "Yes, free parking is on site. Anything else?"


def test_streams_words_and_respects_max_tokens_stop_and_cancel(generator):
    item = kdconv.triple("云松山", "开放时间", "8:00-17:30")
    request = GenerationRequest(ask("几点开门？"), [item])
    pieces = list(generator.stream(request))
    assert len(pieces) > 3 and "".join(pieces) == "开放时间是8:00-17:30。"
    request.max_tokens = 3
    assert list(generator.stream(request)) == ["开", "放", "时"]
    request.max_tokens, request.stop = 50, ["是"]
    assert generator.generate(request) == "开放时间"
    request.stop, request.cancel = [], threading.Event()
    stream = generator.stream(request)
    assert next(stream) == "开"
    request.cancel.set()
    assert list(stream) == []


def test_save_and_load_round_trip(generator, tmp_path):
    path = generator.save(tmp_path / "template.json")
    loaded = TemplateGenerator.load(path)
    assert loaded.model == generator.model


def test_load_rejects_other_json(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"language": "zh"}', encoding="utf-8")
    with pytest.raises(DataFormatError, match="format"):
        TemplateGenerator.load(path)
