"""Reranker training and the cut, index save/load, and the index/train/retrieve CLI on our fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdial import datasets
from ragdial.cli import app
from ragdial.errors import RagdialError
from ragdial.retrieval import rerank
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.retrieval.index import load_index, save_index
from ragdial.retrieval.interaction import InteractionModel, pair_features
from ragdial.retrieval.rerank import FEATURES, Reranker

FIXTURES = Path(__file__).parent / "fixtures" / "retrieval"
runner = CliRunner()


@pytest.fixture(scope="module")
def dstc():
    return datasets.load("dstc11", FIXTURES / "dstc")


@pytest.fixture(scope="module")
def kd():
    return datasets.load("huawei", FIXTURES / "kd_dialogs.json")


@pytest.fixture(scope="module")
def trained(dstc):
    retriever = HybridRetriever(dstc.kb, RetrieverConfig(encoder="hash"))
    retriever.reranker = rerank.train(retriever, dstc.examples, rounds=40)
    return retriever


def test_features_shape_and_entity_columns(dstc):
    retriever = HybridRetriever(dstc.kb, RetrieverConfig(encoder="hash"))
    example = next(e for e in dstc.examples if e.needs_knowledge)
    scores = retriever.score(example.context)
    x = rerank.features(retriever, example.context, scores)
    assert x.shape == (len(scores.indices), len(FEATURES))
    assert x[:, FEATURES.index("entity_in_focus")].all()  # candidates are scoped to the entity in focus
    assert not x[:, FEATURES.index("interaction")].any()  # no interaction model given


def test_reranker_selects_several_gold_reviews(dstc, trained):
    seeking = [e for e in dstc.examples if e.needs_knowledge]
    hits = total = 0
    for example in seeking:
        chosen = {r.item.id for r in trained.retrieve(example.context, k=5, select=5).selected}
        hits += len(chosen & set(example.knowledge_ids))
        total += len(example.knowledge_ids)
    assert hits / total > 0.8
    multi = [e for e in seeking if len(e.knowledge_ids) == 2]
    assert multi and any(len(trained.retrieve(e.context, k=5, select=5).selected) >= 2 for e in multi)


def test_reranker_save_load_same_scores(dstc, trained, tmp_path):
    trained.reranker.save(tmp_path / "rr")
    assert sorted(p.name for p in (tmp_path / "rr").iterdir()) == ["interaction.npy", "reranker.json", "reranker.txt"]
    loaded = Reranker.load(tmp_path / "rr")
    assert loaded.threshold == trained.reranker.threshold
    example = dstc.examples[0]
    scores = trained.score(example.context)
    assert np.allclose(
        loaded.predict(trained, example.context, scores), trained.reranker.predict(trained, example.context, scores)
    )
    with pytest.raises(RagdialError, match="not a reranker directory"):
        Reranker.load(tmp_path)


def test_cut_keeps_at_least_one():
    from ragdial.retrieval.base import ScoredKnowledge
    from ragdial.schema import Knowledge, SourceKind

    items = [ScoredKnowledge(Knowledge(str(i), "t", SourceKind.FAQ), s) for i, s in enumerate([0.2, 0.1])]
    assert [r.item.id for r in Reranker(None, threshold=0.5).cut(items)] == ["0"]
    assert len(Reranker(None, threshold=0.05).cut(items)) == 2
    assert len(Reranker(None, threshold=0.05).cut(items, k=1)) == 1
    assert len(Reranker(None, threshold=0.05, relative=0.6).cut(items)) == 1  # 0.1 < 0.6 x 0.2
    assert Reranker(None).cut([]) == []


def test_best_threshold_prefers_the_cut_that_matches_gold():
    probs = [np.array([0.9, 0.8, 0.1]), np.array([0.7, 0.2, 0.1])]
    ids = [["a", "b", "c"], ["d", "e", "f"]]
    threshold, relative = rerank.best_threshold(probs, ids, [["a", "b"], ["d"]], max_select=3)
    assert 0.2 < threshold <= 0.7 and relative == 0.0
    threshold, relative = rerank.best_threshold(probs, ids, [["a", "b"], ["d"]], 3, rerank.RELATIVE_CUTS)
    assert 0.2 < max(threshold, relative * 0.7) <= 0.7


def test_interaction_model_learns_word_pairs():
    rows = [pair_features(["sanitized"], ["clean"], "review"), pair_features(["sanitized"], ["view"], "review")] * 20
    model = InteractionModel.fit(rows, np.array([1.0, 0.0] * 20))
    scores = model.score(rows[:2])
    assert scores[0] > scores[1]


def test_chinese_reranker_on_triples(kd):
    retriever = HybridRetriever(kd.kb, RetrieverConfig(encoder=None, fusion="bm25"))
    retriever.reranker = rerank.train(retriever, kd.examples, rounds=40)
    example = next(e for e in kd.examples if e.knowledge_ids and "门票" in e.last_user_text)
    assert retriever.retrieve(example.context, k=3, select=3).selected[0].item.id == example.knowledge_ids[0]


def test_index_round_trip(dstc, trained, tmp_path):
    save_index(trained, tmp_path / "idx")
    loaded = load_index(tmp_path / "idx")
    assert [i.id for i in loaded.items] == [i.id for i in trained.items]
    assert isinstance(loaded.vectors, np.memmap)
    example = dstc.examples[3]
    assert [r.item.id for r in loaded.retrieve(example.context, k=5).ranked] == [
        r.item.id for r in trained.retrieve(example.context, k=5).ranked
    ]
    with pytest.raises(RagdialError, match="not an index directory"):
        load_index(tmp_path / "missing")


def test_cli_build_train_batch_ask(tmp_path):
    data = str(FIXTURES / "dstc")
    result = runner.invoke(app, ["index", "build", "dstc11", data, "--out", str(tmp_path / "i"), "--encoder", "hash"])
    assert result.exit_code == 0, result.output
    assert "items: " in result.stderr and (tmp_path / "i" / "items.offsets.npy").is_file()  # written by write_index
    result = runner.invoke(
        app,
        [
            "train",
            "retriever",
            "dstc11",
            data,
            "--index",
            str(tmp_path / "i"),
            "--out",
            str(tmp_path / "r"),
            "--rounds",
            "30",
        ],
    )
    assert result.exit_code == 0, result.output
    out = tmp_path / "labels.json"
    result = runner.invoke(
        app,
        [
            "retrieve",
            "batch",
            "dstc11",
            data,
            "--index",
            str(tmp_path / "i"),
            "--reranker",
            str(tmp_path / "r"),
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    labels = json.loads(out.read_text())
    gold = json.loads((FIXTURES / "dstc" / "val" / "labels.json").read_text())
    assert len(labels) == len(gold)
    assert [label["target"] for label in labels] == [g["target"] for g in gold]
    assert all(label["knowledge"] and "response" not in label for label in labels if label["target"])
    datasets.dstc.read_labels(out, datasets.load("dstc11", data).kb)  # valid official format
    result = runner.invoke(
        app, ["retrieve", "ask", str(tmp_path / "i"), "Maple Court", "ok", "pets allowed?", "--json"]
    )
    assert result.exit_code == 0
    assert json.loads(result.output.splitlines()[0])["fields"]["entity"] == "Maple Court"


def test_cli_build_with_a_reranker_streams_the_index_and_stores_the_reranker(dstc, trained, tmp_path, monkeypatch):
    """``ragdial index build --reranker``: written by ``write_index`` (no in-memory retriever), the reranker stored
    in it, and the loaded index ranks and selects as the retriever it was trained on."""
    from ragdial.retrieval import hybrid

    trained.reranker.save(tmp_path / "rr")

    def in_memory(*args, **kwargs):
        raise AssertionError("the index was built in memory")

    monkeypatch.setattr(hybrid.HybridRetriever, "__init__", in_memory)
    data = str(FIXTURES / "dstc")
    result = runner.invoke(
        app,
        [
            "index",
            "build",
            "dstc11",
            data,
            "-o",
            str(tmp_path / "i"),
            "--encoder",
            "hash",
            "--reranker",
            str(tmp_path / "rr"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "items: " in result.stderr and (tmp_path / "i" / "reranker" / "reranker.json").is_file()
    monkeypatch.undo()
    loaded = load_index(tmp_path / "i")
    assert loaded.reranker is not None and loaded.reranker.threshold == trained.reranker.threshold
    for example in [e for e in dstc.examples if e.needs_knowledge]:
        got, want = loaded.retrieve(example.context, k=5, select=5), trained.retrieve(example.context, k=5, select=5)
        assert [r.item.id for r in got.selected] == [r.item.id for r in want.selected]
        assert [r.score for r in got.ranked] == pytest.approx([r.score for r in want.ranked], abs=1e-6)
    bad = runner.invoke(app, ["index", "build", "dstc11", data, "-o", str(tmp_path / "j"), "--reranker", str(tmp_path)])
    assert bad.exit_code != 0 and not (tmp_path / "j").exists()  # not a reranker: nothing written


def test_cli_batch_huawei_result(tmp_path):
    data = str(FIXTURES / "kd_dialogs.json")
    assert (
        runner.invoke(app, ["index", "build", "huawei", data, "-o", str(tmp_path / "i"), "--encoder", "none"]).exit_code
        == 0
    )
    out = tmp_path / "result.json"
    result = runner.invoke(app, ["retrieve", "batch", "huawei", data, "--index", str(tmp_path / "i"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    records = datasets.kdconv.read_result(out)
    examples = datasets.load("huawei", data).examples
    assert set(records) == {e.id for e in examples}
    for example in examples:  # turns that use knowledge get triples, the others none
        assert bool(records[example.id].get("attrs")) == bool(example.knowledge_ids)


def test_cli_batch_mobilecs2_track1(tmp_path):
    data = str(Path(__file__).parent / "fixtures" / "mobilecs2" / "zh" / "dev_final_processed.json")
    assert (
        runner.invoke(
            app, ["index", "build", "mobilecs2", data, "-o", str(tmp_path / "i"), "--encoder", "none"]
        ).exit_code
        == 0
    )
    out = tmp_path / "track1.json"
    result = runner.invoke(
        app, ["retrieve", "batch", "mobilecs2", data, "--index", str(tmp_path / "i"), "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    dataset = datasets.load("mobilecs2", data)
    submitted = datasets.mobilecs2.read_track1(out, dataset)
    assert set(submitted) == {e.id for e in dataset.examples}
    assert all(
        len(ids) == min(20, len(dataset.kb.candidates(e.dialog_id)))
        for e in dataset.examples
        for ids in [submitted[e.id]]
    )


def test_cli_batch_rejects_other_formats(tmp_path):
    result = runner.invoke(
        app, ["retrieve", "batch", "smp2017", "x", "--index", str(tmp_path), "-o", str(tmp_path / "o")]
    )
    assert result.exit_code != 0


def test_dialog_system_cites_the_trained_rerankers_selection(dstc, trained, tmp_path):
    """A reranker folder named in the retriever config is used by the pipeline, which cites its cut."""
    from ragdial.pipeline.components import build_system
    from ragdial.pipeline.config import SystemConfig

    trained.reranker.save(tmp_path / "rr")
    config = SystemConfig.from_data(
        {
            "languages": ["en"],
            "knowledge": {"name": "dataset", "format": "dstc11", "path": str(FIXTURES / "dstc")},
            "retriever": {"name": "hybrid", "encoder": "hash", "reranker": str(tmp_path / "rr")},
            "generator": {"name": "template"},
            "top_k": 5,
        }
    )
    system = build_system(config, "en")
    multi = [
        e for e in dstc.examples if e.needs_knowledge and len(trained.retrieve(e.context, k=5, select=5).selected) >= 2
    ]
    assert multi
    for example in multi:
        reply = system.answer(example.context)
        assert [c.id for c in reply.knowledge] == [
            r.item.id for r in trained.retrieve(example.context, k=5, select=5).selected
        ]


def test_a_saved_index_is_named_in_the_config_and_answers_like_the_retriever_it_saved(dstc, trained, tmp_path):
    """``retriever: {name: index, path: DIR}`` loads the saved index (no re-indexing) with its reranker; the system
    cites that retriever's selection, and ``to_config`` says how to build it again."""
    from ragdial.pipeline.components import build_system
    from ragdial.pipeline.config import SystemConfig
    from ragdial.retrieval import RETRIEVERS

    save_index(trained, tmp_path / "idx")
    config = SystemConfig.from_data(
        {
            "languages": ["en"],
            "knowledge": {"name": "dataset", "format": "dstc11", "path": str(FIXTURES / "dstc")},
            "retriever": {"name": "index", "path": str(tmp_path / "idx")},
            "generator": {"name": "template"},
            "top_k": 5,
        }
    )
    system = build_system(config, "en")
    assert system.retriever.to_config() == {"name": "index", "path": str(tmp_path / "idx")}
    assert "index" in RETRIEVERS.names() and "milvus" in RETRIEVERS.names()
    for example in [e for e in dstc.examples if e.needs_knowledge][:5]:
        reply = system.answer(example.context)
        expected = trained.retrieve(example.context, k=20, select=5)
        assert [c.id for c in reply.knowledge] == [r.item.id for r in expected.selected]
        assert [c.id for c in reply.ranking] == [r.item.id for r in expected.ranked]
    with pytest.raises(RagdialError, match="not an index directory"):
        build_system(
            SystemConfig.from_data({**config.to_data(), "retriever": {"name": "index", "path": "nowhere"}}), "en"
        )
