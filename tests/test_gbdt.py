"""ragdial.gbdt scores a LightGBM text model exactly as LightGBM does, without importing it (issue 13, start-up)."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources

import lightgbm
import numpy as np
import pytest

from ragdial.gbdt import TextTrees, UnsupportedTrees


def _rows(rng: np.random.Generator, n: int, features: int) -> np.ndarray:
    """Values in [-1, 1] with exact zeros and NaNs mixed in (the cases a split's missing rule decides)."""
    x = rng.uniform(-1.0, 1.0, size=(n, features))
    x[rng.random(x.shape) < 0.25] = 0.0
    x[rng.random(x.shape) < 0.1] = np.nan
    return x


def _train(params: dict, x: np.ndarray, y: np.ndarray, rounds: int = 30, categorical: list[int] | None = None) -> str:
    data = lightgbm.Dataset(x, y, params={"verbose": -1}, categorical_feature=categorical or "auto")
    booster = lightgbm.train({"verbose": -1, "seed": 3, "deterministic": True, **params}, data, rounds)
    return booster.model_to_string()


def test_the_packaged_answer_models_rank_head_scores_like_lightgbm():
    text = resources.files("ragdial.resources").joinpath("answer_model.json").read_text(encoding="utf-8")
    model = json.loads(text)["rank"]["model"]
    trees = TextTrees(model)
    x = np.abs(_rows(np.random.default_rng(5), 300, trees.n_features))
    expected = lightgbm.Booster(model_str=model).predict(x, num_threads=1)
    assert np.array_equal(trees.predict(x), expected)


@pytest.mark.parametrize(
    "params",
    [
        {"objective": "regression", "num_leaves": 15},  # NaN as missing: default directions learned
        {"objective": "regression", "num_leaves": 7, "zero_as_missing": True},  # zeros are the missing values
        {"objective": "binary", "num_leaves": 5, "use_missing": False},  # NaN goes by value 0
    ],
)
def test_trained_models_with_missing_values_score_like_lightgbm(params):
    rng = np.random.default_rng(11)
    x = _rows(rng, 400, 6)
    signal = np.nan_to_num(x[:, 0]) - 0.5 * np.nan_to_num(x[:, 2]) + np.isnan(x[:, 1]) + (x[:, 3] == 0)
    y = (signal > 0.2).astype(float) if params["objective"] == "binary" else signal
    text = _train(params, x, y)
    fresh = _rows(np.random.default_rng(12), 200, 6)
    expected = lightgbm.Booster(model_str=text).predict(fresh, raw_score=True, num_threads=1)
    assert np.array_equal(TextTrees(text).predict(fresh), expected)


def test_a_model_of_single_leaf_trees_scores_like_lightgbm():
    x = np.arange(40, dtype=float).reshape(20, 2)
    text = _train({"objective": "regression"}, x, np.full(20, 2.5), rounds=3)  # a constant target: nothing to split
    assert "num_leaves=1\n" in text
    assert np.array_equal(TextTrees(text).predict(x), lightgbm.Booster(model_str=text).predict(x))
    assert TextTrees(text).predict(x[:2]).tolist() == [2.5, 2.5]


def test_categorical_splits_are_left_to_lightgbm_and_a_wrong_width_is_an_error():
    rng = np.random.default_rng(2)
    x = np.column_stack([rng.integers(0, 6, 300), rng.random(300)])
    y = (x[:, 0] % 2 == 0).astype(float)
    params = {"objective": "regression", "min_data_per_group": 5, "cat_smooth": 1}
    with pytest.raises(UnsupportedTrees, match="categorical"):
        TextTrees(_train(params, x, y, categorical=[0]))
    trees = TextTrees(_train({"objective": "regression"}, x, y))
    with pytest.raises(ValueError, match="expected rows of 2 features"):
        trees.predict(np.zeros((3, 5)))


def test_loading_the_answer_model_and_ranking_imports_neither_lightgbm_nor_sklearn():
    code = (
        "import sys, numpy as np\n"
        "from ragdial.pipeline.answer_model import default_answer_model\n"
        "model = default_answer_model()\n"
        "p = model.rank.probabilities(np.zeros((3, model.rank.booster.n_features)))\n"
        "assert abs(p.sum() - 1) < 1e-9\n"
        "print(sorted(m for m in ('lightgbm', 'sklearn') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
