"""Per-knowledge-base calibration of a zero-shot detector, from the knowledge base itself (no labelled dialogs).

A knowledge-conditioned detector's probabilities move with the knowledge base: a turn matches DSTC9's 2,900 short
snippets less closely than DSTC11's FAQs, so the same threshold accepts fewer real questions on a new KB. The KB's
own questions (FAQ questions, snippet titles) show by how much. Each question is asked as the opening request of a
dialog (after a greeting), scored against the *other half* of the KB (items split in two by a hash of their id), so
that it never matches itself, as a user's own wording would not.

At training time :func:`fit_reference` stores the distribution of those scores on the training KB (101 quantiles
in ``classifier.meta``). At deployment :func:`kb_threshold` finds the share of training questions the configured
threshold rejects and returns the threshold that rejects the same share of the deployment KB's questions: the
detector then accepts the new KB's questions at the rate it was trained to accept the old one's. No label of the
deployment data is read. A KB with fewer than ``MIN_QUESTIONS`` questions (e.g. KdConv's triples have none), or a
threshold outside the range of the training questions' scores, keeps the configured threshold.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ragdial.jsontypes import JSONDict
from ragdial.schema import Knowledge, Speaker, Turn
from ragdial.text.tokenize import detect_language

META_KEY = "kb_calibration"
MIN_QUESTIONS = 20
MAX_QUESTIONS = 2000


class Calibrated(Protocol):
    """What the calibration needs of a classifier (a :class:`TextClassifier`)."""

    meta: JSONDict

    def set_knowledge(self, items: Sequence[Knowledge]) -> None: ...

    def probabilities(self, inputs: Sequence[list[Turn]]) -> np.ndarray: ...


OPENING = {
    "en": ("Hello.", "Hello, how can I help you?"),
    "zh": ("你好。", "你好，请问有什么可以帮您？"),
}


def kb_questions(items: Sequence[Knowledge]) -> list[tuple[int, str]]:
    """(half, question) for every item with a question title (``fields["title"]``); half = crc32(id) % 2. At most
    ``MAX_QUESTIONS``, taken in a fixed order."""
    seen: set[str] = set()
    out = []
    for item in items:
        title = item.fields.get("title")
        if isinstance(title, str) and title.strip() and title.strip() not in seen:
            seen.add(title.strip())
            out.append((zlib.crc32(item.id.encode("utf-8")) % 2, title.strip()))
    out.sort(key=lambda pair: zlib.crc32(pair[1].encode("utf-8")))
    return out[:MAX_QUESTIONS]


def as_opening_request(question: str) -> list[Turn]:
    """The question asked right after a greeting (the language's own greeting)."""
    user, system = OPENING.get(detect_language(question), OPENING["en"])
    return [Turn(Speaker.USER, user), Turn(Speaker.SYSTEM, system), Turn(Speaker.USER, question)]


def held_out_scores(classifier: Calibrated, items: Sequence[Knowledge]) -> np.ndarray:
    """P(knowledge-seeking) of each KB question asked as an opening request, matched against the other half of the
    KB. Leaves the classifier matched against ``items`` (all of them)."""
    questions = kb_questions(items)
    scores = []
    halves = [zlib.crc32(item.id.encode("utf-8")) % 2 for item in items]
    try:
        for half in (0, 1):
            asked = [as_opening_request(q) for h, q in questions if h == half]
            if not asked:
                continue
            classifier.set_knowledge([item for item, h in zip(items, halves, strict=True) if h != half])
            scores.append(np.asarray(classifier.probabilities(asked))[:, -1])
    finally:
        classifier.set_knowledge(list(items))
    return np.concatenate(scores) if scores else np.zeros(0)


def fit_reference(classifier: Calibrated, items: Sequence[Knowledge]) -> JSONDict | None:
    """Store the training KB's held-out question scores (101 quantiles) in ``classifier.meta``; None (nothing
    stored) when the KB has fewer than ``MIN_QUESTIONS`` questions."""
    scores = held_out_scores(classifier, items)
    if len(scores) < MIN_QUESTIONS:
        classifier.meta.pop(META_KEY, None)
        return None
    reference: JSONDict = {
        "questions": len(scores),
        "quantiles": [float(v) for v in np.quantile(scores, np.linspace(0, 1, 101))],
    }
    classifier.meta[META_KEY] = reference
    return reference


def kb_threshold(classifier: Calibrated, items: Sequence[Knowledge], threshold: float) -> float | None:
    """The threshold on the deployment KB ``items`` that rejects the share of its questions that ``threshold``
    rejects of the training KB's; None when the model has no reference, the KB too few questions, or ``threshold``
    lies outside the training questions' scores. Leaves the classifier matched against ``items``."""
    reference = classifier.meta.get(META_KEY)
    if not isinstance(reference, dict) or len(kb_questions(items)) < MIN_QUESTIONS:
        return None
    quantiles = np.asarray(reference.get("quantiles") or [0.0], dtype=float)
    if not quantiles[0] < threshold < quantiles[-1]:  # every training question on one side: no share to match
        return None
    rejected = float(np.interp(threshold, quantiles, np.linspace(0, 1, len(quantiles))))
    scores = held_out_scores(classifier, items)
    return float(np.clip(np.quantile(scores, rejected), 0.01, 0.99))
