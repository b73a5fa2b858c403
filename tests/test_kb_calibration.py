"""Per-KB threshold calibration of the zero-shot detector from the KB's own questions (issue 20). Knowledge bases and
dialogs of our own; the hash encoder keeps it fast; a stand-in classifier pins the rule's arithmetic down."""

from __future__ import annotations

import numpy as np
import pytest

from ragdial.components import BuildContext
from ragdial.schema import Dataset, Knowledge, KnowledgeBase, SourceKind, Speaker, Turn
from ragdial.understanding.detectors import ZeroShotDetector
from ragdial.understanding.kb_calibration import (
    META_KEY,
    MIN_QUESTIONS,
    as_opening_request,
    fit_reference,
    held_out_scores,
    kb_questions,
    kb_threshold,
)
from ragdial.understanding.registry import zero_shot
from ragdial.understanding.tasks import zero_shot_detector

HOTELS = ("Sunrise Lodge", "Blue Harbor Inn", "Old Mill House", "Kestrel Court", "Garden View")
HOTEL_QUESTIONS = (
    "Are pets allowed in the rooms at {}?",
    "Is breakfast included at {}?",
    "Does {} have a gym?",
    "Can I check in early at {}?",
    "Is there free parking at {}?",
)
BIKE_QUESTIONS = (
    "Do you rent helmets with the bikes?",
    "Can I return the bike to another shop?",
    "Are electric bikes available?",
    "Is there a child seat for the bike?",
    "Do I need a deposit to rent?",
    "Can I keep the bike overnight?",
    "Are locks included?",
    "Do you repair punctures on the road?",
    "Can I rent a tandem?",
    "Is insurance part of the price?",
    "Do you open on public holidays?",
    "Can I book a bike for a group of ten?",
    "Are there maps of the cycle routes?",
    "Can teenagers rent on their own?",
    "Do the bikes have baskets?",
    "Can I pay by card in the shop?",
    "Is there a discount for students?",
    "Do you deliver bikes to hotels?",
    "What happens if the bike is stolen?",
    "Can I change my booking online?",
    "Do you have bikes for tall riders?",
    "Are the e-bike batteries charged each morning?",
)


def faq(item_id: str, question: str, answer: str, domain: str, entity: str | None = None) -> Knowledge:
    fields = {"domain": domain, "entity": entity, "title": question, "body": answer}
    return Knowledge(item_id, f"{question} {answer}", SourceKind.FAQ, fields)


HOTEL_KB = [
    faq(f"h:{e}:{q}", text.format(hotel), "Yes, for a small fee.", "hotel", hotel)
    for e, hotel in enumerate(HOTELS)
    for q, text in enumerate(HOTEL_QUESTIONS)
]
BIKE_KB = [faq(f"b:{i}", text, "Ask at the counter.", "bike") for i, text in enumerate(BIKE_QUESTIONS)]
TRIPLES = [Knowledge(f"t:{i}", f"Film {i} director Someone", SourceKind.KG_TRIPLE, {}) for i in range(30)]


def bike_dataset() -> Dataset:
    return Dataset("dstc9", "val", "en", KnowledgeBase(BIKE_KB), [], [])


def user(text: str) -> Turn:
    return Turn(Speaker.USER, text)


def system(text: str) -> Turn:
    return Turn(Speaker.SYSTEM, text)


def trained_detector():
    offer = system("Sunrise Lodge has rooms free. Would you like me to book it?")
    seeking = ["Are pets allowed there?", "Is breakfast included?", "Do they have a gym?", "Could I check in early?"]
    other = ["Yes, book it for 3 nights.", "I need a hotel in the north.", "Book it for 4 people.", "No thanks, bye."]
    contexts = [[user("I need a place to stay."), offer, user(t)] for t in seeking + other]
    return zero_shot_detector(HOTEL_KB, encoder="hash").fit(contexts, [True] * 4 + [False] * 4)


class KbSensitive:
    """Stands in for a classifier: a question scores ``high`` against hotel knowledge and ``low`` against any other
    (the way a real detector's scale moves with the KB); it records the knowledge it was given."""

    def __init__(self, low: float, high: float) -> None:
        self.low, self.high, self.meta, self.items = low, high, {}, []

    def set_knowledge(self, items):
        self.items = list(items)

    def probabilities(self, contexts):
        hotel = all(item.id.startswith("h:") for item in self.items)
        spread = np.linspace(-0.1, 0.1, len(contexts))
        return ((self.high if hotel else self.low) + spread).reshape(-1, 1)


def test_kb_questions_are_titles_split_in_two_halves():
    questions = kb_questions(HOTEL_KB)
    assert len(questions) == len(HOTEL_KB) and {h for h, _ in questions} == {0, 1}
    assert kb_questions(TRIPLES) == []
    context = as_opening_request("Are locks included?")
    assert [t.speaker for t in context] == [Speaker.USER, Speaker.SYSTEM, Speaker.USER]
    assert as_opening_request("可以带宠物吗？")[0].text == "你好。"


def test_the_threshold_moves_by_the_kbs_own_questions():
    classifier = KbSensitive(low=0.3, high=0.7)
    reference = fit_reference(classifier, HOTEL_KB)
    assert reference is not None and len(classifier.meta[META_KEY]["quantiles"]) == 101
    # the training KB's questions score 0.6-0.8, so 0.65 rejects a quarter of them; the bike KB's score 0.2-0.4:
    # rejecting a quarter of those is a threshold near 0.25
    assert kb_threshold(classifier, BIKE_KB, 0.65) == pytest.approx(0.25, abs=0.01)
    assert [i.id for i in classifier.items] == [i.id for i in BIKE_KB]  # left matched against the deployment KB
    assert kb_threshold(classifier, TRIPLES, 0.65) is None  # no questions: keep the configured threshold
    assert kb_threshold(KbSensitive(0.3, 0.7), BIKE_KB, 0.65) is None  # no reference stored at training
    assert kb_threshold(classifier, BIKE_KB, 0.95) is None  # over every training question's score
    assert fit_reference(KbSensitive(0.3, 0.7), BIKE_KB[: MIN_QUESTIONS - 1]) is None


def test_a_real_detector_maps_its_own_kb_back_to_its_threshold():
    model = trained_detector()
    scores = held_out_scores(model, HOTEL_KB)
    assert len(scores) == len(HOTEL_KB) and np.ptp(scores) > 0
    assert {i.id for i in model.blocks[0].items} == {i.id for i in HOTEL_KB}
    quantiles = fit_reference(model, HOTEL_KB)["quantiles"]  # type: ignore[index]
    for threshold in (quantiles[25], (quantiles[50] + quantiles[51]) / 2):  # a quarter / half of them rejected
        assert kb_threshold(model, HOTEL_KB, threshold) == pytest.approx(threshold, abs=0.02)
    assert kb_threshold(model, HOTEL_KB, quantiles[0] - 0.01) is None  # below every question: nothing to match


def test_the_config_built_detector_uses_the_calibrated_threshold(tmp_path):
    model = trained_detector()
    threshold = fit_reference(model, HOTEL_KB)["quantiles"][50]  # type: ignore[index]
    model.save(tmp_path / "det")
    expected = kb_threshold(model, BIKE_KB, threshold)
    assert expected is not None and abs(expected - threshold) > 0.01
    context_ = BuildContext(bike_dataset(), "en")
    built = zero_shot(context_, str(tmp_path / "det"), threshold)
    fixed = zero_shot(context_, str(tmp_path / "det"), threshold, calibrate=False)
    assert isinstance(built, ZeroShotDetector) and isinstance(fixed, ZeroShotDetector)
    assert built.threshold == pytest.approx(expected) and fixed.threshold == threshold
    assert built.to_config()["threshold"] == threshold and built.to_config()["calibrate"] is True
    context = [user("Hello."), system("How can I help?"), user("Are locks included?")]
    confidence = built.decide(context, "en").confidence
    assert confidence is not None
    assert built.decide(context, "en").needs_knowledge == (confidence >= expected)
