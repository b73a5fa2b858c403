"""``DETECTORS``: the turn detectors a config can name. Factories only load a saved model; training is
``ragdial train detector [--zero-shot]`` / ``ragdial train api-query``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragdial.components import BuildContext, ConfigError, Registry
from ragdial.understanding.decision import LOOKUPS, AlwaysRetrieve, Detector

if TYPE_CHECKING:
    from ragdial.understanding.model import TextClassifier

DETECTORS: Registry[Detector] = Registry("detector")


def always(ctx: BuildContext, lookups: list[str] | None = None) -> Detector:
    """Every turn looks knowledge up (both the user profile and the global knowledge unless ``lookups`` says)."""
    chosen = tuple(lookups or LOOKUPS)
    if not set(chosen) <= set(LOOKUPS):
        raise ConfigError(f"detector 'always': lookups must be among {', '.join(LOOKUPS)}, got {lookups!r}")
    return AlwaysRetrieve(chosen)


def _load(name: str, model: str | None, command: str) -> TextClassifier:
    from ragdial.understanding.model import TextClassifier

    if not model:
        raise ConfigError(f"detector {name!r} needs 'model': a saved model folder (train one with `{command}`)")
    return TextClassifier.load(model)


def api_query(ctx: BuildContext, model: str | None = None) -> Detector:
    """MobileCS2 look-up prediction → none / FAQ / user profile / products, from a saved api_query model."""
    from ragdial.understanding.detectors import ApiQueryDetector

    return ApiQueryDetector(_load("api_query", model, "ragdial train api-query"), model)


def knowledge_seeking(ctx: BuildContext, model: str | None = None, threshold: float = 0.5) -> Detector:
    """Knowledge-seeking turn detection (DSTC task 1) from a saved detector model; both look-ups when it fires."""
    from ragdial.understanding.detectors import KnowledgeSeekingDetector

    return KnowledgeSeekingDetector(_load("knowledge_seeking", model, "ragdial train detector"), threshold, model)


def zero_shot(ctx: BuildContext, model: str | None = None, threshold: float = 0.5, calibrate: bool = True) -> Detector:
    """A saved zero-shot (knowledge-conditioned) detector, matched against the system's own knowledge items;
    ``calibrate`` moves ``threshold`` to the system's KB from the KB's own questions (``kb_calibration``)."""
    from ragdial.understanding.detectors import ZeroShotDetector

    classifier = _load("zero_shot", model, "ragdial train detector --zero-shot")
    if not any(block.kind == "knowledge_cues" for block in classifier.blocks):
        raise ConfigError(f"detector 'zero_shot': {model} is not a zero-shot detector (no knowledge cues)")
    detector = ZeroShotDetector(classifier, threshold, model, calibrate)
    detector.set_knowledge(list(ctx.kb))
    return detector


DETECTORS.register("always", always, "no model: every turn looks up the user profile and the global knowledge", True)
DETECTORS.register("api_query", api_query, "a saved api_query model decides whether and where to look up")
DETECTORS.register("knowledge_seeking", knowledge_seeking, "a saved knowledge-seeking turn detector; both look-ups")
DETECTORS.register("zero_shot", zero_shot, "a saved zero-shot detector matched against the system's knowledge base")
