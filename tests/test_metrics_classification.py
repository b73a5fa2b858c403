"""Classification metrics by hand, and the confusion-matrix PNG."""

from __future__ import annotations

import pytest

from ragdial.metrics.classification import classification_report, plot_confusion

GOLD = ["weather", "weather", "chat", "music", "music", "music"]
PRED = ["weather", "chat", "chat", "music", "weather", "music"]


def test_report_by_hand():
    report = classification_report(GOLD, PRED)
    assert report["labels"] == ["chat", "music", "weather"]
    assert report["accuracy"] == pytest.approx(4 / 6)
    assert report["micro"]["f1"] == pytest.approx(4 / 6)  # single-label: micro = accuracy
    chat, music, weather = (report["per_class"][k] for k in ("chat", "music", "weather"))
    assert (chat["precision"], chat["recall"]) == (pytest.approx(0.5), pytest.approx(1.0))
    assert (music["precision"], music["recall"]) == (pytest.approx(1.0), pytest.approx(2 / 3))
    assert (weather["precision"], weather["recall"]) == (pytest.approx(0.5), pytest.approx(0.5))
    f1s = [2 / 3, 0.8, 0.5]
    assert report["macro"]["f1"] == pytest.approx(sum(f1s) / 3)
    assert report["confusion"] == [[1, 0, 0], [0, 2, 1], [1, 0, 1]]


def test_agrees_with_sklearn():
    from sklearn.metrics import f1_score

    report = classification_report(GOLD, PRED)
    assert report["macro"]["f1"] == pytest.approx(f1_score(GOLD, PRED, average="macro"))
    assert report["micro"]["f1"] == pytest.approx(f1_score(GOLD, PRED, average="micro"))


def test_label_outside_set_and_length_mismatch():
    with pytest.raises(ValueError, match="label 'b' is not in the label set"):
        classification_report(["a"], ["b"], labels=["a"])
    with pytest.raises(ValueError, match="label 'x' is not in the label set"):  # the gold label is the one named
        classification_report(["x"], ["a"], labels=["a"])
    with pytest.raises(ValueError, match="1 gold labels for 2"):
        classification_report(["a"], ["a", "b"])


def test_no_examples_score_zero():
    report = classification_report([], [], labels=["a", "b"])
    assert report["accuracy"] == 0.0 and report["micro"]["f1"] == 0.0 and report["confusion"] == [[0, 0], [0, 0]]


def test_confusion_png(tmp_path):
    report = classification_report(GOLD, PRED)
    path = plot_confusion(report["confusion"], report["labels"], tmp_path / "cm.png", "toy")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 2000
