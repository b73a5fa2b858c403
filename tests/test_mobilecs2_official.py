"""MobileCS2 under the organisers' rules equals their own code on our fixtures (``tests/fixtures/mobilecs2/official``).

``expected.json`` was written once by ``make_expected.py`` (command inside) running the organisers' ``reader.py``,
``retrieve_kb.evaluate_ret`` and ``metrics.eval_end_to_end`` on these files; their code is not importable offline
in CI (it needs their repository and model stand-ins), so the table is committed. BERTScore is not compared: the
official bert-base-chinese is not reachable offline.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdial.datasets import mobilecs2, mobilecs2_rules
from ragdial.metrics.challenges.futuredial import Track2Turn, bleu_and_inform, score_track1

OFFICIAL = Path(__file__).parent / "fixtures" / "mobilecs2" / "official"
EXPECTED = json.loads((OFFICIAL / "expected.json").read_text(encoding="utf-8"))
LANGUAGES = ("zh", "en")
TOLERANCE = 1e-6


@pytest.fixture(scope="module", params=LANGUAGES)
def case(request):
    language = request.param
    dataset = mobilecs2.load(OFFICIAL / language / "dev_final_processed.json")
    return language, dataset, EXPECTED[language]


def test_retrieval_corpus_is_their_ret_qa(case) -> None:
    _, dataset, expected = case
    assert [item.text for item in dataset.kb.global_items] == expected["ret_qa"]


def test_gold_indexes_and_scored_turns_are_theirs(case) -> None:
    _, dataset, expected = case
    theirs = {f"{c['id']}:{c['turn_num']}": c["labels"] for c in expected["labels"] if c["labels"] != [-1]}
    ours = {}
    for example in dataset.examples:
        if example.knowledge_ids:
            positions = {
                item.id: i for i, item in enumerate(mobilecs2.track1_candidates(dataset.kb, example.dialog_id))
            }
            ours[example.id] = [positions[i] for i in example.knowledge_ids]
    assert ours == theirs


def test_api_labels_are_theirs(case) -> None:
    _, dataset, expected = case
    by_id = {e.id: e for e in dataset.examples}
    for c in expected["labels"]:
        assert by_id[f"{c['id']}:{c['turn_num']}"].meta["api_label"] == c["api_label"]
    scored = {f"{c['id']}:{c['turn_num']}" for c in expected["labels"]}
    assert {e.id for e in dataset.examples if e.meta["api_label"] != mobilecs2_rules.NOT_SCORED} == scored


@pytest.mark.parametrize("pred", ["pred_track1_good.json", "pred_track1_mixed.json", "pred_track1_random.json"])
def test_track1_recall_equals_their_evaluate_ret(case, pred: str) -> None:
    language, dataset, expected = case
    ranked = mobilecs2.read_track1(OFFICIAL / language / pred, dataset)
    scored = [e for e in dataset.examples if e.knowledge_ids]
    ours = score_track1([e.knowledge_ids for e in scored], [ranked[e.id] for e in scored])
    for k in ("R@1", "R@5", "R@20"):
        assert abs(ours.scores[k] - expected["track1"][pred][k]) <= TOLERANCE, k
    assert "rules:organisers-2024" in ours.signatures["recall"]


def test_track2_gold_fields_are_their_result_file(case) -> None:
    _, dataset, expected = case
    by_id = {e.id: e for e in dataset.examples}
    for gold in expected["track2_gold"]:
        ours = mobilecs2.gold_fields(dataset.kb, by_id[f"{gold['id']}:{gold['turn_num']}"])
        for key in ("用户", "客服", "查询结果"):
            assert ours[key] == gold[key], (gold["id"], gold["turn_num"], key)
        assert mobilecs2_rules.chinese_labels(ours["查询"]) == gold["查询"]


@pytest.mark.parametrize(
    "pred", ["pred_track2_copy-ish.json", "pred_track2_knowledge.json", "pred_track2_generic.json"]
)
def test_track2_bleu_and_inform_equal_their_eval_end_to_end(case, pred: str) -> None:
    language, dataset, expected = case
    generated = mobilecs2.read_track2(OFFICIAL / language / pred, dataset)
    turns = []
    for example in dataset.examples:
        gold = mobilecs2.gold_fields(dataset.kb, example)
        turns.append(Track2Turn(generated[example.id]["客服-生成"], gold["客服"], gold["查询结果"]))
    ours = bleu_and_inform(turns, language)
    assert abs(ours["bleu"].value * 100 - expected["track2"][pred]["BLEU"]) <= TOLERANCE
    assert abs(ours["inform"].value - expected["track2"][pred]["inform"]) <= TOLERANCE


def test_qa_turn_gold_is_the_last_entry_with_its_reply() -> None:
    """A dev [QA] reply repeated in train points at the train turn's entry (their kb_vs_des keeps the last)."""
    dataset = mobilecs2.load(OFFICIAL / "zh" / "dev_final_processed.json")
    example = next(e for e in dataset.examples if e.id == "yl-dev-0002:0")
    assert example.knowledge_ids == ["qa:yl-train-0002:0"]
    own = next(e for e in dataset.examples if e.id == "yl-dev-0001:3")
    assert own.knowledge_ids == ["qa:yl-dev-0001:3"]


def test_missing_product_piece_is_reported_not_scored() -> None:
    dataset = mobilecs2.load(OFFICIAL / "zh" / "dev_final_processed.json")
    example = next(e for e in dataset.examples if e.id == "yl-dev-0003:2")
    assert example.knowledge_ids == ["product:0"]
    assert example.meta["unmatched_gold"] == ["业务名称：云岭尊享88元套餐，业务费用：88元/月"]


def test_a_test_file_adds_its_own_qa_entries(tmp_path: Path) -> None:
    """A file that is neither dev nor train gets its [QA] entries appended after dev and train (our rule)."""
    for name in ("train_final_processed.json", "dev_final_processed.json", "global_kb.json", "qa.json"):
        (tmp_path / name).write_bytes((OFFICIAL / "zh" / name).read_bytes())
    test = {
        "t-1": {
            "log": [
                {"user": "发票怎么开", "system": "在APP账单页可以开电子发票", "api_query": "[QA]", "api_result": ""}
            ],
            "local_kb": [],
        }
    }
    (tmp_path / "test_final_processed.json").write_text(json.dumps(test, ensure_ascii=False), encoding="utf-8")
    dataset = mobilecs2.load(tmp_path, split="test")
    assert dataset.kb.global_items[-1].id == "qa:t-1:0"
    assert dataset.examples[0].knowledge_ids == ["qa:t-1:0"]
    assert len(dataset.kb.global_items) == len(EXPECTED["zh"]["ret_qa"]) + 1


def test_clean_utt_rules() -> None:
    assert mobilecs2_rules.clean_utt("好的。。请看https://a.example/x?y=1 谢谢[微笑]~") == "好的。请看移动官网谢谢"
    assert mobilecs2_rules.clean_utt("详情页abc查看") == "详情页查看"
    assert mobilecs2_rules.clean_intent("查询本月月租") == "查询用户已办理的业务"
    assert mobilecs2_rules.clean_intent("查询流量信息") == "查询其他信息"
    assert mobilecs2_rules.api_label("查询特定业务信息，办理") == mobilecs2_rules.NOT_SCORED
    assert mobilecs2_rules.api_label("查询特定业务信息，查询用户已办理的业务") == 0
    assert mobilecs2_rules.api_label("search for products information") == 1


def test_writers_never_touch_gold_fields(tmp_path: Path) -> None:
    """``generate batch`` sets ``example.response`` to the generated reply; the track-2 gold must not follow it."""
    dataset = mobilecs2.load(OFFICIAL / "zh" / "dev_final_processed.json")
    expected = {f"{g['id']}:{g['turn_num']}": g for g in EXPECTED["zh"]["track2_gold"]}
    for example in dataset.examples:
        example.response = "生成的回复"
    generated = {e.id: "生成的回复" for e in dataset.examples}
    path = mobilecs2.write_track2(tmp_path / "track2.json", dataset.kb, dataset.examples, generated)
    for key, record in mobilecs2.read_track2(path, dataset).items():
        assert record["客服"] == expected[key]["客服"] != record["客服-生成"]
        assert record["查询结果"] == expected[key]["查询结果"]


def test_qa_dialogs_option_names_the_files(tmp_path: Path) -> None:
    """``-o qa_dialogs=a.json,b.json`` (a string from the command line) or a list: only those files' [QA] turns."""
    train = OFFICIAL / "zh" / "train_final_processed.json"
    only_train = mobilecs2.load(OFFICIAL / "zh" / "dev_final_processed.json", qa_dialogs=str(train))
    synthetic = [k for k in only_train.kb.global_items if k.fields.get("synthetic")]
    assert {k.fields["dialog"] for k in synthetic} == {"yl-train-0002", "yl-train-0004"}
    own = next(e for e in only_train.examples if e.id == "yl-dev-0001:3")
    assert own.knowledge_ids == [] and own.meta["unmatched_gold"]  # its entry is not in this corpus


def test_bad_rule_options_are_one_clear_error(tmp_path: Path) -> None:
    from ragdial.errors import DataFormatError, OptionError

    dev = OFFICIAL / "zh" / "dev_final_processed.json"
    with pytest.raises(OptionError, match="rules must be one of organisers, faq-answer"):
        mobilecs2.load(dev, rules="official")
    with pytest.raises(DataFormatError, match=r"nope\.json"):
        mobilecs2.load(dev, qa_dialogs=[tmp_path / "nope.json"])
