"""A deterministic prediction file with known mistakes, made from DSTC gold labels (shared by tests and docs)."""

from __future__ import annotations

import copy
from typing import Any


def dstc_mistakes(gold: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Flip some targets, drop/duplicate/replace knowledge, damage or empty some responses."""
    predictions = []
    last_target: dict[str, Any] | None = None
    for index, label in enumerate(gold):
        hyp = copy.deepcopy(label)
        if index % 11 == 0 and last_target is not None:
            if hyp["target"]:
                hyp = {"target": False}
            else:
                hyp = {"target": True, "knowledge": copy.deepcopy(last_target["knowledge"]), "response": "Sure."}
        elif hyp["target"]:
            knowledge = hyp["knowledge"]
            if index % 5 == 1 and len(knowledge) > 1:
                knowledge.pop()
            elif index % 5 == 2:
                knowledge.append(copy.deepcopy(knowledge[0]))
            if index % 7 == 3 and last_target is not None:
                hyp["knowledge"] = copy.deepcopy(last_target["knowledge"])
            words = hyp["response"].split()
            if index % 19 == 7:
                hyp["response"] = ""
            elif index % 3 == 0:
                hyp["response"] = " ".join(reversed(words))
            elif index % 3 == 1:
                hyp["response"] = " ".join(words[: max(1, len(words) // 2)])
        elif index % 17 == 5 and last_target is not None:
            hyp["knowledge"] = copy.deepcopy(last_target["knowledge"])  # counted by DSTC11 selection
        if label["target"]:
            last_target = label
        predictions.append(hyp)
    return predictions
