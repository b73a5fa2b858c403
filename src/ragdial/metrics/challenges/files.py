"""Read gold and prediction files for the challenge scorers, checking them as the organisers' checkers do."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragdial.datasets._io import expect, field, read_json
from ragdial.errors import DataFormatError

TRACK2_FIELD = "客服-生成"


def _turn_key(path: Path, index: int, record: Any) -> tuple[str, int]:
    dial_id = field(path, index, record, "id", str)
    turn = field(path, index, record, "turn_num", (str, int))
    try:
        return dial_id, int(turn)
    except ValueError:
        raise DataFormatError(path, f"turn_num must be an integer, found {turn!r}", index, "turn_num") from None


def read_mobilecs2_dialogs(path: str | Path) -> dict[str, dict[str, Any]]:
    """A MobileCS2 dialogs file: ``{dial_id: {"log": [{"user","system","api_query","api_result"}], "local_kb"}}``."""
    path = Path(path)
    data = expect(path, read_json(path), dict)
    for dial_id, dialog in data.items():
        log = field(path, dial_id, dialog, "log", list)
        for index, turn in enumerate(log):
            for name in ("system", "api_result"):
                field(path, f"{dial_id}, turn {index}", turn, name, str)
        local = dialog.get("local_kb", [])
        if not isinstance(local, list) or not all(isinstance(x, str) for x in local):
            raise DataFormatError(path, "expected a list of strings", dial_id, "local_kb")
    return data


def read_track1_predictions(path: str | Path) -> dict[tuple[str, int], list[int]]:
    """Track-1 submission: ``[{"id", "turn_num", "top20_id": [int, ...]}]``."""
    path = Path(path)
    data = expect(path, read_json(path), list)
    result: dict[tuple[str, int], list[int]] = {}
    for index, record in enumerate(data):
        key = _turn_key(path, index, record)
        ranked = field(path, index, record, "top20_id", list)
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in ranked):
            raise DataFormatError(path, "top20_id must be a list of integers", index, "top20_id")
        if len(ranked) > 20:
            raise DataFormatError(path, f"top20_id holds {len(ranked)} ids (at most 20)", index, "top20_id")
        if key in result:
            raise DataFormatError(path, f"turn {key[1]} of dialog {key[0]} appears twice", index)
        result[key] = ranked
    return result


def read_track2_predictions(path: str | Path) -> dict[tuple[str, int], str]:
    """Track-2 submission: ``[{"id", "turn_num", "客服-生成": str}]``."""
    path = Path(path)
    data = expect(path, read_json(path), list)
    result: dict[tuple[str, int], str] = {}
    for index, record in enumerate(data):
        key = _turn_key(path, index, record)
        if key in result:
            raise DataFormatError(path, f"turn {key[1]} of dialog {key[0]} appears twice", index)
        result[key] = field(path, index, record, TRACK2_FIELD, str)
    return result


def require_all(path: str | Path, predictions: Mapping[Any, Any], keys: list[Any], what: str) -> None:
    """Every gold key must have a prediction; name the first few that do not."""
    missing = [k for k in keys if k not in predictions]
    if missing:
        shown = ", ".join(str(k) for k in missing[:5])
        raise DataFormatError(path, f"no prediction for {len(missing)} of {len(keys)} {what} (first: {shown})")
