"""The detectors the pipeline asks before retrieving, with pinned labels on small hand-written contexts.

``KnowledgeSeekingDetector`` is trained on the DSTC-format fixture (hotel and restaurant only) and asked about
contexts we wrote, two of them in domains it never saw (taxi, train). ``ApiQueryDetector`` is trained on a dozen
hand-written MobileCS2-style turns; the probes put a previous user turn with a different label before the current
one, so a detector reading the wrong turn gives a wrong label. Fixtures and probes are ours: they check that the
parts fit and behave, not how well the models do on real data (docs/benchmarks/understanding.md).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragdial import datasets
from ragdial.schema import SourceKind, Speaker, Turn
from ragdial.understanding import api_query_classifier, training_data, turn_detector
from ragdial.understanding.decision import LOOKUPS
from ragdial.understanding.detectors import ApiQueryDetector, KnowledgeSeekingDetector


def user(text: str) -> Turn:
    return Turn(Speaker.USER, text)


def system(text: str) -> Turn:
    return Turn(Speaker.SYSTEM, text)


@pytest.fixture(scope="module")
def seeking_model(fixtures: Path):
    dataset = datasets.load("dstc11", fixtures / "understanding" / "dstc", "val")
    contexts, targets = training_data("detector", dataset)
    return turn_detector([k.text for k in dataset.kb], embedding=None).fit(contexts, targets)


SEEKING_PROBES = [
    ("hotel question", [user("I need a hotel in the north."), system("Riverside Lodge is there."),
                        user("Is there a gym at Riverside Lodge?")], True),
    ("booking after a question", [user("Is there a gym at Riverside Lodge?"), system("Yes, there is."),
                                  user("Great, book it for two nights please.")], False),
    ("restaurant question", [user("Can I bring my own wine to Golden Noodle?")], True),
    ("goodbye", [user("That is all, thank you, goodbye.")], False),
    ("unseen domain: taxi question", [user("I need a taxi to the station."), system("Booked."),
                                      user("Can I bring my bike in the taxi?")], True),
    ("unseen domain: train booking", [user("Book a train ticket for two people please.")], False),
    ("unseen domain: train question", [user("Are dogs allowed on the train?")], True),
]  # fmt: skip


@pytest.mark.parametrize(("name", "context", "needs"), SEEKING_PROBES, ids=[p[0] for p in SEEKING_PROBES])
def test_knowledge_seeking_detector_pinned_labels(seeking_model, name, context, needs):
    decision = KnowledgeSeekingDetector(seeking_model).decide(context, "en")
    assert decision.needs_knowledge is needs, (name, decision.confidence)
    assert decision.detector == "knowledge_seeking"
    assert decision.lookups == (LOOKUPS if needs else ())
    assert 0.0 <= decision.confidence <= 1.0
    assert (decision.confidence >= 0.5) is needs  # the confidence is P(knowledge-seeking), not P(not)


def test_knowledge_seeking_confidence_is_the_models_probability_of_true(seeking_model):
    context = SEEKING_PROBES[0][1]
    probability = seeking_model.probabilities([context])[0]
    assert seeking_model.classes == [False, True]
    decision = KnowledgeSeekingDetector(seeking_model).decide(context, "en")
    assert decision.confidence == pytest.approx(float(probability[-1]))
    assert decision.confidence > 0.9  # a clear hotel question


class _Fixed:
    """A classifier double whose P(knowledge-seeking) is fixed."""

    def __init__(self, probability: float) -> None:
        self.probability = probability

    def probabilities(self, inputs):
        return np.array([[1.0 - self.probability, self.probability] for _ in inputs])


@pytest.mark.parametrize(
    ("probability", "threshold", "needs"),
    [(0.5, 0.5, True), (0.49, 0.5, False), (0.8, 0.7, True), (0.6, 0.7, False), (0.0, 0.0, True), (0.99, 1.0, False)],
)
def test_knowledge_seeking_threshold_is_inclusive_and_used(probability, threshold, needs):
    decision = KnowledgeSeekingDetector(_Fixed(probability), threshold).decide([user("x")], "en")
    assert decision.needs_knowledge is needs
    assert decision.confidence == pytest.approx(probability)
    assert decision.lookups == (LOOKUPS if needs else ())


def test_knowledge_seeking_threshold_moves_a_borderline_turn(seeking_model):
    context = SEEKING_PROBES[4][1]  # the taxi question, a domain unseen in training: less sure
    confidence = KnowledgeSeekingDetector(seeking_model).decide(context, "en").confidence
    assert 0.5 < confidence < 0.9
    assert KnowledgeSeekingDetector(seeking_model, threshold=0.9).decide(context, "en").needs_knowledge is False
    assert KnowledgeSeekingDetector(seeking_model, threshold=0.5).decide(context, "en").needs_knowledge is True


API_TRAINING = [
    ("我现在办了哪些套餐", ["查询用户已办理的业务"]),
    ("帮我看看我开通了什么业务", ["查询用户已办理的业务"]),
    ("我名下有哪些业务", ["查询用户已办理的业务"]),
    ("五十元流量包是什么内容", ["查询特定业务信息"]),
    ("介绍一下那个视频会员业务", ["查询特定业务信息"]),
    ("夜间流量包多少钱", ["查询特定业务信息"]),
    ("把我开通的彩铃退掉", ["查询用户已办理的业务", "取消"]),
    ("我开的那个流量包帮我取消", ["查询用户已办理的业务", "取消"]),
    ("帮我退订开通的短信提醒", ["查询用户已办理的业务", "取消"]),
    ("怎么修改服务密码", ["[QA]"]),
    ("话费怎么交", ["[QA]"]),
    ("发票怎么开", ["[QA]"]),
    ("好的谢谢", []),
    ("嗯嗯明白了", []),
    ("没有别的问题了", []),
]


@pytest.fixture(scope="module")
def api_detector() -> ApiQueryDetector:
    model = api_query_classifier().fit([t for t, _ in API_TRAINING], [y for _, y in API_TRAINING])
    return ApiQueryDetector(model)


FAQ, PRODUCT = (SourceKind.FAQ,), (SourceKind.PRODUCT,)
API_PROBES = [
    ("FAQ after a cancellation", ["把我开通的彩铃退掉", "已为您退订彩铃。", "话费怎么交"],
     "[QA]", True, ("global",), FAQ),
    ("cancellation after a FAQ", ["话费怎么交", "可以在APP里交话费。", "我开的那个流量包帮我取消"],
     "查询用户已办理的业务，取消", True, LOOKUPS, ()),
    ("thanks after a product question", ["夜间流量包多少钱", "夜间流量包五元。", "好的谢谢"],
     "", False, (), ()),
    ("own services, first turn", ["我名下有哪些业务"],
     "查询用户已办理的业务", True, ("user_profile",), ()),
    ("product after own services", ["我现在办了哪些套餐", "您办理了畅游套餐。", "五十元流量包是什么内容"],
     "查询特定业务信息", True, ("global",), PRODUCT),
]  # fmt: skip


def dialog(texts: list[str]) -> list[Turn]:
    """User and system turns alternating, starting (and so ending, with an odd count) with the user."""
    return [user(t) if i % 2 == 0 else system(t) for i, t in enumerate(texts)]


@pytest.mark.parametrize(
    ("name", "context", "label", "needs", "lookups", "sources"), API_PROBES, ids=[p[0] for p in API_PROBES]
)
def test_api_query_detector_reads_the_current_user_turn(api_detector, name, context, label, needs, lookups, sources):
    decision = api_detector.decide(dialog(context), "zh")
    assert (decision.label, decision.needs_knowledge, decision.lookups, decision.sources) == (
        label,
        needs,
        lookups,
        sources,
    ), name
    assert decision.detector == "api_query"


def test_api_query_detector_uses_the_whole_context_it_is_given(api_detector):
    # the same current turn gives the same label whatever came before: the current user turn decides
    alone = api_detector.decide([user("话费怎么交")], "zh")
    after = api_detector.decide([user("我开的那个流量包帮我取消"), system("已取消。"), user("话费怎么交")], "zh")
    assert alone.label == after.label == "[QA]"
