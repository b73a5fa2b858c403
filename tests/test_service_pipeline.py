"""DialogSystem and its config: building from plain data by name, look-up decisions, history, streaming, timings."""

from __future__ import annotations

import gc
from dataclasses import replace

import pytest
import yaml

import service_doubles as doubles
from ragdial.errors import RagdialError
from ragdial.pipeline import (
    ConfigError,
    Decision,
    DialogSystem,
    Piece,
    Prepared,
    Registry,
    Reply,
    SystemConfig,
    build_systems,
    load_config,
)
from ragdial.pipeline.components import build_system
from ragdial.retrieval.base import Retrieval, Retriever, Scope, ScoredKnowledge
from ragdial.schema import SourceKind, Speaker


@pytest.fixture(scope="module")
def systems() -> dict[str, DialogSystem]:
    return build_systems(SystemConfig.from_data(doubles.CONFIG))


def test_config_round_trips_through_yaml(tmp_path):
    config = SystemConfig.from_data({**doubles.CONFIG, "retriever": {"name": "bm25", "turns": 2}, "top_k": 2})
    path = tmp_path / "system.yaml"
    path.write_text(config.to_yaml(), encoding="utf-8")
    again = load_config(path)
    assert again == config
    assert again.retriever.name == "bm25" and again.retriever.params == {"turns": 2}
    assert yaml.safe_load(config.to_yaml())["retriever"] == {"name": "bm25", "turns": 2}


def test_default_config_serves_the_demo_in_both_languages():
    config = load_config(None)
    assert config.knowledge.name == "demo" and config.languages == ["zh", "en"]
    assert config.retriever.name == "auto" and config.generator.name == "auto"
    assert config.retriever.params == {"query": "last_user"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"top_kk": 3}, "unknown field(s) top_kk"),
        ({"top_k": "three"}, "field 'top_k': expected int"),
        ({"top_k": 30, "retrieve_k": 20}, "more than retrieve_k"),
        ({"languages": ["fr"]}, "field 'languages'"),
        ({"retriever": {"turns": 2}}, "needs a 'name'"),
        ({"generator": 3}, "expected a component name"),
        ({"history_turns": 0}, "at least 1"),
    ],
)
def test_bad_config_names_the_field(data, message):
    with pytest.raises(ConfigError) as caught:
        SystemConfig.from_data(data, "my.yaml")
    assert str(caught.value).startswith("my.yaml") and message in str(caught.value)


def test_bad_yaml_file_names_the_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("retriever: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"broken\.yaml: not valid YAML"):
        load_config(path)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")


def test_registry_builds_by_name_or_import_path_and_rejects_the_rest():
    registry: Registry[object] = Registry("widget")
    registry.register("pair", lambda a, b=1: (a, b))
    assert registry.build("pair", 5, b=2) == (5, 2)
    assert registry.build("service_doubles:EchoGenerator").__class__ is doubles.EchoGenerator
    with pytest.raises(ConfigError, match="unknown widget 'nope'; known: pair"):
        registry.build("nope")
    with pytest.raises(ConfigError, match="widget 'pair'"):
        registry.build("pair", 5, c=3)
    with pytest.raises(ConfigError, match="cannot import"):
        registry.build("no_such_module:thing")
    with pytest.raises(ConfigError, match="has no 'Nothing'"):
        registry.build("service_doubles:Nothing")
    assert not registry.available("no_such_module:thing")


def test_a_config_error_is_a_user_error_and_an_unknown_language_is_refused():
    config = SystemConfig.from_data({**doubles.CONFIG, "languages": ["zh"]})
    with pytest.raises(RagdialError, match="language 'en' is not configured"):
        build_system(config, "en")
    bad = SystemConfig.from_data({**doubles.CONFIG, "retriever": "nothing_like_it"})
    with pytest.raises(ConfigError, match="unknown retriever 'nothing_like_it'"):
        build_systems(bad)


def test_languages_share_language_independent_components_only(systems):
    assert set(systems) == {"zh", "en"}
    assert systems["zh"].retriever is not systems["en"].retriever  # each indexes its own language's KB
    assert systems["zh"].knowledge.dataset.language == "zh" and systems["en"].knowledge.dataset.language == "en"


def test_respond_cites_the_sessions_own_profile_and_global_knowledge(systems):
    zh = systems["zh"]
    assert [u.id for u in zh.users] == ["u1", "u2"]
    session = zh.new_session("u2")
    reply = zh.respond(session, "我的夜猫流量包余额还有多少")
    ids = [c.id for c in reply.knowledge]
    assert ids[0] in ("u2:plan", "p2") and "u2:plan" in ids
    assert "u1:plan" not in ids  # another user's profile is never a candidate
    assert {c.source for c in reply.knowledge} <= {"user_profile", "product", "faq"}
    assert len(reply.knowledge) <= zh.config.top_k
    assert reply.text.startswith("[我的夜猫流量包余额还有多少]")
    assert reply.decision.needs_knowledge and reply.decision.lookups == ("user_profile", "global")
    assert set(reply.timings) == {"understand_ms", "retrieve_ms", "first_token_ms", "generate_ms", "total_ms"}
    assert reply.timings["total_ms"] >= reply.timings["retrieve_ms"]
    assert reply.tokens == len(reply.text.split())


def test_history_grows_in_order_and_feeds_the_context(systems):
    en = systems["en"]
    session = en.new_session("u1")
    for n in range(3):
        reply = en.respond(session, f"question {n} about my Roam Freely plan")
        assert len(session.history) == 2 * n  # the pipeline never changes the session ...
        session.add(reply.record)  # ... the caller keeps the turn
        assert session.history[-1] is reply.record.system and reply.record.system.text == reply.text
    assert [t.speaker for t in session.history] == [Speaker.USER, Speaker.SYSTEM] * 3
    assert [t.text for t in session.history[::2]] == [f"question {n} about my Roam Freely plan" for n in range(3)]
    assert all(t.knowledge_ids for t in session.history[1::2])
    context = en.context_for(session.history, "next")
    assert len(context) == min(len(session.history), en.config.history_turns) + 1
    assert context[-1].text == "next"


def test_stream_yields_knowledge_first_then_pieces_then_the_reply(systems):
    zh = systems["zh"]
    session = zh.new_session("u1")
    events = list(zh.stream(session, "怎么查询话费余额"))
    assert isinstance(events[0], Prepared) and isinstance(events[-1], Reply)
    pieces = [e.text for e in events if isinstance(e, Piece)]
    reply = events[-1]
    assert "".join(pieces).strip() == reply.text and reply.tokens == len(pieces)
    assert events[0].knowledge == reply.knowledge and reply.knowledge[0].id == "f1"
    assert session.history == []
    record = reply.record
    assert record.user.text == "怎么查询话费余额" and record.system.knowledge_ids == [c.id for c in reply.knowledge]
    assert record.citations == reply.knowledge and record.decision == reply.decision and record.grounding is None
    assert record.branch == "knowledge" and record.state == {}
    assert reply.knowledge[0].item is zh.knowledge.dataset.kb.get("f1")  # the item itself, not a copy looked up


def test_a_stream_closed_early_releases_the_generator_for_the_next_turn():
    config = SystemConfig.from_data(
        {**doubles.CONFIG, "languages": ["en"], "generator": "service_doubles:locked_generator"}
    )
    system = build_system(config, "en")
    system.generator.delay = 0.0
    events = system.stream(system.new_session("u1"), "what does Roam Freely cost")
    assert isinstance(next(events), Prepared) and isinstance(next(events), Piece)
    assert system.generator.lock.locked()  # the model is busy with the abandoned turn ...
    events.close()
    assert not system.generator.lock.locked()  # ... and free once its stream is closed
    dropped = system.stream(system.new_session("u1"), "what does Roam Freely cost")
    next(dropped), next(dropped)
    del dropped  # a stream nobody closes: garbage collection closes it
    gc.collect()
    system.generator.wait = 0.5  # a lock still held is an error here, not a hang
    reply = system.respond(system.new_session("u2"), "what does Night Owl cost")
    assert reply.tokens == 40 and reply.text.startswith("w0 w1")


def test_a_stream_abandoned_midway_leaves_the_session_unchanged(systems):
    zh = systems["zh"]
    session = zh.new_session("u1")
    events = zh.stream(session, "畅游套餐多少钱")
    next(events), next(events)
    events.close()
    assert session.history == []


class _Never:
    def decide(self, context, language):
        return Decision(False, detector="never")


class _OnlyFaq:
    def decide(self, context, language):
        return Decision(True, ("global",), (SourceKind.FAQ,), label="[QA]", detector="faq")


class _Probable:
    """A knowledge-seeking detector double: probability ``p``, yes from 0.5."""

    def __init__(self, p: float) -> None:
        self.p = p

    def decide(self, context, language):
        return Decision(self.p >= 0.5, ("user_profile", "global") if self.p >= 0.5 else (), confidence=self.p)


class _Confident(Retriever):
    """Ranks the global items, the first with reranker probability ``q``."""

    def __init__(self, items, q: float) -> None:
        self.items, self.q = [i for i in items if i.is_global], q

    def retrieve(self, context, scope=None, k=20, filter=None, select=None):
        if not Scope.of(scope).include_global:
            return Retrieval()
        ranked = [ScoredKnowledge(item, self.q / (rank + 1)) for rank, item in enumerate(self.items)]
        return Retrieval(ranked, ranked[:1])


@pytest.mark.parametrize(
    ("p", "q", "weight", "cites"),
    [
        (0.9, 0.1, None, True),  # no rule: the detector's yes
        (0.4, 0.9, None, False),  # no rule: the detector's no
        (0.6, 0.1, 2.0, False),  # 0.6 * 1.2 < 1: silent although the detector said yes
        (0.4, 0.9, 2.0, True),  # 0.4 * 2.8 >= 1: cites although the detector said no
        (0.3, 1.0, 2.0, False),  # 0.3 * 3 < 1: not even looked up
        (0.5, 1.0, 1.0, True),  # weight 1: speak when p q >= 1 - p
    ],
)
def test_the_speak_rule_weighs_the_detector_against_the_rerankers_best(systems, p, q, weight, cites):
    zh = systems["zh"]
    config = replace(zh.config, speak_weight=weight)
    retriever = _Confident(zh.knowledge.dataset.kb, q)
    system = DialogSystem(config, "zh", zh.knowledge, _Probable(p), retriever, zh.generator)
    reply = system.respond(system.new_session(None), "畅游套餐多少钱")
    assert bool(reply.knowledge) is cites
    assert reply.decision.needs_knowledge is cites
    assert reply.decision.confidence == p


def test_speak_weight_is_a_non_negative_number():
    assert SystemConfig.from_data({"speak_weight": 2}).speak_weight == 2.0
    assert SystemConfig.from_data({}).speak_weight is None
    with pytest.raises(ConfigError, match="speak_weight"):
        SystemConfig.from_data({"speak_weight": -1})


def test_the_decision_controls_which_look_up_runs(systems):
    zh = systems["zh"]
    session = zh.new_session("u1")
    never = DialogSystem(zh.config, "zh", zh.knowledge, _Never(), zh.retriever, zh.generator)
    reply = never.respond(session, "我的套餐流量用了多少")
    assert reply.knowledge == [] and reply.decision.to_dict()["lookups"] == []
    faq = DialogSystem(zh.config, "zh", zh.knowledge, _OnlyFaq(), zh.retriever, zh.generator)
    reply = faq.respond(session, "我的畅游套餐流量用了多少")
    assert [c.source for c in reply.knowledge] == ["faq"] and reply.decision.label == "[QA]"


def test_answer_runs_without_a_session_for_batch_use(systems):
    en = systems["en"]
    context = en.context_for([], "how do I check my balance")
    reply = en.answer(context, user=None)
    assert reply.knowledge[0].id == "f1"
    assert all(c.scope == "" for c in reply.knowledge)  # no user: no profile items


@pytest.mark.parametrize(
    ("labels", "needs", "lookups", "sources"),
    [
        ([], False, [], []),
        (["[QA]"], True, ["global"], ["faq"]),
        (["查询用户已办理的业务"], True, ["user_profile"], []),
        (["查询特定业务信息"], True, ["global"], ["product"]),
        (["search for products information"], True, ["global"], ["product"]),
        (["查询用户已办理的业务", "查询特定业务信息"], True, ["user_profile", "global"], ["product"]),
        (["办理"], True, ["user_profile", "global"], []),
    ],
)
def test_api_query_labels_decide_the_look_ups(labels, needs, lookups, sources):
    from ragdial.understanding.detectors import decision_for_api_query

    decision = decision_for_api_query(labels).to_dict()
    assert (decision["needs_knowledge"], decision["lookups"], decision["sources"]) == (needs, lookups, sources)
    assert decision["label"] == "，".join(labels)


def test_a_detector_that_needs_a_model_is_not_trained_at_build_time():
    config = SystemConfig.from_data({**doubles.CONFIG, "languages": ["zh"], "detector": "api_query"})
    with pytest.raises(ConfigError, match=r"needs 'model'.*ragdial train api-query"):
        build_system(config, "zh")


def test_the_api_query_detector_trained_on_the_demo_routes_each_turn(tmp_path):
    pytest.importorskip("ragdial.understanding.tasks", reason="ragdial.understanding is not installed")
    from ragdial.datasets import mobilecs2
    from ragdial.understanding import new_classifier, training_data
    from ragdial.understanding.detectors import decision_for_api_query

    demo = mobilecs2.load_demo("zh")  # trained first (what `ragdial train api-query` does), then loaded
    contexts, targets = training_data("api_query", demo)
    model = new_classifier("api_query", demo)
    model.fit(contexts, targets)
    model.save(tmp_path / "api_query")
    config = SystemConfig.from_data(
        {"languages": ["zh"], "detector": {"name": "api_query", "model": str(tmp_path / "api_query")},
         "retriever": "service_doubles:retriever", "generator": "service_doubles:generator"}
    )  # fmt: skip
    system = build_system(config, "zh")
    assert type(system.detector).__name__ == "ApiQueryDetector"
    session = system.new_session(system.users[0].id)
    # pinned labels of two turns of the demo dialogs it was trained on (this checks the wiring, not the model): the
    # user's own services, then a FAQ question, each read from the current turn
    expected = {"你好，我想看看我现在办了哪些业务": "查询用户已办理的业务", "营业厅几点开门": "[QA]"}
    for text, label in expected.items():
        reply = system.respond(session, text)
        session.add(reply.record)
        decision = reply.decision
        assert (decision.detector, decision.label) == ("api_query", label)
        assert decision == decision_for_api_query([label])
        assert all(decision.allows(system.knowledge.dataset.kb.get(c.id), session.user) for c in reply.knowledge)
