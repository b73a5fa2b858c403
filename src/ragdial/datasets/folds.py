"""Dialog-grouped development folds for data without a training split (DSTC11 val, Huawei valid, KdConv).

The rule of ``shared/data/README.md``: group examples by the text of their dialog's first turn and put a group in
fold ``zlib.crc32(text.encode("utf-8")) % k``; fold 0 is the dev fold, the others train.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from ragdial.schema import Example


def fold_of_text(first_turn_text: str, k: int = 5) -> int:
    """The fold of a dialog given the text of its first turn."""
    return zlib.crc32(first_turn_text.encode("utf-8")) % k


def fold_of(example: Example, k: int = 5) -> int:
    """The fold of an example: crc32 of its dialog's first turn text, modulo ``k``."""
    return fold_of_text(example.context[0].text if example.context else "", k)


def split_folds(examples: Sequence[Example], dev_fold: int = 0, k: int = 5) -> tuple[list[Example], list[Example]]:
    """(train, dev): examples outside and inside ``dev_fold``."""
    train: list[Example] = []
    dev: list[Example] = []
    for example in examples:
        (dev if fold_of(example, k) == dev_fold else train).append(example)
    return train, dev
