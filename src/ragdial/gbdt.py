"""Raw scores of a LightGBM model saved as text, computed with numpy alone.

``import lightgbm`` imports scikit-learn (about 1.6 s on a quiet 2-core machine, 3.4 s under load), which a service
pays at start only to score a few candidates per turn with small trees. :class:`TextTrees` reads the model text
(``Booster.model_to_string()``) and evaluates it with LightGBM's own rule for numerical splits (a NaN or zero value
follows the node's default direction where the tree was trained with such missing values, otherwise
``value <= threshold`` goes left), summing the leaf values of every tree in order. Models it cannot evaluate
(categorical splits, linear trees, several classes) raise :class:`UnsupportedTrees`, so the caller can use
LightGBM itself.
"""

from __future__ import annotations

import re

import numpy as np

ZERO = 1e-35  # LightGBM's kZeroThreshold: |x| <= this counts as zero for "zero as missing"


class UnsupportedTrees(ValueError):
    """A model that only LightGBM itself can evaluate."""


def _fields(block: str) -> dict[str, str]:
    fields = {}
    for line in block.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields[key.strip()] = value.strip()
    return fields


def _numbers(text: str) -> list[float]:
    return [float(v) for v in text.split()]


def _integers(text: str) -> list[int]:
    return [int(v) for v in text.split()]


class TextTrees:
    """A LightGBM text model (one output per row: regression, binary logits, lambdarank) as padded node arrays."""

    def __init__(self, text: str) -> None:
        trees_part = text.split("\nend of trees", 1)[0]
        header, *blocks = re.split(r"^Tree=\d+[ \t]*$", trees_part, flags=re.MULTILINE)
        head = _fields(header)
        if head.get("num_class", "1") != "1" or head.get("num_tree_per_iteration", "1") != "1":
            raise UnsupportedTrees("a model with several outputs per row")
        if "average_output" in header.split():
            raise UnsupportedTrees("a random-forest model (averaged output)")
        self.n_features = int(head.get("max_feature_idx", "-1")) + 1
        trees = []
        for block in blocks:
            fields = _fields(block)
            if "num_leaves" not in fields:
                raise UnsupportedTrees("a tree without num_leaves")
            if fields.get("is_linear", "0") != "0":
                raise UnsupportedTrees("a model with linear trees")
            if int(fields.get("num_cat", "0")):
                raise UnsupportedTrees("a model with categorical splits")
            trees.append(fields)
        if not trees:
            raise UnsupportedTrees("no trees in the model text")
        inner = max(int(t["num_leaves"]) - 1 for t in trees)
        leaves = max(int(t["num_leaves"]) for t in trees)
        shape = (len(trees), max(inner, 1))
        self.feature = np.zeros(shape, dtype=np.intp)
        self.threshold = np.zeros(shape)
        self.default_left = np.zeros(shape, dtype=bool)
        self.missing = np.zeros(shape, dtype=np.int8)  # 0: none, 1: zero, 2: NaN
        self.left = np.full(shape, -1, dtype=np.intp)
        self.right = np.full(shape, -1, dtype=np.intp)
        self.leaf = np.zeros((len(trees), leaves))
        self.depth = 1
        for t, fields in enumerate(trees):
            n = int(fields["num_leaves"]) - 1
            self.leaf[t, : n + 1] = _numbers(fields["leaf_value"])
            if n == 0:  # a single leaf: node 0 stays -1, i.e. leaf ~(-1) = 0
                continue
            decision = np.array(_integers(fields["decision_type"]))
            self.feature[t, :n] = _integers(fields["split_feature"])
            self.threshold[t, :n] = _numbers(fields["threshold"])
            self.default_left[t, :n] = (decision & 2) > 0
            self.missing[t, :n] = (decision >> 2) & 3
            self.left[t, :n] = _integers(fields["left_child"])
            self.right[t, :n] = _integers(fields["right_child"])
            self.depth = max(self.depth, _depth(self.left[t, :n], self.right[t, :n]))
        self.single = np.array([int(f["num_leaves"]) == 1 for f in trees])

    @property
    def n_trees(self) -> int:
        return int(self.leaf.shape[0])

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The raw score of each row of ``x`` (rows x features), as ``Booster.predict(x)`` gives it."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.n_features:
            raise ValueError(f"expected rows of {self.n_features} features, got shape {x.shape}")
        rows = x.shape[0]
        width = self.feature.shape[1]
        base = np.arange(self.n_trees) * width  # the flat index of each tree's node 0
        node = np.where(self.single, -1, 0)[None, :].repeat(rows, axis=0)
        feature, threshold = self.feature.ravel(), self.threshold.ravel()
        missing, default_left = self.missing.ravel(), self.default_left.ravel()
        left, right = self.left.ravel(), self.right.ravel()
        row_base = (np.arange(rows) * x.shape[1])[:, None]
        flat_x = x.ravel()
        for _ in range(self.depth):
            inner = node >= 0
            if not inner.any():
                break
            at = base + np.where(inner, node, 0)
            value = flat_x[row_base + feature[at]]
            kind = missing[at]
            value = np.where(np.isnan(value) & (kind != 2), 0.0, value)
            absent = ((kind == 1) & (np.abs(value) <= ZERO)) | ((kind == 2) & np.isnan(value))
            go_left = np.where(absent, default_left[at], value <= threshold[at])
            node = np.where(inner, np.where(go_left, left[at], right[at]), node)
        values = self.leaf[np.arange(self.n_trees), ~node]
        total = np.zeros(rows)
        for column in values.T:  # tree by tree, in order, as LightGBM adds them
            total += column
        return total


def _depth(left: np.ndarray, right: np.ndarray) -> int:
    """The number of splits on the longest path from the root of one tree."""
    deepest, stack = 0, [(0, 1)]
    while stack:
        index, depth = stack.pop()
        deepest = max(deepest, depth)
        for child in (int(left[index]), int(right[index])):
            if child >= 0:
                stack.append((child, depth + 1))
    return deepest
