"""Krippendorff's alpha against the worked example in Krippendorff (2011), 'Computing Krippendorff's
Alpha-Reliability': 4 observers, 12 units, missing values."""

from __future__ import annotations

import pytest

from ragdial.metrics.agreement import krippendorff_alpha

N = None
DATA = [  # rows: observers A-D, columns: units 1-12
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]
UNITS = [list(column) for column in zip(*DATA, strict=True)]


@pytest.mark.parametrize(("level", "expected"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_worked_example(level, expected):
    assert krippendorff_alpha(UNITS, level) == pytest.approx(expected, abs=5e-4)


def test_perfect_and_undefined():
    assert krippendorff_alpha([[1, 1], [2, 2], [0, 0]]) == pytest.approx(1.0)
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None  # no variation: undefined
    assert krippendorff_alpha([[1], [2]]) is None  # no unit rated twice
    with pytest.raises(ValueError):
        krippendorff_alpha(UNITS, "ratio")
