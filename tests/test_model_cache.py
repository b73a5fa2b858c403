"""The benchmark model cache (benchmarks/_model_cache.py, ``zero_shot.py kdconv --model-cache``): a model trained
once is read back on the next run with the same data, options and code, and trained afresh when any of them
changes or the saved folder does not load."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from ragdial.schema import Example, Speaker, Turn

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture
def cache_module(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("_model_cache")


class Weights:
    """A stand-in model: one number, saved as JSON."""

    def __init__(self, value: float) -> None:
        self.value = value

    def save(self, directory: str | Path) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "w.json").write_text(json.dumps({"value": self.value}))
        return directory

    @classmethod
    def load(cls, directory: Path) -> Weights:
        return cls(json.loads((directory / "w.json").read_text())["value"])


def turn(example_id: str, text: str, gold: list[str]) -> Example:
    return Example(id=example_id, dialog_id="d1", turn_index=1, context=[Turn(Speaker.USER, text)], knowledge_ids=gold)


def test_a_model_is_trained_once_and_read_back_with_the_same_key(cache_module: ModuleType, tmp_path: Path) -> None:
    calls: list[float] = []

    def train() -> Weights:
        calls.append(0.25)
        return Weights(0.25 * len(calls))

    first, reused = cache_module.cached(tmp_path, "film-triple", "k1", train, Weights.load)
    assert (first.value, reused) == (0.25, False)
    again, reused = cache_module.cached(tmp_path, "film-triple", "k1", train, Weights.load)
    assert (again.value, reused, len(calls)) == (0.25, True, 1)
    other, reused = cache_module.cached(tmp_path, "film-triple", "k2", train, Weights.load)  # another key
    assert (other.value, reused, len(calls)) == (0.5, False, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["film-triple-k1", "film-triple-k2"]


def test_without_a_folder_every_run_trains(cache_module: ModuleType) -> None:
    calls = []
    for _ in range(2):
        model, reused = cache_module.cached(None, "x", "k", lambda: calls.append(1) or Weights(1.0), Weights.load)
        assert not reused and model.value == 1.0
    assert len(calls) == 2


def test_a_folder_that_does_not_load_is_trained_over(cache_module: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "m-k").mkdir()
    (tmp_path / "m-k" / "w.json").write_text("{not json")
    model, reused = cache_module.cached(tmp_path, "m", "k", lambda: Weights(3.0), Weights.load)
    assert (model.value, reused) == (3.0, False)
    assert Weights.load(tmp_path / "m-k").value == 3.0


def test_the_key_changes_with_the_data_the_options_and_the_code(cache_module: ModuleType, tmp_path: Path) -> None:
    module_a, module_b = tmp_path / "a.py", tmp_path / "b.py"
    module_a.write_text("X = 1\n")
    module_b.write_text("X = 1\n")
    code = ModuleType("a")
    code.__file__ = str(module_a)
    edited = ModuleType("b")
    edited.__file__ = str(module_b)
    examples = [turn("film:1", "知道这部电影吗？", ["t1"]), turn("film:2", "导演是谁？", ["t2"])]
    key = cache_module.fingerprint(examples, ["film"], [code])
    assert key == cache_module.fingerprint(list(examples), ["film"], [code])
    assert key != cache_module.fingerprint(examples[:1], ["film"], [code])
    assert key != cache_module.fingerprint([examples[0], turn("film:2", "导演是谁？", ["t3"])], ["film"], [code])
    assert key != cache_module.fingerprint(examples, ["film", "e5"], [code])
    assert key == cache_module.fingerprint(examples, ["film"], [edited])  # same source text
    module_b.write_text("X = 2\n")
    assert key != cache_module.fingerprint(examples, ["film"], [edited])


def test_a_zero_shot_detector_is_read_back_with_the_same_probabilities(
    cache_module: ModuleType, tmp_path: Path
) -> None:
    from ragdial.understanding.model import TextClassifier
    from ragdial.understanding.tasks import zero_shot_detector

    kb = ["白云寺 门票 20元", "白云寺 开放时间 8:00-17:00", "白云寺 地址 山顶路1号"]
    said = [
        ("白云寺的门票多少钱？", True),
        ("白云寺几点开门？", True),
        ("白云寺在哪里？", True),
        ("谢谢你，再见。", False),
        ("好的，我知道了。", False),
        ("哈哈，真有意思。", False),
    ]
    contexts = [[Turn(Speaker.USER, text)] for text, _ in said]
    labels = [label for _, label in said]

    def train() -> TextClassifier:
        return zero_shot_detector(kb, encoder="hash").fit(contexts, labels)

    fresh, reused = cache_module.cached(tmp_path, "travel-detector", "k", train, TextClassifier.load)
    again, reused_again = cache_module.cached(tmp_path, "travel-detector", "k", train, TextClassifier.load)
    assert (reused, reused_again) == (False, True)
    assert not list(tmp_path.glob("*.partial"))
    asked = [[Turn(Speaker.USER, "白云寺的门票贵吗？")], [Turn(Speaker.USER, "好的，谢谢。")]]
    for model in (fresh, again):
        model.set_knowledge(kb)
    assert np.allclose(again.probabilities(asked), fresh.probabilities(asked), atol=1e-5)
