"""Challenge objects (load, folds, official files, scores) and the evaluation layer on our own small fixtures."""

from __future__ import annotations

import json

import pytest

from ragdial import challenges
from ragdial.challenges import DSTC11, FUTUREDIAL, KDSD, SMP2017, Prediction, ScoreOptions
from ragdial.datasets import kdconv, mobilecs2
from ragdial.datasets.folds import fold_of
from ragdial.errors import RagdialError
from ragdial.evaluation import DetectionEvaluator, Latency, RetrievalEvaluator, RetrievalModel, best_cut
from ragdial.schema import Example, Speaker, Turn


def test_every_format_has_one_challenge():
    assert {
        f: challenges.for_format(f).name for f in ("dstc9", "dstc11", "huawei", "kdconv", "mobilecs2", "smp2017")
    } == {
        "dstc9": "dstc9",
        "dstc11": "dstc11",
        "huawei": "kdsd",
        "kdconv": "kdsd",
        "mobilecs2": "futuredial",
        "smp2017": "smp2017",
    }
    with pytest.raises(RagdialError, match="unknown format 'csv'"):
        challenges.for_format("csv")
    with pytest.raises(RagdialError, match="kdsd reads huawei, kdconv, not 'dstc11'"):
        KDSD.load("x", format="dstc11")
    with pytest.raises(RagdialError, match="smp2017 has no official file for ranking"):
        SMP2017.track("ranking")


def test_default_paths_follow_ragdial_data(monkeypatch, tmp_path):
    monkeypatch.setenv("RAGDIAL_DATA", str(tmp_path))
    assert DSTC11.default_path() == tmp_path / "dstc11_track5"
    assert KDSD.default_path("kdconv") == tmp_path / "kdconv" / "travel"
    with pytest.raises(RagdialError, match="not bundled"):
        FUTUREDIAL.load()


def test_folds_partition_the_split_by_the_readme_rule(fixtures):
    dataset = KDSD.load(fixtures / "generation" / "travel_dialogs.json", format="kdconv")
    for fold in range(5):
        inside, outside = KDSD.examples(dataset, fold), KDSD.examples(dataset, fold, keep=False)
        assert all(fold_of(e) == fold for e in inside) and all(fold_of(e) != fold for e in outside)
        assert len(inside) + len(outside) == len(dataset.examples)
    with pytest.raises(RagdialError, match="fold must be between 0 and 4, not 5"):
        KDSD.examples(dataset, 5)


def test_kdsd_written_result_scores_as_the_file_does(fixtures, tmp_path):
    root = fixtures / "metrics" / "kdsd"
    dataset = kdconv.load(root / "valid.json")
    result = kdconv.read_result(root / "result.json")
    predictions = {}
    for e in dataset.examples:  # the fixture's made-up triples are not in the KB the writer looks them up in
        ids = [kdconv.triple_id(a["name"], a["attrname"], a["attrvalue"]) for a in result[e.id]["attrs"]]
        predictions[e.id] = Prediction(selection=tuple(i for i in ids if i in dataset.kb), response=e.id + "号")
    written = KDSD.write(tmp_path, dataset, dataset.examples, predictions)
    assert written == [tmp_path / "result.json"]
    records = json.loads(written[0].read_text(encoding="utf-8"))
    assert {k: r["message"] for k, r in records.items()} == {e.id: e.id + "号" for e in dataset.examples}
    in_memory = KDSD.score(dataset, dataset.examples, predictions)[0]
    assert in_memory.scores == KDSD.score_file(written[0], root / "valid.json").scores
    assert in_memory.scores["knowledge"]["precision"] == 1.0


def test_futuredial_track1_round_trip_and_missing_prediction(tmp_path):
    dataset = FUTUREDIAL.load_demo("zh")
    examples = dataset.examples[:6]
    predictions = {
        e.id: Prediction(ranking=tuple(c.id for c in mobilecs2.track1_candidates(dataset.kb, e.dialog_id)[:20]))
        for e in examples
    }
    path = FUTUREDIAL.write_track(FUTUREDIAL.track("ranking"), tmp_path / "t1.json", dataset, examples, predictions)
    read = mobilecs2.read_track1(path, dataset)
    assert read == {e.id: list(predictions[e.id].ranking) for e in examples}
    scores = FUTUREDIAL.score(dataset, examples, predictions, ScoreOptions(bertscore=False))
    assert [s.challenge for s in scores] == ["futuredial-track1"]
    with pytest.raises(RagdialError, match=f"no prediction for example {examples[-1].id!r}"):
        FUTUREDIAL.write(tmp_path / "run", dataset, examples, {e.id: predictions[e.id] for e in examples[:-1]})
    assert not (tmp_path / "run").exists()


def test_latency_uses_linear_percentiles():
    summary = Latency.of([4.0, 1.0, 3.0, 2.0])
    assert (summary.n, summary.p50, summary.p95, summary.mean, summary.max) == (4, 2.5, pytest.approx(3.85), 2.5, 4.0)
    assert Latency.of([]).n == 0


def _example(i: int, gold: list[str]) -> Example:
    return Example(str(i), f"d{i}", 1, [Turn(Speaker.USER, f"question {i}")], True, gold)


def test_retrieval_evaluator_by_hand():
    examples = [_example(0, ["a"]), _example(1, ["b", "c"])]
    rankings = {"0": ["a", "x", "y"], "1": ["x", "c", "b"]}
    evaluator = RetrievalEvaluator(examples, ks=(1, 2, 3), cut=1)
    result = evaluator(RetrievalModel(rank=lambda e: rankings[e.id]))
    # recall@k per instance, averaged: k=1 (1 + 0)/2, k=2 (1 + 1/2)/2, k=3 (1 + 1)/2
    assert (result.scores["R@1"], result.scores["R@2"], result.scores["R@3"]) == (0.5, 0.75, 1.0)
    # the top-1 cut selects a (right) and x (wrong) of 3 gold items: P 1/2, R 1/3, EM 1/2
    assert result.scores["P"] == 0.5 and result.scores["R"] == pytest.approx(1 / 3) and result.scores["EM"] == 0.5
    assert result.primary == "F1" and result.latency["rank"].n == 2 and result.predictions["1"] == ["x", "c", "b"]
    chosen = evaluator(RetrievalModel(rank=lambda e: rankings[e.id], select=lambda e: e.knowledge_ids))
    assert chosen.scores["F1"] == 1.0 and chosen.scores["EM"] == 1.0
    assert best_cut([e.knowledge_ids for e in examples], [rankings[e.id] for e in examples], limit=3) == 3


class _Threshold:
    def predict(self, inputs):
        return [self.predict_one(x) for x in inputs]

    def predict_one(self, x):
        return x > 0


def test_detection_evaluator_by_hand():
    result = DetectionEvaluator([1, 2, -1, -2, 3], [True, False, False, True, True], latency_n=5)(_Threshold())
    # predicted T T F F T: tp 2, fp 1, fn 1
    assert result.scores == {"P": pytest.approx(2 / 3), "R": pytest.approx(2 / 3), "F1": pytest.approx(2 / 3)}
    assert result.latency["turn"].n == 5 and result.counts == {"examples": 5, "positive": 3}


def test_data_stats_reads_the_challenge_default_path(monkeypatch, tmp_path, fixtures):
    from typer.testing import CliRunner

    from ragdial.cli.data import app

    (tmp_path / "dstc11_track5").symlink_to(fixtures / "retrieval" / "dstc")
    monkeypatch.setenv("RAGDIAL_DATA", str(tmp_path))
    done = CliRunner().invoke(app, ["stats", "dstc11", "--json"])
    assert done.exit_code == 0, done.output
    expected = DSTC11.load(fixtures / "retrieval" / "dstc").stats()
    assert json.loads(done.stdout) == {"format": "dstc11", "split": "val", **expected}


def test_dstc9_writes_the_selection_then_the_ranking_and_dstc11_the_selection(fixtures, tmp_path):
    """DSTC9 scores a target's knowledge list as a ranking: a wrong first choice with the gold item second in the
    ranking scores R@1 0, R@5 1, MRR@5 0.5; DSTC11 scores the list as a set, so it carries the selection only."""
    from ragdial.challenges import DSTC9

    dataset = DSTC9.load(fixtures / "dstc9", "val")
    ids = [item.id for item in dataset.kb]
    predictions = {}
    for e in dataset.examples:
        if not e.needs_knowledge:
            predictions[e.id] = Prediction(needs_knowledge=False, response=None)
            continue
        gold = e.knowledge_ids[0]
        others = [i for i in ids if i != gold]
        ranking = (others[0], gold, *others[1:8])
        predictions[e.id] = Prediction(True, (others[0],), ranking, "Here is what I found.")
    scores = DSTC9.score(dataset, dataset.examples, predictions)[0].scores["selection"]
    assert scores == pytest.approx({"mrr@5": 0.5, "r@1": 0.0, "r@5": 1.0})
    written = json.loads(
        DSTC9.write_track(DSTC9.tracks[0], tmp_path / "labels.json", dataset, dataset.examples, predictions).read_text()
    )
    first_target = next(r for r in written if r["target"])
    assert len(first_target["knowledge"]) == 5
    assert [r for r in written if not r["target"]] and all("knowledge" not in r for r in written if not r["target"])
    kept = DSTC11.as_written(predictions)
    assert all(kept[k].selection == p.selection for k, p in predictions.items())
