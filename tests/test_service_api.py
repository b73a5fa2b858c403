"""The HTTP API in-process: OpenAI-compatible completions and SSE, sessions, retrieval, bad input → clear 4xx."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

import service_doubles as doubles
from ragdial.pipeline import SystemConfig
from ragdial.serve.app import create_app
from ragdial.serve.service import Service, ServiceSettings
from ragdial.text.tokenize import words

KEY = "s3cret"


def _client(tmp_path, api_key=None, **overrides) -> TestClient:
    config = SystemConfig.from_data({**doubles.CONFIG, **overrides})
    service = Service(ServiceSettings(config, str(tmp_path / "sessions.sqlite"), api_key))
    return TestClient(create_app(service), raise_server_exceptions=False)


@pytest.fixture
def client(tmp_path) -> TestClient:
    return _client(tmp_path)


def _ask(client, text, **extra):
    body = {"model": "ragdial", "messages": [{"role": "user", "content": text}], **extra}
    return client.post("/v1/chat/completions", json=body)


def _events(response) -> list:
    assert response.headers["content-type"].startswith("text/event-stream")
    blocks = [b for b in response.text.split("\n\n") if b.strip()]
    assert all(b.startswith("data: ") for b in blocks)
    payloads = [b.removeprefix("data: ") for b in blocks]
    assert payloads[-1] == "[DONE]"
    return [json.loads(p) for p in payloads[:-1]]


def test_completion_is_openai_shaped_and_cites_knowledge(client):
    response = _ask(client, "我的夜猫流量包余额还有多少", profile="u2")
    assert response.status_code == 200
    body = response.json()
    assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-")
    choice = body["choices"][0]
    assert choice["message"]["role"] == "assistant" and choice["finish_reason"] == "stop"
    assert choice["message"]["content"].startswith("[我的夜猫流量包余额还有多少]")
    assert body["usage"]["completion_tokens"] == body["ragdial"]["tokens"] > 0
    assert body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
    extension = body["ragdial"]
    assert {k["id"] for k in extension["knowledge"]} >= {"u2:plan"}
    assert all(set(k) == {"id", "source", "text", "score", "scope"} for k in extension["knowledge"])
    assert extension["decision"]["needs_knowledge"] is True
    assert extension["language"] == "zh" and "retrieve_ms" in extension["timings"]
    # usage counts the prompt the generator read (the question and every cited item), not the user's words alone;
    # the echo double runs no model, so the count is in words and says so
    read = ["我的夜猫流量包余额还有多少", *(k["text"] for k in extension["knowledge"])]
    assert body["usage"]["prompt_tokens"] == sum(len(words(text, "zh")) for text in read)
    assert body["usage"]["prompt_tokens"] > len(words(read[0], "zh")) and extension["usage_counted"] == "words"


def test_stream_is_sse_in_openai_chunks_with_knowledge_first(client):
    response = _ask(client, "how do I check my balance", stream=True, language="en")
    assert response.status_code == 200
    chunks = _events(response)
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    first, last = chunks[0], chunks[-1]
    assert first["choices"][0]["delta"]["role"] == "assistant"
    assert first["ragdial"]["knowledge"][0]["id"] == "f1" and first["ragdial"]["knowledge"][0]["source"] == "faq"
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert text.startswith("[how do I check my balance]")
    assert last["choices"][0]["finish_reason"] == "stop" and last["usage"]["completion_tokens"] == len(chunks) - 2
    session = client.get(f"/v1/sessions/{first['ragdial']['session_id']}").json()
    assert [m["role"] for m in session["messages"]] == ["user", "assistant"]
    assert session["messages"][1]["content"] == text.strip()
    assert session["messages"][1]["knowledge"][0]["id"] == "f1"


def test_a_session_continues_and_keeps_its_history_in_order(client):
    created = client.post("/v1/sessions", json={"profile": "u1", "language": "zh"})
    assert created.status_code == 201
    sid = created.json()["id"]
    for n in range(4):
        response = _ask(client, f"第{n}个问题：畅游套餐", session_id=sid, stream=n % 2 == 1)
        assert response.status_code == 200
    session = client.get(f"/v1/sessions/{sid}").json()
    assert session["user"] == "u1" and session["turns"] == 8 and session["title"] == "第0个问题：畅游套餐"
    assert [m["content"] for m in session["messages"][::2]] == [f"第{n}个问题：畅游套餐" for n in range(4)]
    assert all(m["content"].startswith(f"[第{n}个问题") for n, m in enumerate(session["messages"][1::2]))
    listed = client.get("/v1/sessions").json()["sessions"]
    assert listed[0]["id"] == sid
    assert client.delete(f"/v1/sessions/{sid}").json() == {"id": sid, "deleted": True}
    assert client.get(f"/v1/sessions/{sid}").status_code == 404


def test_a_stateless_openai_request_seeds_a_session_with_the_history_it_sent(client):
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi, how can I help?"},
        {"role": "user", "content": [{"type": "text", "text": "what is the Night Owl data pack"}]},
    ]
    body = client.post("/v1/chat/completions", json={"messages": messages, "language": "en"}).json()
    assert body["ragdial"]["knowledge"][0]["id"] == "p2"
    session = client.get(f"/v1/sessions/{body['ragdial']['session_id']}").json()
    assert [m["content"] for m in session["messages"]][:3] == [
        "hello",
        "hi, how can I help?",
        "what is the Night Owl data pack",
    ]


def test_language_is_detected_when_not_given(client):
    assert _ask(client, "What does the Roam Freely plan cost?").json()["ragdial"]["language"] == "en"
    assert _ask(client, "畅游套餐多少钱").json()["ragdial"]["language"] == "zh"


def test_retrieve_and_profiles(client):
    body = client.post("/v1/retrieve", json={"query": "夜猫流量包", "profile": "u2", "k": 2}).json()
    assert body["knowledge"][0]["id"] in ("p2", "u2:plan") and len(body["knowledge"]) == 2
    only_global = client.post("/v1/retrieve", json={"query": "夜猫流量包", "profile": "u2", "lookups": ["global"]})
    assert all(k["scope"] == "" for k in only_global.json()["knowledge"])
    profiles = client.get("/v1/profiles", params={"language": "en"}).json()
    assert [p["id"] for p in profiles["profiles"]] == ["u1", "u2"] and profiles["profiles"][0]["name"] == "Alice"
    assert client.get("/v1/models").json()["data"][0]["id"] == "ragdial"


def test_every_language_answers_one_short_turn_before_the_service_serves(tmp_path):
    config = SystemConfig.from_data({**doubles.CONFIG, "generator": "service_doubles:recording_generator"})
    service = Service(ServiceSettings(config, str(tmp_path / "s.sqlite")))
    generators = {id(s.generator): s.generator for s in service.systems.values()}.values()
    requests = [r for g in generators for r in g.requests]
    assert all(g.warmed for g in generators)
    assert sorted(r.language for r in requests) == ["en", "zh"] and all(r.max_tokens == 2 for r in requests)
    assert sorted(r.language for g in generators for r in g.primed) == ["en", "zh"]  # a local LLM keeps the head
    assert set(service.warmed_ms) == {"zh", "en"}


def test_the_generator_warms_while_the_other_components_do(tmp_path):
    """The generator's warm-up (a model load and a primed head) runs beside the retriever's, not before or after it:
    each of the two here waits until the other has started, which one-after-the-other warm-ups never allow."""
    import threading

    from ragdial.pipeline.components import build_systems

    config = SystemConfig.from_data({**doubles.CONFIG, "generator": "service_doubles:recording_generator"})
    systems = build_systems(config)
    system = systems["zh"]
    started = {"generator": threading.Event(), "retriever": threading.Event()}

    def rendezvous(mine: str, other: str):
        def warm_up() -> None:
            started[mine].set()
            assert started[other].wait(timeout=60), f"the {other} did not warm while the {mine} did"

        return warm_up

    system.generator.warm_up = rendezvous("generator", "retriever")
    system.retriever.warm_up = rendezvous("retriever", "generator")
    service = Service(ServiceSettings(config, str(tmp_path / "s.sqlite")), systems=systems)
    assert set(service.warmed_ms) == {"zh", "en"}
    assert [r.language for r in system.generator.primed] == ["zh"]  # primed after its own warm-up


def test_the_web_modules_are_imported_while_the_generator_is_still_warming(tmp_path, monkeypatch):
    """``warm_up`` imports the modules it is given (the service: uvicorn and the FastAPI app) after the other
    components and before it waits for the generators, so their import overlaps a GGUF load: here the generator's
    warm-up finishes only once the module has been imported, which an import after the wait never allows."""
    import sys
    import threading

    from ragdial.pipeline.components import build_systems
    from ragdial.serve.service import WEB_MODULES, warm_up

    assert "ragdial.serve.app" in WEB_MODULES and "uvicorn" in WEB_MODULES
    imported = threading.Event()
    probe = "import service_doubles\n\nservice_doubles.web_probe_imported.set()\n"
    (tmp_path / "web_probe_module.py").write_text(probe, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(doubles, "web_probe_imported", imported, raising=False)
    config = SystemConfig.from_data({**doubles.CONFIG, "generator": "service_doubles:recording_generator"})
    systems = build_systems(config)
    waited: list[bool] = []

    def warm_up_generator() -> None:
        waited.append(imported.wait(timeout=60))

    systems["zh"].generator.warm_up = warm_up_generator
    try:
        warm_up(systems, meanwhile=["web_probe_module"])
    finally:
        sys.modules.pop("web_probe_module", None)
    assert waited == [True]


def test_health_and_page(client):
    health = client.get("/healthz").json()
    assert health["status"] == "ok" and health["journal_mode"] == "wal" and health["languages"] == ["zh", "en"]
    page = client.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    assert client.get("/static/app.js").status_code == 200
    icon = client.get("/favicon.ico")  # browsers ask for it even without a <link rel=icon>
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/x-icon"
    assert icon.content[:4] == b"\0\0\1\0"  # an ICO file


BAD = [
    ("{not json", 400, "not valid JSON"),
    ("", 422, "request body is missing"),
    ("[]", 422, "request body must be a JSON object"),
    (b"\xff\xfe{", 400, "not valid JSON"),
    ("{}", 422, "messages: Field required"),
    ('{"messages": []}', 422, "at least 1"),
    ('{"messages": [{"content": "hi"}]}', 422, "messages.0.role"),
    ('{"messages": [{"role": "user", "content": ""}]}', 422, "the last user message is empty"),
    ('{"messages": [{"role": "user", "content": "   "}]}', 422, "the last user message is empty"),
    ('{"messages": [{"role": "assistant", "content": "hi"}]}', 422, "last message must have role 'user'"),
    ('{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 0}', 422, "max_tokens"),
    ('{"messages": [{"role": "user", "content": "hi"}], "temperature": "hot"}', 422, "temperature"),
    ('{"messages": [{"role": "user", "content": "hi"}], "session_id": "nope"}', 404, "unknown session 'nope'"),
    ('{"messages": [{"role": "user", "content": "hi"}], "profile": "u9"}', 422, "unknown profile 'u9'"),
    ('{"messages": [{"role": "user", "content": "hi"}], "language": "fr"}', 422, "language"),
    # strict types: nothing is coerced
    (
        '{"messages": [{"role": "user", "content": "hi"}], "stream": "yes"}',
        422,
        "stream: Input should be a valid bool",
    ),
    ('{"messages": [{"role": "user", "content": "hi"}], "stream": 1}', 422, "stream: Input should be a valid bool"),
    (
        '{"messages": [{"role": "user", "content": "hi"}], "max_tokens": "5"}',
        422,
        "max_tokens: Input should be",
    ),
    (
        '{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5.5}',
        422,
        "max_tokens: Input should be",
    ),
    ('{"messages": [{"role": "user", "content": 5}]}', 422, "messages.0.content"),
    ('{"messages": [{"role": "user", "content": "hi"}], "profile": 7}', 422, "profile: Input should be a valid string"),
]


@pytest.mark.parametrize(("body", "status", "message"), BAD)
def test_bad_chat_requests_get_a_clear_4xx(client, body, status, message):
    response = client.post("/v1/chat/completions", content=body, headers={"content-type": "application/json"})
    assert response.status_code == status
    error = response.json()["error"]
    assert message in error["message"] and error["code"] == status


def test_strict_types_still_take_every_valid_json_value(client):
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": "畅游套餐"}]}], "stream": False}
    response = client.post("/v1/chat/completions", json={**body, "temperature": 0, "max_tokens": 8, "profile": None})
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"].startswith("[畅游套餐]")


def test_a_100kb_message_is_refused_and_the_session_is_kept(client):
    sid = _ask(client, "畅游套餐").json()["ragdial"]["session_id"]
    response = _ask(client, "流" * 100_000, session_id=sid)
    assert response.status_code == 413
    assert "100000 characters" in response.json()["error"]["message"]
    huge = client.post("/v1/chat/completions", content=b"x" * 2_000_000, headers={"content-type": "application/json"})
    assert huge.status_code == 413 and "larger than" in huge.json()["error"]["message"]
    assert client.get(f"/v1/sessions/{sid}").json()["turns"] == 2
    assert _ask(client, "还有别的吗", session_id=sid).status_code == 200


def test_other_endpoints_refuse_bad_input(client):
    assert client.post("/v1/retrieve", json={"query": ""}).status_code == 422
    assert client.post("/v1/retrieve", json={"query": "x", "k": 0}).status_code == 422
    assert client.post("/v1/retrieve", json={"query": "x", "session_id": "nope"}).status_code == 404
    assert client.post("/v1/retrieve", json={"query": "x" * 5000}).status_code == 413
    assert client.post("/v1/sessions", json={"profile": "nobody"}).status_code == 422
    assert client.post("/v1/sessions", json={"colour": "red"}).status_code == 422
    assert client.delete("/v1/sessions/nope").status_code == 404
    assert client.get("/v1/sessions", params={"limit": 0}).status_code == 422
    assert client.get("/v1/profiles", params={"language": "fr"}).status_code == 422
    assert client.get("/v1/nothing").status_code == 404
    assert client.get("/v1/chat/completions").status_code == 405


def test_api_key(tmp_path):
    client = _client(tmp_path, api_key=KEY)
    assert client.get("/healthz").status_code == 200 and client.get("/").status_code == 200
    missing = _ask(client, "hi")
    assert missing.status_code == 401 and "missing API key" in missing.json()["error"]["message"]
    assert missing.headers["www-authenticate"] == "Bearer"
    wrong = client.post(
        "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "hi"}]},
        headers={"Authorization": "Bearer wrong"},
    )
    assert wrong.status_code == 401 and wrong.json()["error"]["message"] == "wrong API key"
    assert client.get("/v1/sessions", headers={"Authorization": "Basic " + KEY}).status_code == 401
    ok = client.get("/v1/sessions", headers={"Authorization": f"Bearer {KEY}"})
    assert ok.status_code == 200


def test_a_failing_generator_reports_in_band_and_loses_nothing(tmp_path):
    client = _client(tmp_path, generator="service_doubles:failing_generator")
    sid = client.post("/v1/sessions", json={}).json()["id"]
    response = _ask(client, "畅游套餐", session_id=sid, stream=True)
    assert response.status_code == 200
    chunks = _events(response)
    assert chunks[-1]["error"]["type"] == "server_error" and "backend went away" in chunks[-1]["error"]["message"]
    assert client.get(f"/v1/sessions/{sid}").json()["turns"] == 0  # no half turn stored
    assert client.get(f"/v1/sessions/{sid}").status_code == 200


def test_the_official_openai_client_talks_to_the_service(tmp_path):
    openai = pytest.importorskip("openai", reason="the openai client is not installed")
    http = _client(tmp_path, api_key=KEY)
    client = openai.OpenAI(base_url="http://testserver/v1", api_key=KEY, http_client=http, max_retries=0)
    completion = client.chat.completions.create(
        model="ragdial", messages=[{"role": "user", "content": "夜猫流量包"}], extra_body={"profile": "u2"}
    )
    assert completion.choices[0].message.content.startswith("[夜猫流量包]")
    extension = completion.model_extra["ragdial"]
    assert extension["knowledge"][0]["source"] in ("product", "user_profile")
    stream = client.chat.completions.create(
        model="ragdial",
        messages=[{"role": "user", "content": "怎么查询话费余额"}],
        stream=True,
        extra_body={"session_id": extension["session_id"]},
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
    assert text.strip().startswith("[怎么查询话费余额]")
    assert (
        http.get(f"/v1/sessions/{extension['session_id']}", headers={"Authorization": f"Bearer {KEY}"}).json()["turns"]
        == 4
    )
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url="http://testserver/v1", api_key="wrong", http_client=http, max_retries=0).models.list()


def test_more_pages_mount_beside_the_api(tmp_path):
    from fastapi import APIRouter

    router = APIRouter()
    router.add_api_route("/ping", lambda: {"pong": True})
    config = SystemConfig.from_data(doubles.CONFIG)
    service = Service(ServiceSettings(config, str(tmp_path / "s.sqlite")))
    client = TestClient(create_app(service, routers=[("/rating", router)]))
    assert client.get("/rating/ping").json() == {"pong": True}
    assert client.get("/healthz").status_code == 200


def test_the_rating_pages_mount_when_asked(tmp_path):
    """The rating pages take the travel database from the system config; a missing one is generated at start-up
    (before the first request), not in the middle of one."""
    pytest.importorskip("ragdial.rating", reason="the task branch is not installed")
    travel = tmp_path / "travel.sqlite"
    config = SystemConfig.from_data(
        {**doubles.CONFIG, "task": {"name": "travel", "db": str(travel), "today": "2026-12-01"}}
    )
    settings = ServiceSettings(config, str(tmp_path / "s.sqlite"), ratings_path=str(tmp_path / "ratings.sqlite"))
    app = create_app(Service(settings))
    assert travel.is_file()  # built while the app was created
    client = TestClient(app)
    assert client.get("/rating/").status_code == 200
    assert client.get("/rating/export.json").status_code == 200
    test = client.post("/rating/api/tests", json={"rater": "r1"})
    assert test.status_code == 201, test.text
    assert test.json()["goal"]
    assert client.get("/").status_code == 200


def test_a_turn_that_fails_midway_is_counted_from_what_it_read_without_rebuilding_its_context(tmp_path, monkeypatch):
    """The usage of a turn without a reply comes from its ``Prepared`` event: the service builds a turn's context
    once (in the pipeline), never again just to count it."""
    from ragdial.pipeline.system import DialogSystem

    built = []
    context_for = DialogSystem.context_for

    def counting(self, history, user_text):
        built.append(user_text)
        return context_for(self, history, user_text)

    monkeypatch.setattr(DialogSystem, "context_for", counting)
    question = "我的夜猫流量包余额还有多少"
    answered = _ask(_client(tmp_path / "a"), question, profile="u2").json()  # the echo double answers it
    failing = _client(tmp_path / "b", generator="service_doubles:failing_generator")
    built.clear()
    response = _ask(failing, question, profile="u2")
    assert response.status_code == 500 and "backend went away" in response.text
    assert built == [question]
    counts = {
        line.split('kind="')[1].split('"')[0]: float(line.split()[-1])
        for line in failing.get("/metrics").text.splitlines()
        if line.startswith("ragdial_tokens_total{")
    }
    # the same question and cited items were read as by the answered turn; one piece went out before the failure
    assert counts == {"prompt": answered["usage"]["prompt_tokens"], "completion": 1.0}
    assert counts["prompt"] > len(words(question, "zh"))


def test_a_local_llm_starts_loading_while_the_retrievers_build(tmp_path):
    """Building a service's systems starts each generator's warm-up (a GGUF load) in the warm-up thread as soon as
    the generator is built, so it overlaps the retrievers' indexing: here the retriever's build waits until the
    generator has started warming, which a warm-up started after building never allows."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from ragdial.pipeline.components import build_systems

    started = threading.Event()

    class Warming(doubles.RecordingGenerator):
        def warm_up(self) -> None:
            started.set()
            super().warm_up()

    def generator(ctx):
        return Warming()

    def retriever(ctx):
        assert started.wait(timeout=60), "the generator did not start warming before the retriever built"
        return doubles.retriever(ctx)

    doubles.warming_generator, doubles.waiting_retriever = generator, retriever
    try:
        config = SystemConfig.from_data(
            {
                **doubles.CONFIG,
                "generator": "service_doubles:warming_generator",
                "retriever": "service_doubles:waiting_retriever",
            }
        )
        with ThreadPoolExecutor(max_workers=1) as pool:
            systems = build_systems(config, warm=pool)
        assert all(s.generator.warmed for s in systems.values())
        service = Service(ServiceSettings(config, str(tmp_path / "s.sqlite")), systems=systems)
        assert set(service.warmed_ms) == {"zh", "en"}
    finally:
        del doubles.warming_generator, doubles.waiting_retriever
