"""Turn understanding: knowledge-seeking detection, api_query and intent classification.

Every classifier is a :class:`TextClassifier` (n-gram TF-IDF, sentence-embedding and knowledge-match feature
blocks, then a linear head), saved as JSON + ``.npz`` and never pickled. A :class:`Detector` turns a classifier's
prediction into a :class:`Decision` (does the turn need knowledge, which look-ups); ``DETECTORS`` builds them.
"""

from ragdial.understanding.decision import Decision, Detector
from ragdial.understanding.model import ModelFormatError, TextClassifier
from ragdial.understanding.registry import DETECTORS
from ragdial.understanding.tasks import (
    TASKS,
    api_query_classifier,
    format_api_query,
    intent_classifier,
    new_classifier,
    parse_api_query,
    training_data,
    turn_detector,
)

__all__ = [
    "DETECTORS",
    "TASKS",
    "Decision",
    "Detector",
    "ModelFormatError",
    "TextClassifier",
    "api_query_classifier",
    "format_api_query",
    "intent_classifier",
    "new_classifier",
    "parse_api_query",
    "training_data",
    "turn_detector",
]
