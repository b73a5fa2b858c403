"""SMP2017-ECDT task 1: a folder of ``<split>_<label>.txt`` files, one utterance a line (UTF-8 with BOM, CRLF).

``ROOT/<split>/<split>_<label>.txt`` (or the files directly in the folder given). Predictions are written as a
JSON list of ``{"id", "text", "label"}`` in the order of the examples.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ragdial.errors import DataFormatError
from ragdial.io import expect, field, read_json, write_json
from ragdial.schema import Dataset, Dialog, Example, KnowledgeBase, Speaker, Turn


def _split_folder(root: Path, split: str) -> Path:
    if (root / split).is_dir():
        return root / split
    if root.is_dir() and any(root.glob(f"{split}_*.txt")):
        return root
    raise DataFormatError(root, f"no {split}_<label>.txt files here or in {root / split}")


def load(root: str | Path, split: str = "train") -> Dataset:
    """Load one split; the label of each utterance is the file name's suffix."""
    folder = _split_folder(Path(root), split)
    dialogs, examples = [], []
    for path in sorted(folder.glob(f"{split}_*.txt")):
        label = path.stem[len(split) + 1 :]
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise DataFormatError(path, f"not UTF-8 (byte {err.start})") from None
        for line_no, line in enumerate(text.splitlines(), start=1):
            utterance = line.strip()
            if not utterance:
                continue
            example_id = f"{split}:{label}:{line_no}"
            turn = Turn(Speaker.USER, utterance)
            dialogs.append(Dialog(example_id, [turn]))
            examples.append(Example(example_id, example_id, 1, [turn], intent=label))
    if not examples:
        raise DataFormatError(folder, f"no utterances in {split}_<label>.txt files")
    return Dataset("smp2017", split, "zh", KnowledgeBase(), dialogs, examples, str(folder))


def labels(dataset: Dataset) -> list[str]:
    """The sorted label set of a split."""
    return sorted({e.intent for e in dataset.examples if e.intent})


def write_predictions(path: str | Path, examples: Iterable[Example]) -> Path:
    """Write ``[{"id", "text", "label"}]`` with each example's predicted ``intent``."""
    return write_json(path, [{"id": e.id, "text": e.last_user_text, "label": e.intent} for e in examples])


def read_predictions(path: str | Path) -> dict[str, str]:
    """Read a predictions JSON into ``{id: label}``: the official ``label`` key, or ``prediction`` as ``ragdial
    predict`` writes it."""
    data = expect(path, read_json(path), list)
    result = {}
    for index, record in enumerate(data):
        key = (
            "label" if not isinstance(record, dict) or "label" in record or "prediction" not in record else "prediction"
        )
        result[field(path, index, record, "id", str)] = field(path, index, record, key, str)
    return result
