"""Understanding details the model tests do not pin, each on a small hand-written input: a decision as the service
reports it, the view of a context that ends in a system turn, the English follow-up's word limit, the recipe's
detector threshold, an unknown task named, a saved head's bad threshold named, the knowledge matcher's default
encoder. Written from surviving mutants of ``ragdial.understanding`` (docs/testing.md, session 7)."""

from __future__ import annotations

import numpy as np
import pytest

from ragdial.datasets import Dataset
from ragdial.errors import RagdialError
from ragdial.schema import KnowledgeBase, SourceKind, Speaker, Turn
from ragdial.understanding.decision import Decision
from ragdial.understanding.knowledge_cues import KnowledgeMatcher
from ragdial.understanding.linear import LinearHead
from ragdial.understanding.policy import classify_turn, rewrite_turn
from ragdial.understanding.tasks import new_classifier
from ragdial.understanding.views import view_text

EMPTY = Dataset("dstc9", "val", "en", KnowledgeBase([]), [], [])


def test_a_decision_as_the_service_reports_it():
    decision = Decision(True, ("global",), (SourceKind.FAQ,), "faq", 0.75, "detector")
    assert decision.to_dict() == {
        "needs_knowledge": True,
        "lookups": ["global"],
        "sources": ["faq"],
        "label": "faq",
        "confidence": 0.75,
        "detector": "detector",
    }


def test_the_views_of_a_context_ending_in_a_system_turn():
    context = [
        Turn(Speaker.USER, "u1"),
        Turn(Speaker.SYSTEM, "s1"),
        Turn(Speaker.USER, "u2"),
        Turn(Speaker.SYSTEM, "s2"),
    ]
    assert view_text(context, "last_user") == "u2"  # the newest user turn, one back from the end
    assert view_text(context, "last_system") == "s1"  # the system turn before it
    assert view_text(context, "history") == "u1\ns1"


def _rewrite(text: str) -> str:
    context = [Turn(Speaker.USER, "Night Pack please"), Turn(Speaker.SYSTEM, "ok"), Turn(Speaker.USER, text)]
    return rewrite_turn(context, classify_turn(text), lambda _: None, ["Night Pack"]).text


def test_an_english_follow_up_of_six_words_is_short_seven_is_not():
    six = "how much is it per month?"
    assert _rewrite(six) == f"Night Pack {six}"
    seven = "so how much is it per month?"
    assert _rewrite(seven) == seven


def test_the_detector_recipe_keeps_its_threshold_and_an_unknown_task_is_named():
    assert new_classifier("detector", EMPTY, embedding="hash", threshold=0.3).head.threshold == 0.3
    with pytest.raises(RagdialError, match=r"^unknown task 'weather'; known: "):
        new_classifier("weather", EMPTY)


def test_a_saved_head_with_a_threshold_that_is_no_number_names_the_field():
    head = LinearHead("multilabel", "logistic")
    arrays = {"weights": np.zeros((2, 3), np.float32), "bias": np.zeros(2, np.float32)}
    with pytest.raises(TypeError, match=r"^thresholds: expected a number, found list$"):
        head.load_state({"classes": ["a", "b"], "thresholds": [0.5, [0.5]]}, arrays)


def test_the_knowledge_matcher_encodes_with_use_by_default():
    assert KnowledgeMatcher([]).encoder_name == "use"


def test_a_knowledge_match_never_seen_in_training_is_left_unscaled():
    from ragdial.understanding.features import KnowledgeMatch

    def block(training: list) -> KnowledgeMatch:
        match = KnowledgeMatch("last_user")
        match.set_knowledge(["Breakfast is served from seven", "The pool opens at nine"])
        return match.fit(training)

    context = [[Turn(Speaker.USER, "when is breakfast served")]]
    raw = block([]).transform(context).toarray()  # fitted on nothing: every scale 1
    assert raw.max() > 0
    # trained on a turn with no word of the knowledge, every column peaks at 0: divided by 1, not by a guess
    assert np.allclose(block([[Turn(Speaker.USER, "hello there")]]).transform(context).toarray(), raw)
