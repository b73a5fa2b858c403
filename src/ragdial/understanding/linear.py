"""A linear head: weights learned with scikit-learn, kept as numpy arrays, applied with a matrix product.

``mode`` is ``multiclass`` (one label per input, softmax over classes), ``binary`` (``classes`` = [False, True],
sigmoid of one score) or ``multilabel`` (an independent sigmoid per class, plus an ``empty_label`` class for "no
label"; every class at or over ``threshold`` is predicted, and where none is, the most probable one — so that with
little data a turn still gets its likeliest reading, which may be "no label"; an input without any known feature
gets no label; ``tune_thresholds`` picks one threshold per class by out-of-fold F1, for rare classes).
``solver`` is ``logistic``
(LogisticRegression: calibrated probabilities) or ``svm`` (LinearSVC: probabilities are the sigmoid/softmax of the
margins, not calibrated).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, TypeAlias

import numpy as np
from scipy import sparse

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict, JSONObject, JSONValue
from ragdial.understanding.saved import array, number

MODES = ("multiclass", "binary", "multilabel")
SOLVERS = ("logistic", "svm")
CONSTANT_BIAS = 20.0
"""The bias of a multi-label class that was always (or never) present in training: sigmoid(±20) ≈ 1 (0)."""

Label: TypeAlias = str | bool
"""A class: an intent or ``api_query`` label, or the detector's ``False``/``True``."""
Target: TypeAlias = Label | Collection[Label]
"""What one input is labelled with: one label (multiclass, binary) or a set of labels (multilabel)."""
LabelPrediction: TypeAlias = Label | list[Label]
"""What the head predicts for one input: a label (multiclass), a bool (binary) or a list of labels (multilabel)."""


def single_label(target: Target) -> Label:
    """``target`` as the one label of a multiclass or binary input (a ``TypeError`` for a set of labels)."""
    if isinstance(target, str) or not isinstance(target, Collection):
        return target
    raise TypeError(f"expected one label, found {type(target).__name__} {target!r}")


def label_set(target: Target) -> Collection[Label]:
    """``target`` as the labels of a multilabel input (a ``TypeError`` for a single non-text label)."""
    if isinstance(target, Collection):
        return target
    raise TypeError(f"expected a list of labels, found {type(target).__name__} {target!r}")


def _labels(value: JSONValue) -> list[Label]:
    """Saved classes: a JSON array of texts and bools."""
    out: list[Label] = []
    for item in array(value, "classes"):
        if not isinstance(item, str | bool):
            raise TypeError(f"classes: expected texts or bools, found {type(item).__name__}")
        out.append(item)
    return out


def _estimator(solver: str, c: float, class_weight: str | None) -> Any:  # Any: sklearn
    if solver == "logistic":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(C=c, max_iter=3000, class_weight=class_weight)
    from sklearn.svm import LinearSVC

    return LinearSVC(C=c, class_weight=class_weight)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -50, 50)))


class LinearHead:
    """Weights ``W`` (one row per class, one row in binary mode) and biases ``b``."""

    def __init__(
        self,
        mode: str = "multiclass",
        solver: str = "logistic",
        c: float = 10.0,
        class_weight: str | None = None,
        threshold: float = 0.5,
        empty_label: str | None = None,
        tune_thresholds: bool = False,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        if solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, not {solver!r}")
        self.mode, self.solver, self.c, self.class_weight, self.threshold = mode, solver, c, class_weight, threshold
        self.empty_label = empty_label if mode == "multilabel" else None
        self.tune_thresholds = tune_thresholds and mode == "multilabel"
        self.thresholds: list[float] = []  # multilabel: one per class ([] = ``threshold`` for all)
        self.classes: list[Label] = []
        self.weights = np.zeros((0, 0), dtype=np.float32)
        self.bias = np.zeros(0, dtype=np.float32)

    def config(self) -> JSONDict:
        return {
            "mode": self.mode,
            "solver": self.solver,
            "c": self.c,
            "class_weight": self.class_weight,
            "threshold": self.threshold,
            "empty_label": self.empty_label,
            "tune_thresholds": self.tune_thresholds,
        }

    def fit(self, features: sparse.csr_matrix, targets: Sequence[Target], classes: Sequence[Label]) -> LinearHead:
        """Fit on ``targets``: a class per row (multiclass/binary) or a set of classes per row (multilabel)."""
        self.classes = list(classes)
        if self.mode == "multilabel":
            return self._fit_multilabel(features, [label_set(t) for t in targets])
        labels = [single_label(t) for t in targets]
        seen = sorted(set(labels), key=self.classes.index)
        if len(seen) < 2:
            raise RagdialError(f"training needs at least two classes; the data has only {seen}")
        model = _estimator(self.solver, self.c, self.class_weight).fit(features, labels)
        model_classes = list(model.classes_)
        coef, intercept = np.asarray(model.coef_), np.asarray(model.intercept_)
        if self.mode == "binary":
            self.classes = [False, True]
            sign = 1.0 if model_classes[1] is True or model_classes[1] == 1 else -1.0
            self.weights, self.bias = (sign * coef).astype(np.float32), (sign * intercept).astype(np.float32)
            return self
        if len(model_classes) == 2:  # sklearn keeps one row for two classes: score of the second
            coef = np.vstack([-coef[0] / 2, coef[0] / 2])
            intercept = np.array([-intercept[0] / 2, intercept[0] / 2])
        weights = np.zeros((len(self.classes), features.shape[1]), dtype=np.float32)
        bias = np.full(len(self.classes), -CONSTANT_BIAS, dtype=np.float32)  # classes absent from training
        for row, label in enumerate(model_classes):
            index = self.classes.index(label)
            weights[index], bias[index] = coef[row], intercept[row]
        self.weights, self.bias = weights, bias
        return self

    def _fit_multilabel(self, features: sparse.csr_matrix, targets: Sequence[Collection[Label]]) -> LinearHead:
        if self.empty_label is not None:
            if self.empty_label in self.classes:
                raise RagdialError(f"{self.empty_label!r} is reserved for 'no label' and cannot be a label")
            self.classes.append(self.empty_label)
            targets = [list(t) or [self.empty_label] for t in targets]
        weights = np.zeros((len(self.classes), features.shape[1]), dtype=np.float32)
        bias = np.zeros(len(self.classes), dtype=np.float32)
        for index, label in enumerate(self.classes):
            y = np.array([label in t for t in targets])
            if y.all() or not y.any():
                bias[index] = CONSTANT_BIAS if y.all() else -CONSTANT_BIAS
                continue
            model = _estimator(self.solver, self.c, self.class_weight).fit(features, y)
            weights[index], bias[index] = np.asarray(model.coef_)[0], np.asarray(model.intercept_)[0]
        self.weights, self.bias = weights, bias
        self.thresholds = self._tuned_thresholds(features, targets) if self.tune_thresholds else []
        return self

    def _tuned_thresholds(
        self, features: sparse.csr_matrix, targets: Sequence[Collection[Label]], folds: int = 3
    ) -> list[float]:
        """Per class, the threshold that maximises F1 on out-of-fold probabilities (3 folds, rows in order); a
        class with fewer than ``folds`` positives or negatives keeps ``threshold``. Ties go to the value nearest it."""
        grid = np.round(np.arange(0.05, 0.951, 0.05), 2)
        tuned = []
        for label in self.classes:
            y = np.array([label in t for t in targets])
            if min(int(y.sum()), int((~y).sum())) < folds:
                tuned.append(self.threshold)
                continue
            oof = np.zeros(len(y))
            positions = np.arange(len(y))
            for fold in range(folds):
                test = positions % folds == fold
                if y[~test].all() or not y[~test].any():
                    oof[test] = float(y[~test].mean())
                    continue
                model = _estimator(self.solver, self.c, self.class_weight).fit(features[~test], y[~test])
                margins = np.asarray(features[test] @ np.asarray(model.coef_)[0]).ravel() + model.intercept_[0]
                oof[test] = _sigmoid(margins)
            best, best_f1 = self.threshold, -1.0
            for value in sorted(grid, key=lambda v: abs(v - self.threshold)):
                predicted = oof >= value
                tp = int((predicted & y).sum())
                f1 = 2 * tp / (int(predicted.sum()) + int(y.sum())) if tp else 0.0
                if f1 > best_f1 + 1e-12:
                    best, best_f1 = float(value), f1
            tuned.append(best)
        return tuned

    def scores(self, features: sparse.csr_matrix) -> np.ndarray:
        """Raw margins, one column per weight row."""
        return np.asarray(features @ self.weights.T) + self.bias

    def probabilities(self, features: sparse.csr_matrix) -> np.ndarray:
        """Class probabilities: softmax (multiclass), P(True) as one column (binary), per-class sigmoid (multilabel)."""
        margins = self.scores(features)
        if self.mode != "multiclass":
            return _sigmoid(margins)
        margins = margins - margins.max(axis=1, keepdims=True)
        exp = np.exp(margins)
        return exp / exp.sum(axis=1, keepdims=True)

    def predict(self, features: sparse.csr_matrix) -> list[LabelPrediction]:
        """A class per row (multiclass), a bool per row (binary) or a list of classes per row (multilabel)."""
        probabilities = self.probabilities(features)
        if self.mode == "multiclass":
            return [self.classes[i] for i in probabilities.argmax(axis=1)]
        if self.mode == "binary":
            return [bool(p) for p in probabilities[:, 0] >= self.threshold]
        result: list[LabelPrediction] = []
        no_evidence = np.asarray(features.getnnz(axis=1)) == 0
        for row, empty in zip(probabilities, no_evidence, strict=True):
            if empty:  # nothing known in the input (empty text, unseen words only): no label
                result.append([])
                continue
            limits = np.asarray(self.thresholds) if self.thresholds else np.full(len(row), self.threshold)
            margin = row - limits
            chosen = [int(i) for i in np.flatnonzero(margin >= 0)] or [int(margin.argmax())]
            if self.empty_label in self.classes:  # "no label" wins when it is the most confident choice
                empty = self.classes.index(self.empty_label)
                if empty in chosen and margin[empty] >= max(margin[i] for i in chosen):
                    chosen = [empty]
            result.append([self.classes[i] for i in chosen if self.classes[i] != self.empty_label])
        return result

    def state(self) -> tuple[JSONDict, dict[str, np.ndarray]]:
        return {"classes": self.classes, "thresholds": self.thresholds}, {"weights": self.weights, "bias": self.bias}

    def load_state(self, data: JSONObject, arrays: Mapping[str, np.ndarray]) -> None:
        self.classes = _labels(data["classes"])
        self.thresholds = [number(t, "thresholds") for t in array(data.get("thresholds") or [], "thresholds")]
        self.weights, self.bias = arrays["weights"].astype(np.float32), arrays["bias"].astype(np.float32)
        rows = 1 if self.mode == "binary" else len(self.classes)
        if self.weights.shape[0] != rows or self.bias.shape != (rows,):
            raise ValueError(f"weights {self.weights.shape} and bias {self.bias.shape} do not fit {rows} classes")
