"""The detection-weighted P/R/F the DSTC scorers apply to detection, selection and generation sums."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class DetectionCounts:
    """Knowledge-seeking turn detection counts over instances."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def add(self, gold_target: bool, predicted_target: bool) -> None:
        if gold_target and predicted_target:
            self.tp += 1
        elif gold_target:
            self.fn += 1
        elif predicted_target:
            self.fp += 1
        else:
            self.tn += 1

    def weighted(self, total: float) -> tuple[float, float, float]:
        """A sum over true-positive instances turned into P (over predicted targets), R (over gold targets), F.
        ``weighted(tp)`` is detection P/R/F itself."""
        p = total / (self.tp + self.fp) if self.tp + self.fp > 0 else 0.0
        r = total / (self.tp + self.fn) if self.tp + self.fn > 0 else 0.0
        f = 2 * p * r / (p + r) if p + r > 0 else 0.0
        return p, r, f

    def prf(self) -> dict[str, float]:
        p, r, f = self.weighted(self.tp)
        return {"prec": p, "rec": r, "f1": f}
