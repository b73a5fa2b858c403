"""The learned act model next to the rule layer: trained on the banks' train + dev lines (never test), it hears
acts the word lists miss, but it never turns a question or an unclear turn into the yes that books."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from ragdial.task import act_model as M
from ragdial.task.acts import Context, understand
from ragdial.task.db import TravelDB
from ragdial.task.dbgen import generate

TODAY = dt.date(2026, 12, 1)
READ_BACK = Context(
    "train", "confirm_booking", [{"code": "G1", "price": 500, "dep_time": "08:00"}], {"date": "2026-12-02"}
)


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    if not M.TRAIN_BANKS[0].is_file():
        pytest.skip("the training bank benchmarks/data/task_utterances_train.jsonl is not there")
    path = tmp_path_factory.mktemp("db") / "travel.sqlite"
    generate(path, seed=7, start=TODAY, days=3)
    return M.reader_for(TravelDB(path).gazetteer(), TODAY, cache=tmp_path_factory.mktemp("cache"))


def test_training_reads_no_test_line():
    rows = M.bank_rows()
    assert rows and {r["split"] for r in rows} <= {"train", "dev"}


def test_the_model_is_saved_and_loads_the_same(reader, tmp_path):
    model = reader.model
    model.save(tmp_path / "act_model")
    assert {p.name for p in tmp_path.iterdir()} == {"act_model.json", "act_model.npz"}
    loaded = M.ActModel.load(tmp_path / "act_model", reader.gaz)
    items = [("先别订", READ_BACK, ["deny"]), ("好的", READ_BACK, ["confirm"])]  # (the rules' reading: a no)
    for got, want in zip(loaded.probabilities(items), model.probabilities(items), strict=True):
        assert got == pytest.approx(want)
    assert max(model.probabilities(items)[0].items(), key=lambda kv: kv[1])[0] == "deny"


def test_a_new_process_loads_the_cached_model_instead_of_training(reader, tmp_path, monkeypatch):
    monkeypatch.setattr(M, "_CACHE", {})  # as in a new process
    monkeypatch.setattr(M, "training_items", lambda *a: pytest.fail("trained again"))
    digest_files = []
    monkeypatch.setattr(
        M.ActModel, "load", classmethod(lambda cls, path, gaz=None: digest_files.append(path) or reader.model)
    )
    again = M.reader_for(reader.gaz, TODAY, cache=tmp_path / "task")
    assert again is not None and again.model is reader.model and digest_files[0].name.startswith("act_model-")


def test_a_malformed_bank_line_is_named_and_a_saved_model_of_another_shape_is_not_read(reader, tmp_path):
    bank = tmp_path / "bank.jsonl"
    good = '{"split": "train", "text": "好的", "context": null, "acts": [{"act": "confirm", "slots": {}}]}'
    bank.write_text(good + "\n" + '{"split": "test", "text": 5}\n', encoding="utf-8")
    assert [r["text"] for r in M.bank_rows([bank])] == ["好的"]  # a test line is not checked, nor kept
    bank.write_text(good + "\n" + '{"split": "dev", "text": "行", "acts": [{"slots": {}}]}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bank\.jsonl: line 2: not a bank line"):
        M.bank_rows([bank])
    reader.model.save(tmp_path / "act_model")
    saved = tmp_path / "act_model.json"
    data = json.loads(saved.read_text(encoding="utf-8"))
    saved.write_text(json.dumps({**data, "tokens": ["好的"]}), encoding="utf-8")
    with pytest.raises(TypeError, match="tokens: expected an object, found list"):  # reader_for trains again
        M.ActModel.load(tmp_path / "act_model", reader.gaz)


def test_a_question_or_an_unclear_turn_is_never_a_yes(reader):
    for text in ("什么", "额", "呃呃呃", "这个要多少钱？"):
        acts = [a.act for a in reader(text, READ_BACK)]
        assert "confirm" not in acts, (text, acts)


def test_agreement_keeps_the_rules_slots_and_inform_vs_modify(reader):
    ctx = Context("flight", "choose_offer", [], {"domain": "flight", "dep_city": "北京", "arr_city": "上海"})
    text = "算了还是坐高铁吧"
    rules = understand(text, ctx, reader.gaz, TODAY)
    assert [a.to_dict() for a in reader(text, ctx)] == [a.to_dict() for a in rules]


def test_combine_follows_a_sure_model_and_fills_slots_from_the_rules():
    rule = [M.A.Act("inform", {"city": "上海"})]
    out = M.combine(rule, {"out_of_scope": 0.9, "inform": 0.1}, 0.0, lambda name: {"x": 1}, "上海明天下雨吗")
    assert [a.to_dict() for a in out] == [{"act": "out_of_scope", "slots": {}}]
    rule = [M.A.Act("out_of_scope")]
    out = M.combine(rule, {"deny": 0.9, "out_of_scope": 0.05}, 0.0, lambda name: {}, "先别")
    assert [a.act for a in out] == ["deny"]
    out = M.combine(rule, {"confirm": 0.7}, 0.0, lambda name: {}, "订一下")  # a yes needs 0.8
    assert [a.act for a in out] == ["out_of_scope"]
    out = M.combine(rule, {"select": 0.6}, 0.0, lambda name: {"ordinal": 2}, "要中间那个")
    assert [a.to_dict() for a in out] == [{"act": "select", "slots": {"ordinal": 2}}]
