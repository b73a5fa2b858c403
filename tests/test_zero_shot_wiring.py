"""The zero-shot detector and the transfer reranker built from a config (issue 20's parts, wired): trained on the
DSTC9-format fixture (FAQ only, 12 items), deployed over the DSTC11-format fixture (FAQ + reviews, 30 items). Our
own fixtures; the hash encoder keeps it fast."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdial import datasets
from ragdial.cli import app
from ragdial.components import ConfigError
from ragdial.errors import RagdialError
from ragdial.pipeline.components import build_system
from ragdial.pipeline.config import SystemConfig
from ragdial.retrieval import transfer
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.retrieval.rerank import Reranker, load_reranker
from ragdial.understanding import TextClassifier
from ragdial.understanding.detectors import ZeroShotDetector

FIXTURES = Path(__file__).parent / "fixtures"
DEPLOYED = FIXTURES / "retrieval" / "dstc"
runner = CliRunner()


@pytest.fixture(scope="module")
def dstc():
    return datasets.load("dstc11", DEPLOYED)


def config(detector: dict, retriever: dict) -> SystemConfig:
    return SystemConfig.from_data(
        {
            "languages": ["en"],
            "knowledge": {"name": "dataset", "format": "dstc11", "path": str(DEPLOYED)},
            "detector": detector,
            "retriever": {"name": "hybrid", "encoder": "hash", **retriever},
            "generator": {"name": "template"},
            "top_k": 5,
        }
    )


def train_detector(out: Path, *options: str) -> None:
    data = str(FIXTURES / "dstc9")
    result = runner.invoke(app, ["train", "detector", "dstc9", data, "--split", "val", "-o", str(out), *options])
    assert result.exit_code == 0, result.output


def test_a_trained_zero_shot_detector_is_built_from_config_over_the_systems_knowledge(dstc, tmp_path):
    train_detector(tmp_path / "det", "--zero-shot", "--embedding", "hash")
    system = build_system(config({"name": "zero_shot", "model": str(tmp_path / "det")}, {}), "en")
    detector = system.detector
    assert isinstance(detector, ZeroShotDetector)
    saved = TextClassifier.load(tmp_path / "det")
    trained_on = {item["id"] for item in saved.blocks[0].state()[0]["items"]}
    matched = {item.id for item in detector.classifier.blocks[0].items}
    assert matched == {item.id for item in dstc.kb} != trained_on  # the deployment KB, not the training one
    deployed = TextClassifier.load(tmp_path / "det")
    deployed.set_knowledge(list(dstc.kb))
    changed = 0
    for example in dstc.examples:
        reply = system.answer(example.context)
        probability = float(deployed.probabilities([example.context])[0, -1])
        assert reply.decision.detector == "zero_shot"
        assert system.decide(example.context).confidence == pytest.approx(probability, abs=1e-5)
        changed += abs(probability - float(saved.probabilities([example.context])[0, -1])) > 1e-3
        assert reply.decision.needs_knowledge == example.needs_knowledge  # all 12 fixture turns are right
        assert bool(reply.knowledge) == example.needs_knowledge
    assert changed  # matching the deployed KB moves some probabilities


def test_zero_shot_refuses_a_detector_without_knowledge_cues(tmp_path):
    train_detector(tmp_path / "plain", "--embedding", "none")
    with pytest.raises(ConfigError, match="not a zero-shot detector"):
        build_system(config({"name": "zero_shot", "model": str(tmp_path / "plain")}, {}), "en")
    with pytest.raises(ConfigError, match="needs 'model'"):
        build_system(config({"name": "zero_shot"}, {}), "en")


@pytest.fixture(scope="module")
def trained(dstc):
    retriever = HybridRetriever(dstc.kb, RetrieverConfig(encoder="hash"))
    retriever.reranker = transfer.train(retriever, [e for e in dstc.examples if e.needs_knowledge], rounds=5, folds=3)
    return retriever


def test_a_saved_transfer_reranker_loads_as_itself_with_the_same_scores(dstc, trained, tmp_path):
    model = trained.reranker
    loaded = load_reranker(model.save(tmp_path / "tr"))
    assert isinstance(loaded, transfer.TransferReranker)
    assert (loaded.threshold, loaded.relative, loaded.fallback) == (model.threshold, model.relative, model.fallback)
    for example in dstc.examples:
        scores = trained.score(example.context)
        assert np.allclose(
            loaded.predict(trained, example.context, scores), model.predict(trained, example.context, scores)
        )


def test_the_hybrid_retrievers_reranker_option_takes_a_transfer_reranker(dstc, trained, tmp_path):
    trained.reranker.save(tmp_path / "tr")
    system = build_system(config({"name": "always"}, {"reranker": str(tmp_path / "tr")}), "en")
    assert isinstance(system.retriever.reranker, transfer.TransferReranker)
    seeking = [e for e in dstc.examples if e.needs_knowledge]
    for example in seeking:
        expected = [r.item.id for r in trained.retrieve(example.context, k=5, select=5).selected]
        assert [c.id for c in system.answer(example.context).knowledge] == expected


def test_the_reranker_loader_names_a_bad_folder(tmp_path):
    (tmp_path / "tr").mkdir()
    (tmp_path / "tr" / transfer.META_FILE).write_text(json.dumps({"format": "something else"}), encoding="utf-8")
    with pytest.raises(RagdialError, match=r"transfer\.json: field 'format'"):
        load_reranker(tmp_path / "tr")
    with pytest.raises(RagdialError, match="not a reranker directory"):
        load_reranker(tmp_path)


def test_train_retriever_transfer_writes_a_folder_the_loader_reads(tmp_path):
    data = str(DEPLOYED)
    built = runner.invoke(app, ["index", "build", "dstc11", data, "-o", str(tmp_path / "i"), "--encoder", "hash"])
    assert built.exit_code == 0, built.output
    options = ["--index", str(tmp_path / "i"), "-o", str(tmp_path / "tr"), "--rounds", "5", "--depth", "20"]
    result = runner.invoke(app, ["train", "retriever", "dstc11", data, *options, "--transfer"])
    assert result.exit_code == 0, result.output
    assert isinstance(load_reranker(tmp_path / "tr"), transfer.TransferReranker)
    assert not isinstance(load_reranker(tmp_path / "tr"), Reranker)


def test_a_saved_transfer_reranker_with_a_bad_value_is_named(trained, tmp_path):
    folder = trained.reranker.save(tmp_path / "tr")
    meta = json.loads((folder / transfer.META_FILE).read_text(encoding="utf-8"))
    assert load_reranker(folder).threshold == pytest.approx(meta["threshold"])
    meta["depth"] = "fifty"
    (folder / transfer.META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(RagdialError, match=r"transfer\.json: field 'depth' must be a whole number >= 1, got 'fifty'"):
        load_reranker(folder)
