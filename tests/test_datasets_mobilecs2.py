"""MobileCS2: the organisers' gold split, knowledge ids, the track-1/2 files and the bundled demo KB."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragdial import datasets
from ragdial.datasets import mobilecs2
from ragdial.errors import DataFormatError
from ragdial.schema import SourceKind, Speaker


@pytest.fixture(scope="module")
def zh(fixtures: Path):
    return mobilecs2.load(fixtures / "mobilecs2" / "zh" / "dev_final_processed.json", rules="faq-answer")


@pytest.fixture(scope="module")
def en(fixtures: Path):
    return mobilecs2.load(fixtures / "mobilecs2" / "en" / "dev_final_processed.json", rules="faq-answer")


def by_id(dataset, example_id):
    return next(e for e in dataset.examples if e.id == example_id)


# --------------------------------------------------------------------------- the organisers' split


@pytest.mark.parametrize(
    ("api_result", "pieces"),
    [
        ("业务名称：A，费用：1元，业务名称：B，费用：2元", ["业务名称：A，费用：1元", "业务名称：B，费用：2元"]),
        ("业务名称：A。业务名称：B", ["业务名称：A", "业务名称：B"]),
        ("剩余流量：2GB，业务名称：B", ["剩余流量：2GB", "业务名称：B"]),
        ("业务名称：A，业务名称：A", ["业务名称：A"]),
        ("账户余额：3元", ["账户余额：3元"]),
        # '，业务名称：' wins over '。业务名称：' when both occur, as in reader.split_api_result
        ("业务名称：A，业务名称：B。业务名称：C", ["业务名称：A", "业务名称：B。业务名称：C"]),
    ],
)
def test_split_api_result_as_organisers(api_result: str, pieces: list[str]) -> None:
    assert mobilecs2.split_api_result(api_result) == pieces


BODY = st.text(st.sampled_from("流量费用元GB：，。0123"), max_size=12).filter(lambda t: "业务名称" not in t)


@given(st.lists(BODY, min_size=1, max_size=5, unique=True), st.sampled_from(["，", "。"]))
def test_joined_products_split_back(bodies: list[str], joiner: str) -> None:
    pieces = ["业务名称：" + body for body in bodies]
    assert mobilecs2.split_api_result(joiner.join(pieces)) == pieces


def test_split_english_pieces() -> None:
    text = "Service name: A, Fee: 1, Service name: B"
    assert mobilecs2.split_api_result(text, "en") == ["Service name: A, Fee: 1", "Service name: B"]


@pytest.mark.parametrize(
    ("knowledge", "pieces"),
    [
        ("参考知识：业务名称：A，费用：1元，业务名称：B", ["A，费用：1元", "B"]),
        ("问题：怎么开发票, 答案：在APP开", ["在APP开"]),
        ("业务名称：A", ["A"]),
        ("", [""]),
    ],
)
def test_inform_pieces_as_organisers_metrics(knowledge: str, pieces: list[str]) -> None:
    assert mobilecs2.inform_pieces(knowledge) == pieces


# --------------------------------------------------------------------------- loading


def test_fixture_counts_and_language(zh, en) -> None:
    assert zh.language == "zh" and en.language == "en"
    assert zh.split == "dev" and zh.format == "mobilecs2"
    assert len(zh.dialogs) == 6 and len(zh.examples) == 23
    assert len(zh.kb.by_source(SourceKind.PRODUCT)) == 15
    assert len(zh.kb.by_source(SourceKind.FAQ)) == 15
    assert len(en.dialogs) == 3 and len(en.examples) == 7


def test_examples_are_per_turn_with_context_up_to_the_user_turn(zh) -> None:
    example = by_id(zh, "ys-0001:2")
    assert example.turn_index == 5 and len(example.context) == 5
    assert example.context[-1].speaker == Speaker.USER and example.context[-1].text == "有没有大一点的包"
    assert example.response.startswith("推荐8GB加油包")
    assert example.api_query == "查询特定业务信息" and example.needs_knowledge is True
    assert by_id(zh, "ys-0001:4").needs_knowledge is False


def test_knowledge_ids_and_scopes(zh) -> None:
    local = zh.kb.get("ys-0001:local:2")
    assert local.source == SourceKind.USER_PROFILE and local.scope == "ys-0001"
    assert local.fields["attributes"] == {"剩余通用流量": "2.1GB", "已用流量": "15.9GB"}
    product = zh.kb.get("product:4")
    assert product.is_global and product.fields["name"] == "远山银发卡"
    faq = zh.kb.get("faq:7")
    assert faq.text == "问题：怎么开发票, 答案：在远山APP账单页面可以开电子发票。"
    assert [k.id for k in zh.kb.candidates("ys-0002")][:2] == ["ys-0002:local:0", "ys-0002:local:1"]
    assert len(zh.kb.candidates("ys-0002")) == 2 + 30


def test_gold_pieces_map_to_items(zh) -> None:
    assert by_id(zh, "ys-0001:0").knowledge_ids == ["ys-0001:local:0", "ys-0001:local:1"]
    assert by_id(zh, "ys-0001:2").knowledge_ids == ["product:6", "product:7"]
    assert by_id(zh, "ys-0003:2").knowledge_ids == ["product:12", "product:13"]  # joined with 。业务名称：
    assert by_id(zh, "ys-0004:1").knowledge_ids == ["ys-0004:local:1", "ys-0004:local:2"]  # repeated piece


def test_faq_gold_is_the_entry_whose_answer_is_the_response(zh) -> None:
    assert by_id(zh, "ys-0002:1").knowledge_ids == ["faq:7"]
    assert by_id(zh, "ys-0005:0").knowledge_ids == ["faq:9"]  # api_result given as 答案：...
    assert by_id(zh, "ys-0002:2").knowledge_ids == ["faq:1"]  # same answer up to case and spaces


def test_faq_turn_without_an_answer_in_the_faq(zh) -> None:
    example = by_id(zh, "ys-0003:4")
    assert example.knowledge_ids == [] and example.meta["unmatched_gold"] == [example.response]


def test_unmatched_gold_piece_is_kept(zh) -> None:
    example = by_id(zh, "ys-0006:0")
    assert example.knowledge_ids == ["product:4"]
    assert example.meta["unmatched_gold"] == ["业务名称：远山青春卡，业务费用：24元/月"]
    assert example.meta["scored_source"] == "product"


def test_scored_source_follows_the_organisers(zh) -> None:
    assert by_id(zh, "ys-0004:0").meta["scored_source"] == "user_profile"  # 查询用户已办理的业务，取消
    assert by_id(zh, "ys-0001:3").meta["scored_source"] is None  # 办理
    assert by_id(zh, "ys-0002:1").meta["scored_source"] == "faq"


def test_unlabelled_bare_dialogs(fixtures: Path) -> None:
    dataset = mobilecs2.load(fixtures / "mobilecs2" / "zh" / "unlabel.json")
    assert [e.needs_knowledge for e in dataset.examples] == [None, None]
    assert all(e.api_query is None for e in dataset.examples)


def test_registry_and_folder_with_split(fixtures: Path) -> None:
    dataset = datasets.load("mobilecs2", fixtures / "mobilecs2" / "en", split="dev")
    assert len(dataset.examples) == 7 and dataset.format == "mobilecs2"


def test_kb_files_can_be_named(fixtures: Path, tmp_path: Path) -> None:
    source = fixtures / "mobilecs2" / "en"
    dialogs = tmp_path / "d.json"
    dialogs.write_bytes((source / "dev_final_processed.json").read_bytes())
    with pytest.raises(DataFormatError, match="no global KB found"):
        mobilecs2.load(dialogs)
    dataset = mobilecs2.load(dialogs, global_kb=source / "global_kb.json", faq=source / "qa.json")
    faq = dataset.kb.by_source(SourceKind.FAQ)
    assert len([k for k in faq if not k.fields.get("synthetic")]) == 6  # + one synthetic entry per [QA] turn
    assert len(faq) == 6 + sum(1 for e in dataset.examples if e.api_query == "[QA]")


# --------------------------------------------------------------------------- writing back


@pytest.mark.parametrize(
    ("folder", "name"), [("zh", "dev_final_processed.json"), ("zh", "unlabel.json"), ("en", "dev_final_processed.json")]
)
def test_dataset_round_trip(fixtures: Path, tmp_path: Path, folder: str, name: str) -> None:
    source = fixtures / "mobilecs2" / folder
    dataset = mobilecs2.load(source / name)
    mobilecs2.write_dataset(tmp_path, dataset, dialogs_name=name)
    for file in (name, "global_kb.json", "qa.json"):
        assert json.loads((tmp_path / file).read_text("utf-8")) == json.loads((source / file).read_text("utf-8"))


def test_track1_indexes_follow_the_official_order(zh, tmp_path: Path) -> None:
    out = mobilecs2.write_track1(tmp_path / "track1.json", zh.kb, zh.examples)
    records = {(r["id"], r["turn_num"]): r["top20_id"] for r in json.loads(out.read_text("utf-8"))}
    assert records[("ys-0001", "2")] == [6, 7]  # products first
    assert records[("ys-0002", "1")] == [15 + 7]  # then FAQ entries
    assert records[("ys-0001", "0")] == [30, 31]  # then the dialog's local_kb
    assert len(records) == len(zh.examples)


def test_track1_round_trip(zh, tmp_path: Path) -> None:
    rankings = {e.id: [k.id for k in zh.kb.candidates(e.dialog_id)][::-1][:25] for e in zh.examples}
    out = mobilecs2.write_track1(tmp_path / "track1.json", zh.kb, zh.examples, rankings)
    back = mobilecs2.read_track1(out, zh)
    assert back == {key: ids[:20] for key, ids in rankings.items()}
    assert rankings["ys-0001:0"][0] == "faq:14"  # the last global item: index 15 products + 14
    assert mobilecs2.read_track1(out)["ys-0001:0"][0] == "29"  # without the dataset: the raw indexes


def test_track1_writer_rejects_a_foreign_item(zh, tmp_path: Path) -> None:
    with pytest.raises(DataFormatError) as err:
        mobilecs2.write_track1(tmp_path / "t.json", zh.kb, zh.examples[:1], {zh.examples[0].id: ["ys-0002:local:0"]})
    assert err.value.field == "top20_id" and err.value.record == zh.examples[0].id
    assert not (tmp_path / "t.json").exists()


def test_track2_round_trip_carries_gold_beside_generated(zh, tmp_path: Path) -> None:
    generated = {e.id: f"生成：{e.response}" for e in zh.examples}
    queries = {e.id: e.api_query or "" for e in zh.examples}
    out = mobilecs2.write_track2(tmp_path / "track2.json", zh.kb, zh.examples, generated, queries)
    back = mobilecs2.read_track2(out, zh)
    assert set(back) == {e.id for e in zh.examples}
    record = back["ys-0001:2"]
    assert record["客服-生成"] == generated["ys-0001:2"] and record["客服"] == by_id(zh, "ys-0001:2").response
    assert record["查询"] == record["查询-生成"] == "查询特定业务信息"
    assert record["用户"] == "有没有大一点的包" and record["turn_num"] == "2"
    qa = back["ys-0002:1"]
    assert qa["查询结果"] == zh.kb.get("faq:7").text
    assert mobilecs2.inform_pieces(qa["查询结果"]) == [qa["客服"]]


def test_track2_reads_the_organisers_nested_result(tmp_path: Path) -> None:
    turn = {"用户": "u", "客服": "s", "查询": "", "查询结果": "", "查询-生成": "", "客服-生成": "g", "bleu": 3.0}
    path = write(tmp_path / "result.json", [[turn, turn], [turn]])
    back = mobilecs2.read_track2(path)
    assert list(back) == ["0:0", "0:1", "1:0"] and back["1:0"]["客服-生成"] == "g"
    broken = write(tmp_path / "broken.json", [[turn], [{**turn, "客服-生成": None}]])
    with pytest.raises(DataFormatError, match="expected str") as err:
        mobilecs2.read_track2(broken)
    assert (err.value.record, err.value.field) == ("1, turn 0", "客服-生成")


def test_track2_needs_every_turn(zh, tmp_path: Path) -> None:
    with pytest.raises(DataFormatError, match="no generated response") as err:
        mobilecs2.write_track2(tmp_path / "t2.json", zh.kb, zh.examples, {})
    assert err.value.field == "客服-生成"


# --------------------------------------------------------------------------- bad submission files


def write(path: Path, data) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("records", "record", "field", "message"),
    [
        ([{"id": "ys-0001", "turn_num": "0", "top20_id": [999]}], 0, "top20_id", "unknown knowledge index 999"),
        ([{"id": "ys-0001", "turn_num": "9", "top20_id": []}], 0, "turn_num", "no turn 9"),
        ([{"id": "nope", "turn_num": 0, "top20_id": []}], 0, "turn_num", "dialog 'nope'"),
        ([{"id": "ys-0001", "top20_id": [1]}], 0, "turn_num", "required field is missing"),
        ([{"id": "ys-0001", "turn_num": "0", "top20_id": ["1"]}], 0, "top20_id", "integer"),
        ([{"id": "ys-0001", "turn_num": "0", "top20_id": list(range(21))}], 0, "top20_id", "at most 20"),
        ([{"id": "ys-0001", "turn_num": "0", "top20_id": []}] * 2, 1, "turn_num", "appears twice"),
    ],
)
def test_bad_track1_files(zh, tmp_path: Path, records, record, field, message) -> None:
    path = write(tmp_path / "bad.json", records)
    with pytest.raises(DataFormatError, match=message) as err:
        mobilecs2.read_track1(path, zh)
    assert (err.value.path, err.value.record, err.value.field) == (str(path), record, field)


def test_bad_track2_files(zh, tmp_path: Path) -> None:
    path = write(tmp_path / "bad.json", [{"id": "ys-0001", "turn_num": "0", "客服": "x"}])
    with pytest.raises(DataFormatError, match="required field is missing") as err:
        mobilecs2.read_track2(path, zh)
    assert err.value.field == "客服-生成" and err.value.record == 0
    twice = [{"id": "ys-0001", "turn_num": "0", "客服-生成": "a"}] * 2
    with pytest.raises(DataFormatError, match="appears twice"):
        mobilecs2.read_track2(write(tmp_path / "twice.json", twice), zh)


@pytest.mark.parametrize(
    ("dialogs", "record", "field", "message"),
    [
        ({"d1": {"log": [], "local_kb": []}}, "d1", "log", "empty dialog"),
        ({"d1": {"log": [{"user": "a"}], "local_kb": []}}, "d1, turn 0", "system", "required field is missing"),
        ({"d1": {"log": [{"user": "a", "system": "b", "api_query": 3}]}}, "d1, turn 0", "api_query", "expected str"),
        ({"d1": {"local_kb": []}}, "d1", "log", "required field is missing"),
        ({"d1": {"log": [{"user": "a", "system": "b"}], "local_kb": [1]}}, "d1, local_kb 0", None, "expected str"),
    ],
)
def test_bad_dialog_files(fixtures: Path, tmp_path: Path, dialogs, record, field, message) -> None:
    path = write(tmp_path / "dialogs.json", dialogs)
    kb = fixtures / "mobilecs2" / "zh"
    with pytest.raises(DataFormatError, match=message) as err:
        mobilecs2.load(path, global_kb=kb / "global_kb.json", faq=kb / "qa.json")
    assert (err.value.path, err.value.record, err.value.field) == (str(path), record, field)


# --------------------------------------------------------------------------- the bundled demo KB


@pytest.mark.parametrize("language", ["zh", "en"])
def test_demo_kb_sizes(language: str) -> None:
    demo = mobilecs2.load_demo(language)
    assert demo.language == language and demo.split == "demo"
    assert len(demo.kb.by_source(SourceKind.FAQ)) >= 40
    assert len(demo.kb.by_source(SourceKind.PRODUCT)) >= 30
    profiles = [d.id for d in demo.dialogs if demo.kb.local_items(d.id)]
    assert len(profiles) >= 5
    assert 5 <= len(demo.dialogs) <= 10
    keys = ("业务名称", "账户余额", "已用通用流量") if language == "zh" else ("Service name", "Balance", "Data used")
    for dialog_id in profiles:  # every profile says plan, balance and data used
        text = " ".join(k.text for k in demo.kb.local_items(dialog_id))
        assert all(key in text for key in keys), dialog_id


@pytest.mark.parametrize("language", ["zh", "en"])
def test_demo_gold_is_fully_grounded(language: str) -> None:
    demo = mobilecs2.load_demo(language)
    for example in demo.examples:
        assert not example.meta["unmatched_gold"], example.id
        if example.meta["scored_source"]:
            assert example.knowledge_ids, example.id
            sources = {demo.kb.get(i).source.value for i in example.knowledge_ids}
            assert sources == {example.meta["scored_source"]}, example.id


def test_demo_languages_are_parallel() -> None:
    zh, en = mobilecs2.load_demo("zh"), mobilecs2.load_demo("en")
    assert [e.id for e in zh.examples] == [e.id for e in en.examples]
    assert [e.knowledge_ids for e in zh.examples] == [e.knowledge_ids for e in en.examples]
    assert len(zh.kb) == len(en.kb)


def test_demo_rejects_other_languages() -> None:
    with pytest.raises(ValueError, match="zh"):
        mobilecs2.load_demo("fr")


def test_dialog_extras_round_trip(fixtures: Path, tmp_path: Path) -> None:
    kb = fixtures / "mobilecs2" / "zh"
    dialogs = {
        "a": {"log": [{"user": "u", "system": "s", "api_query": "", "api_result": "", "note": 1}], "topic": "x"},
        "b": [{"user": "u2", "system": "s2"}],
    }
    path = write(tmp_path / "in.json", dialogs)
    dataset = mobilecs2.load(path, global_kb=kb / "global_kb.json", faq=kb / "qa.json")
    assert dataset.examples[0].meta["turn_extra"] == {"note": 1}
    assert mobilecs2.dialogs_record(dataset) == dialogs


def test_the_name_attribute_every_module_reads_is_the_formats_product_head():
    from ragdial.datasets.mobilecs2 import MARKERS, text_fields
    from ragdial.schema import NAME_KEYS, name_attribute

    for language, key in zip(("zh", "en"), NAME_KEYS, strict=True):
        assert MARKERS[language].head.startswith(key)
    assert name_attribute(text_fields("业务名称：夜读卡，业务费用：3元/月")) == "夜读卡"
    assert name_attribute(text_fields("Service name: Night Reader, Fee: 3 yuan per month")) == "Night Reader"
    assert name_attribute(text_fields("账户余额：5元")) == ""


def test_the_type_attribute_is_the_formats_type_field():
    from ragdial.datasets.mobilecs2 import text_fields
    from ragdial.pipeline.answer_features import item_types
    from ragdial.schema import Knowledge, SourceKind, type_attribute

    assert type_attribute(text_fields("业务名称：夜读卡，业务类型：增值业务，业务费用：3元/月")) == "增值业务"
    assert type_attribute(text_fields("Service name: Night Reader, Type: add-on, Fee: 3 yuan per month")) == "add-on"
    assert type_attribute(text_fields("业务名称：夜读卡，业务费用：3元/月")) == ""
    reader = Knowledge("product:0", "Service name: Night Reader, Type: add-on, Fee: 3 yuan", SourceKind.PRODUCT)
    assert item_types([reader]) == {"night reader": "add-on"}
