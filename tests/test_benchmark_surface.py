"""One benchmark command surface: ``ragdial run`` for every benchmark (DSTC9 included), seeded ``--limit`` samples,
``predict`` output that ``eval`` reads, ``retrieve batch`` output scorable for selection alone, and a MobileCS2 run
that routes with the trained api_query classifier and scores the same turns as ``eval``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdial import challenges
from ragdial.challenges import DSTC9, FUTUREDIAL, Prediction
from ragdial.challenges.base import ScoreOptions
from ragdial.errors import DataFormatError, RagdialError
from ragdial.evaluation import run_benchmark
from ragdial.evaluation.pipeline import select_examples
from ragdial.pipeline.config import ComponentSpec, load_config

FIXTURES = Path(__file__).parent / "fixtures"
DSTC9_ROOT = FIXTURES / "dstc9"
MOBILECS2_DEV = FIXTURES / "mobilecs2" / "official" / "zh" / "dev_final_processed.json"


def template_config(retriever: str = "bm25"):
    config = load_config(None)
    config.retriever = ComponentSpec(retriever)
    config.generator = ComponentSpec("template")
    return config


def test_limit_draws_a_seeded_sample_in_split_order() -> None:
    bench = challenges.benchmark("dstc9")
    dataset = bench.load(DSTC9_ROOT, "val")
    first = select_examples(bench, dataset, None, 8, seed=1)
    assert [e.id for e in first] == [e.id for e in select_examples(bench, dataset, None, 8, seed=1)]
    other = select_examples(bench, dataset, None, 8, seed=2)
    assert [e.id for e in first] != [e.id for e in other]
    assert [int(e.id) for e in first] == sorted(int(e.id) for e in first)
    assert len(select_examples(bench, dataset, None, None)) == len(dataset.examples) == 26


def test_run_dstc9_and_dstc11_refuses_dstc9_data(tmp_path: Path) -> None:
    done = run_benchmark("dstc9", template_config(), DSTC9_ROOT, "val", None, 6, out=tmp_path / "d9", seed=3)
    scores = done.summary()["scores"]["dstc9"]
    assert scores["counts"]["instances"] == 6
    assert "impl:nltk-3.5-semantics" in scores["signatures"]["meteor"]
    assert (tmp_path / "d9" / "labels.json").is_file()
    with pytest.raises(RagdialError, match="holds dstc9 data, not dstc11: use ragdial run dstc9"):
        run_benchmark("dstc11", template_config(), DSTC9_ROOT, "val", None, out=tmp_path / "d11")


def test_selection_file_without_responses_scores_for_selection_alone(tmp_path: Path) -> None:
    dataset = DSTC9.load(DSTC9_ROOT, "val")
    predictions = {
        e.id: Prediction(needs_knowledge=bool(e.needs_knowledge), selection=tuple(e.knowledge_ids[:1]))
        for e in dataset.examples
    }
    path = DSTC9.write_track(DSTC9.tracks[0], tmp_path / "labels.json", dataset, dataset.examples, predictions)
    assert not any("response" in r for r in json.loads(path.read_text()))
    with pytest.raises(DataFormatError, match="--selection-only"):
        DSTC9.score_file(path, dataroot=DSTC9_ROOT)
    scores = DSTC9.score_file(path, dataroot=DSTC9_ROOT, selection_only=True)
    assert "generation" not in scores.scores and scores.scores["selection"]["r@1"] == pytest.approx(1.0)
    assert scores.signatures["generation"].startswith("generation|scored:no")


def test_predict_output_is_read_by_eval(tmp_path: Path) -> None:
    from ragdial.datasets import smp2017

    path = tmp_path / "pred.json"
    path.write_text(json.dumps([{"id": "a", "prediction": "weather", "confidence": 0.9}, {"id": "b", "label": "chat"}]))
    assert smp2017.read_predictions(path) == {"a": "weather", "b": "chat"}


def test_mobilecs2_run_routes_with_the_trained_api_query_model(tmp_path: Path) -> None:
    """The train split beside the file trains the detector; every scored turn gets a full top-20; the track-1
    score of the run equals ``eval`` on the file it wrote (same turns, same rules)."""
    out = tmp_path / "run"
    done = run_benchmark("mobilecs2", template_config(), MOBILECS2_DEV, out=out, options=ScoreOptions(bertscore=False))
    summary = done.summary()
    assert summary["components"]["detector"] == "ApiQueryDetector"
    assert summary["config"]["detector"]["model"] == str(out / "api_query")
    responses = json.loads((out / "track2_responses.json").read_text())
    assert any(r["查询-生成"] for r in responses)  # the detector's api_query, beside the gold 查询
    top = json.loads((out / "track1_top20.json").read_text())
    assert {len(r["top20_id"]) for r in top} == {20}
    again = FUTUREDIAL.score_track1_file(out / "track1_top20.json", MOBILECS2_DEV)
    assert again.scores == pytest.approx(summary["scores"]["futuredial-track1"]["scores"])
    assert again.counts == summary["scores"]["futuredial-track1"]["counts"]
