"""The simulated user's phrases sorted from a hand-written utterance bank: only the dev half, Chinese lines only,
confirm/deny only as an answer to the booking question, the value cut out of each choice template, the date cut out
of a date change, booking questions by domain, built-in phrases for a kind the bank lacks."""

from __future__ import annotations

import json
import random

from ragdial.task.manager import _price_text
from ragdial.task.phrases import BUILT_IN, Phrases


def row(text, acts, split="dev", open_question=None):
    return {"text": text, "acts": acts, "split": split, "context": {"open_question": open_question}}


def act(name, **slots):
    return {"act": name, "slots": slots}


BANK = [
    row("行，就这么订", [act("confirm")], open_question="confirm_booking"),
    row("好的呀", [act("confirm")]),  # no booking question open: not a confirmation
    row("算了不订了", [act("deny")], open_question="confirm_booking"),
    row("不用了吧", [act("deny")], open_question="ask_date"),
    row("多谢啦", [act("thanks")]),
    row("哈喽", [act("greeting")]),
    row("今天股市怎么样", [act("out_of_scope")]),
    row("我那张机票订好了没", [act("ask_about_booking", domain="flight")]),
    row("订单还在吗", [act("ask_about_booking")]),
    row("要第二个", [act("select", ordinal=2)]),
    row("就MU5101吧", [act("select", code="MU5101")]),
    row("480的那个吧", [act("select", price=480)]),
    row("汉庭那家", [act("select", brand="汉庭酒店")]),
    row("武侯区那家", [act("select", district="武侯区")]),
    row("挑个最便宜的", [act("select", feature="cheapest")]),
    row("换成后天吧", [act("modify", date="2026-11-25")]),
    row("Thanks a lot", [act("thanks")]),  # English: the simulated user speaks Chinese
    row("谢谢你哦", [act("thanks")], split="test"),  # the locked half
]


def test_the_dev_half_is_sorted_by_what_each_line_does(tmp_path):
    path = tmp_path / "bank.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in BANK) + "\n\n", encoding="utf-8")
    phrases = Phrases.load(path)
    kinds = phrases.by_kind
    assert kinds["confirm"] == ["行，就这么订"]
    assert kinds["deny"] == ["算了不订了"]
    assert kinds["thanks"] == ["多谢啦"]
    assert kinds["greeting"] == ["哈喽"]
    assert kinds["oos"] == ["今天股市怎么样"]
    assert kinds["ask_booking"] == ["订单还在吗"]
    assert phrases.ask_by_domain == {"flight": ["我那张机票订好了没"]}
    assert kinds["select_ordinal"] == ["要第{n}个"]
    assert kinds["select_code"] == ["就{code}吧"]
    assert kinds["select_price"] == ["{price}的那个吧"]
    assert kinds["select_brand"] == ["{brand}那家"]
    assert kinds["select_district"] == ["{district}那家"]
    assert kinds["select_cheapest"] == ["挑个最便宜的"]
    assert kinds["modify_date"] == ["换成{date}吧"]
    assert phrases.source == f"{path} (dev half)"


def test_a_kind_the_bank_lacks_keeps_the_built_in_phrases(tmp_path):
    path = tmp_path / "bank.jsonl"
    path.write_text(json.dumps(row("多谢啦", [act("thanks")]), ensure_ascii=False) + "\n", encoding="utf-8")
    phrases = Phrases.load(path)
    assert phrases.by_kind["thanks"] == ["多谢啦"] and phrases.by_kind["confirm"] == sorted(BUILT_IN["confirm"])
    assert Phrases.load(tmp_path / "missing.jsonl").source == "built-in"
    rng = random.Random(0)
    assert phrases.pick("thanks", rng) == "多谢啦"
    assert phrases.ask_booking("hotel", rng) in BUILT_IN["ask_booking"]


def test_the_budget_is_said_in_the_dialog_language():
    assert _price_text(500, "zh") == "500元以内"
    assert _price_text(500, "en") == "up to 500 yuan"
