"""Detectors over the understanding models: what a predicted ``api_query`` or knowledge-seeking flag means for
the look-ups (the user's profile, the global products, the FAQ)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragdial.jsontypes import JSONDict
from ragdial.schema import Knowledge, SourceKind, Turn
from ragdial.understanding.decision import GLOBAL, LOOKUPS, USER_PROFILE, Decision

if TYPE_CHECKING:
    from ragdial.understanding.model import TextClassifier


def decision_for_api_query(labels: Sequence[str], confidence: float | None = None) -> Decision:
    """MobileCS2 look-up labels → a decision: none → no knowledge; ``[QA]`` → the FAQ; user information → the
    user's profile; product information → the products; handle / cancel / verify → both look-ups."""
    from ragdial.datasets.mobilecs2 import query_source

    label = "，".join(labels)
    if not labels:
        return Decision(False, (), label=label, confidence=confidence, detector="api_query")
    sources = {query_source(one) for one in labels}
    lookups: set[str] = set()
    kinds: set[SourceKind] = set()
    for source in sources:
        if source == SourceKind.USER_PROFILE:
            lookups.add(USER_PROFILE)
        elif source in (SourceKind.FAQ, SourceKind.PRODUCT):
            lookups.add(GLOBAL)
            kinds.add(source)
        else:  # a transaction (handle, cancel, verify): the user's services and the product details both matter
            lookups.update(LOOKUPS)
    if None in sources:
        kinds.clear()
    ordered = tuple(x for x in LOOKUPS if x in lookups)
    return Decision(True, ordered, tuple(sorted(kinds)), label=label, confidence=confidence, detector="api_query")


class _ModelDetector:
    """A detector over a saved :class:`TextClassifier` (``model``: where it was loaded from)."""

    name = ""

    def __init__(self, classifier: TextClassifier, model: str | None = None) -> None:
        self.classifier = classifier
        self.model = model

    def warm_up(self) -> None:
        return None

    def close(self) -> None:
        return None

    def to_config(self) -> JSONDict:
        return {"name": self.name, "model": self.model}


class ApiQueryDetector(_ModelDetector):
    """Predicts the MobileCS2 ``api_query`` labels of the turn (ragdial.understanding) and maps them to look-ups."""

    name = "api_query"

    def decide(self, context: Sequence[Turn], language: str) -> Decision:
        from ragdial.understanding.tasks import api_query_labels

        return decision_for_api_query(api_query_labels(self.classifier.predict_one(list(context))))


class KnowledgeSeekingDetector(_ModelDetector):
    """Does the turn need knowledge at all (ragdial.understanding's detector); if so, both look-ups."""

    name = "knowledge_seeking"

    def __init__(self, classifier: TextClassifier, threshold: float = 0.5, model: str | None = None) -> None:
        super().__init__(classifier, model)
        self.threshold = threshold

    def decide(self, context: Sequence[Turn], language: str) -> Decision:
        probability = float(self.classifier.probabilities([list(context)])[0].ravel()[-1])
        needs = probability >= self.threshold
        return Decision(needs, LOOKUPS if needs else (), confidence=probability, detector=self.name)

    def to_config(self) -> JSONDict:
        return {**super().to_config(), "threshold": self.threshold}


class ZeroShotDetector(KnowledgeSeekingDetector):
    """A knowledge-conditioned detector (``tasks.zero_shot_detector``) matched against the deployment KB: the
    system's knowledge items are handed to it by its factory (``set_knowledge``), not the KB it was trained on."""

    name = "zero_shot"

    def __init__(
        self, classifier: TextClassifier, threshold: float = 0.5, model: str | None = None, calibrate: bool = True
    ) -> None:
        super().__init__(classifier, threshold, model)
        self.trained_threshold = threshold
        self.calibrate = calibrate

    def set_knowledge(self, items: Sequence[Knowledge]) -> None:
        """Match turns against ``items`` from now on; with ``calibrate``, move the threshold to the one that accepts
        this KB's own questions at the rate the configured threshold accepts the training KB's
        (:func:`ragdial.understanding.kb_calibration.kb_threshold`; kept when the model or the KB gives no
        reference)."""
        from ragdial.understanding.kb_calibration import kb_threshold

        self.classifier.set_knowledge(list(items))
        calibrated = kb_threshold(self.classifier, list(items), self.trained_threshold) if self.calibrate else None
        self.threshold = self.trained_threshold if calibrated is None else calibrated

    def to_config(self) -> JSONDict:
        return {**super().to_config(), "threshold": self.trained_threshold, "calibrate": self.calibrate}
