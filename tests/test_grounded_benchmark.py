"""The grounded-answers benchmark's splits and protocols (benchmarks/grounded_answers.py, train_answer_model.py):
which sets are locked, which are retired into tuning data, and that leave-one-hand-out never trains on the hand it
measures. No conversation file is read: the locked sets must not be, and the protocols are checked on stand-ins."""

from __future__ import annotations

import importlib
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("grounded_answers")


@pytest.fixture
def trainer(bench: ModuleType) -> ModuleType:
    return importlib.import_module("train_answer_model")


def test_the_locked_sets_are_test4_and_test5_and_the_older_ones_are_tuning_data(bench: ModuleType) -> None:
    assert bench.LOCKED_SPLITS == ("test4", "test5")
    assert bench.RETIRED == ("test", "test2", "test3")
    assert set(bench.TUNING) == {"train", "dev", "test", "test2", "test3"}
    assert not set(bench.TUNING) & set(bench.LOCKED_SPLITS)
    assert bench.PATHS["test5"].name == "demo_conversations_test5.jsonl"
    # every tuning split belongs to exactly one hand, and no hand holds a locked set
    assert sorted(s for splits in bench.HANDS.values() for s in splits) == sorted(bench.TUNING)


def test_an_unknown_split_is_named_rather_than_read_from_the_first_set(bench: ModuleType) -> None:
    with pytest.raises(ValueError, match="test9"):
        bench.load_set("test9")


@pytest.mark.parametrize("locked", ["test4", "test5", "train,test5"])
def test_the_trainer_refuses_the_locked_sets(trainer: ModuleType, locked: str) -> None:
    with pytest.raises(ValueError, match="never trained on"):
        trainer.training_splits(locked)


def test_the_trainer_takes_the_retired_sets(trainer: ModuleType) -> None:
    assert trainer.training_splits("train, dev,test,test2,test3") == ["train", "dev", "test", "test2", "test3"]
    assert trainer.training_splits("") == []
    with pytest.raises(ValueError, match="unknown split"):
        trainer.training_splits("train,tset2")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--cv", "5", "--pool", "train,test4"], "never pooled"),
        (["--hands", "--pool", "dev,test5"], "never pooled"),
        (["--split", "test5", "--failures"], "never read"),
        (["--cv", "5", "--hands"], "not both"),
    ],
)
def test_the_benchmark_refuses_to_pool_or_read_a_locked_set(
    bench: ModuleType, argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        bench.main(argv)
    assert stop.value.code == 2
    assert says in capsys.readouterr().err


def test_leave_one_hand_out_never_trains_on_the_hand_it_measures(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    hands = {
        "a": [{"id": "a1"}, {"id": "a2"}],
        "b": [{"id": "b1"}],
        "c": [{"id": "c1"}, {"id": "c2"}, {"id": "c3"}],
    }
    near = [{"id": "n1"}]
    monkeypatch.setattr(bench, "_examples", lambda rows: {r["id"]: [f"x-{r['id']}"] for r in rows})
    fitted: dict[str, tuple[list[str], list[str]]] = {}

    def fit(examples: list[str], extra: list[str], path: Path) -> Path:
        fitted[path.name] = (sorted(examples), sorted(extra))
        return path

    measured: dict[str, list[str]] = {}

    def run(generator: str, grounded: bool, rows: list[dict[str, Any]], *args: Any, **kwargs: Any) -> Any:
        measured[kwargs["answer_model"].name] = [r["id"] for r in rows]
        tallies: dict[str, Any] = defaultdict(bench.Tally)
        tallies["all"].turns = len(rows)
        return tallies

    monkeypatch.setattr(bench, "_fit", fit)
    monkeypatch.setattr(bench, "run", run)
    out = bench.leave_one_hand_out([("extractive", "extractive", {})], hands, policy_only=near)
    assert set(out) == {"a", "b", "c"}
    assert fitted["without-b.json"] == (["x-a1", "x-a2", "x-c1", "x-c2", "x-c3"], ["x-n1"])
    assert fitted["without-a.json"][0] == ["x-b1", "x-c1", "x-c2", "x-c3"]
    assert measured["without-c.json"] == ["c1", "c2", "c3"]
    assert out["c"]["extractive"]["all"].turns == 3


def test_the_mean_of_hands_weighs_each_hand_once(bench: ModuleType) -> None:
    big: dict[str, Any] = defaultdict(bench.Tally)
    big["all"].gold_turns, big["all"].first_gold, big["all"].turns, big["all"].correct = 100, 90, 100, 80
    big["follow_up"].gold_turns, big["follow_up"].first_gold = 40, 20
    small: dict[str, Any] = defaultdict(bench.Tally)
    small["all"].gold_turns, small["all"].first_gold, small["all"].turns, small["all"].correct = 10, 5, 10, 4
    rows = [bench.headline(big), bench.headline(small)]
    assert rows[0]["follow_up"] == 0.5 and rows[1]["follow_up"] is None
    mean = bench.mean_of_hands(rows)
    assert mean["first_gold"] == pytest.approx(0.7)  # (0.9 + 0.5) / 2, not 95 / 110
    assert mean["correct"] == pytest.approx(0.6)
    assert mean["follow_up"] == pytest.approx(0.5)  # the hand without follow-ups is left out
    assert mean["policy"] is None
