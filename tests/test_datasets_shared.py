"""Every folder of the shared benchmark data loads with the counts its README gives, and official files round-trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import shared_path
from ragdial import datasets
from ragdial.datasets import dstc, kdconv, smp2017
from ragdial.schema import SourceKind

pytestmark = pytest.mark.shared_data


@pytest.fixture(scope="module")
def dstc11_val(shared_data: Path):
    return datasets.load("dstc11", shared_path(shared_data, "dstc11_track5"), "val")


def test_dstc11_val_counts(dstc11_val) -> None:
    stats = dstc11_val.stats()
    assert stats["examples"] == 4173
    assert stats["knowledge_seeking"] == 2129
    assert dstc11_val.format == "dstc11"


def test_dstc11_knowledge_has_faqs_and_review_sentences(dstc11_val) -> None:
    kb = dstc11_val.kb
    entities = {(k.fields["domain"], k.fields["entity_id"]) for k in kb}
    assert sum(1 for d, _ in entities if d == "hotel") == 33
    assert sum(1 for d, _ in entities if d == "restaurant") == 110
    faqs = kb.by_source(SourceKind.FAQ)
    assert sum(1 for k in faqs if k.fields["domain"] == "hotel") == 1219
    assert sum(1 for k in faqs if k.fields["domain"] == "restaurant") == 1650
    reviews = {(k.fields["domain"], k.fields["entity_id"], k.fields["doc_id"]) for k in kb.by_source(SourceKind.REVIEW)}
    assert sum(1 for d, *_ in reviews if d == "hotel") == 330
    assert sum(1 for d, *_ in reviews if d == "restaurant") == 1100


def test_dstc11_gold_ids_resolve_to_review_sentences(dstc11_val) -> None:
    seeking = [e for e in dstc11_val.examples if e.needs_knowledge]
    assert all(e.knowledge_ids for e in seeking)
    first_review = next(i for e in seeking for i in e.knowledge_ids if ":review:" in i)
    item = dstc11_val.kb.get(first_review)
    assert item.source == SourceKind.REVIEW and "sent_id" in item.fields


def test_dstc11_labels_round_trip(shared_data: Path, dstc11_val, tmp_path: Path) -> None:
    out = dstc.write_labels(tmp_path / "labels.json", dstc11_val.kb, dstc11_val.examples)
    original = json.loads((shared_path(shared_data, "dstc11_track5") / "val" / "labels.json").read_text("utf-8"))
    assert json.loads(out.read_text("utf-8")) == original


def test_dstc9_knowledge_files(shared_data: Path) -> None:
    root = shared_path(shared_data, "dstc9_track1")
    train_kb = dstc.load_knowledge(root / "knowledge.json")
    eval_kb = dstc.load_knowledge(root / "knowledge_eval.json")
    assert len(train_kb) == 2900
    assert len(eval_kb) == 12039
    assert len({k.fields["domain"] for k in eval_kb}) == 5
    assert all(k.source == SourceKind.SNIPPET for k in train_kb)
    dataset = datasets.load("dstc9", root)  # no logs upstream: knowledge only
    assert dataset.format == "dstc9" and dataset.stats()["knowledge_items"] == 2900 and not dataset.examples


def test_kdconv_three_domains(shared_data: Path) -> None:
    root = shared_path(shared_data, "kdconv")
    loaded = [datasets.load("kdconv", root / domain) for domain in ("film", "music", "travel")]
    assert sum(len(d.dialogs) for d in loaded) == 450
    assert sum(d.stats()["turns"] for d in loaded) == 9321
    assert sum(d.stats()["turn_knowledge_links"] for d in loaded) == 7296


def test_kdconv_travel_kb_collapses_repeated_rows(shared_data: Path) -> None:
    path = shared_path(shared_data, "kdconv/travel/kb_travel.json")
    raw = json.loads(path.read_text("utf-8"))
    rows = [tuple(row) for triples in raw.values() for row in triples]
    assert len(raw) == 1154 and len(rows) == 12509
    kb = kdconv.load_kb_file(path)
    assert len(kb) == len(set(rows)) == 10968
    travel = datasets.load("kdconv", path.parent)
    assert len(travel.kb) == 10968  # every triple the dialogs use is in the KB file


def test_huawei_valid_counts(shared_data: Path) -> None:
    dataset = datasets.load("huawei", shared_path(shared_data, "huawei_kdsd/valid.json"))
    stats = dataset.stats()
    assert stats["dialogs"] == 740
    assert stats["turns"] == 13134
    assert stats["turn_knowledge_links"] == 9444
    assert all(dataset.kb.get(i) for e in dataset.examples for i in e.knowledge_ids)


def test_huawei_test_contexts(shared_data: Path) -> None:
    dataset = datasets.load("huawei", shared_path(shared_data, "huawei_kdsd/test_contexts.json"))
    assert len(dataset.examples) == 400
    assert all(e.needs_knowledge is None and e.context for e in dataset.examples)


def test_huawei_result_round_trip(shared_data: Path, tmp_path: Path) -> None:
    path = shared_path(shared_data, "huawei_kdsd/valid.json")
    dataset = datasets.load("huawei", path)
    out = kdconv.write_result(tmp_path / "result.json", dataset.kb, dataset.examples)
    result = kdconv.read_result(out)
    raw = json.loads(path.read_text("utf-8"))
    assert len(result) == len(dataset.examples)
    for example_id, record in result.items():
        dialog, turn = (int(x) for x in example_id.split(":"))
        message = raw[dialog]["messages"][turn]
        assert record["message"] == message["message"]
        expected = list({json.dumps(a, ensure_ascii=False): a for a in message.get("attrs") or []}.values())
        assert record.get("attrs", []) == [{**a, "attrvalue": str(a["attrvalue"])} for a in expected]


def test_smp2017_counts(shared_data: Path) -> None:
    root = shared_path(shared_data, "smp2017_ecdt")
    train = datasets.load("smp2017", root, "train")
    develop = datasets.load("smp2017", root, "develop")
    assert len(train.examples) == 2299
    assert len(develop.examples) == 770
    assert len(smp2017.labels(train)) == 31
    assert smp2017.labels(develop) == smp2017.labels(train)
    assert not any(e.last_user_text.startswith("\ufeff") for e in train.examples)


def test_smp2017_predictions_round_trip(shared_data: Path, tmp_path: Path) -> None:
    develop = datasets.load("smp2017", shared_path(shared_data, "smp2017_ecdt"), "develop")
    out = smp2017.write_predictions(tmp_path / "pred.json", develop.examples)
    assert smp2017.read_predictions(out) == {e.id: e.intent for e in develop.examples}
