"""`retriever: {name: milvus, uri: …}` in the served system and in `ragdial run`: milvus-lite (a local file) indexed
from the system's knowledge base on first start and reused after, the same code against a Milvus server
(`milvus-lite server` on 127.0.0.1), and an unreachable URI as one line. The hash encoder keeps it fast; the demo KB
is our own."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient

from ragdial.errors import RagdialError
from ragdial.pipeline import SystemConfig, build_system
from ragdial.serve.app import create_app
from ragdial.serve.service import Service, ServiceSettings

pytest.importorskip("pymilvus", reason="pymilvus not installed (the 'milvus' extra)")
pytest.importorskip("milvus_lite", reason="milvus-lite not installed (the 'milvus' extra)")

ROOT = Path(__file__).resolve().parent.parent


def _config(uri: str, **retriever) -> dict:
    return {
        "languages": ["zh", "en"],
        "knowledge": {"name": "demo"},
        "detector": {"name": "always"},
        "retriever": {"name": "milvus", "uri": uri, "encoder": "hash", **retriever},
        "generator": {"name": "template"},
    }


def _ask(client: TestClient, text: str, profile: str) -> dict:
    body = {"messages": [{"role": "user", "content": text}], "profile": profile}
    response = client.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    return response.json()["ragdial"]


def test_served_system_indexes_milvus_lite_once_and_reuses_it(tmp_path, monkeypatch):
    uri = str(tmp_path / "kb.db")
    config = SystemConfig.from_data(_config(uri))
    service = Service(ServiceSettings(config, str(tmp_path / "s.sqlite")))
    client = TestClient(create_app(service))
    assert {type(s.retriever).__name__ for s in service.systems.values()} == {"MilvusRetriever"}
    assert {s.retriever.collection for s in service.systems.values()} == {"ragdial_zh", "ragdial_en"}
    zh = _ask(client, "国际漫游怎么开通", "demo-u1")
    assert "faq:12" in [k["id"] for k in zh["knowledge"]]
    _ask(client, "How much data have I used this month?", "demo-u2")
    body = {"query": "How much data have I used this month?", "profile": "demo-u2", "language": "en", "k": 20}
    ranking = client.post("/v1/retrieve", json=body).json()["ranking"]
    assert "demo-u2:local:3" in [k["id"] for k in ranking]  # the user's own data usage
    assert {k["scope"] for k in ranking} <= {"", "demo-u2"}  # never another user's profile
    for system in service.systems.values():
        system.retriever.close()

    from ragdial.retrieval.milvus import MilvusRetriever

    def no_rebuild(*args, **kwargs):
        raise AssertionError("the collection was indexed again")

    monkeypatch.setattr(MilvusRetriever, "build", no_rebuild)
    restarted = Service(ServiceSettings(config, str(tmp_path / "s.sqlite")))  # a restart reuses the collections
    again = _ask(TestClient(create_app(restarted)), "国际漫游怎么开通", "demo-u1")
    assert [k["id"] for k in again["knowledge"]] == [k["id"] for k in zh["knowledge"]]


def test_unreachable_milvus_is_one_line_naming_it():
    config = SystemConfig.from_data(_config("http://127.0.0.1:9", timeout=2))
    with pytest.raises(RagdialError) as failure:
        build_system(config, "zh")
    message = str(failure.value)
    assert "cannot reach Milvus at http://127.0.0.1:9" in message and "\n" not in message


def test_never_building_needs_an_existing_collection(tmp_path):
    config = SystemConfig.from_data(_config(str(tmp_path / "kb.db"), build="never"))
    with pytest.raises(RagdialError, match="has no collection 'ragdial_zh'"):
        build_system(config, "zh")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
def test_the_same_code_against_a_milvus_server_and_in_ragdial_run(tmp_path):
    port = _free_port()
    server = subprocess.Popen(
        [
            *(str(Path(sys.executable).parent / "milvus-lite"), "server", "--data-dir", str(tmp_path / "milvus")),
            *("--host", "127.0.0.1", "--port", str(port)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120  # a bound on start-up, not a timing assertion
        while time.monotonic() < deadline:
            assert server.poll() is None, server.stderr.read().decode()[-2000:] if server.stderr else ""
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        uri = f"http://127.0.0.1:{port}"
        system = build_system(SystemConfig.from_data(_config(uri)), "zh")
        reply = system.respond(system.new_session("demo-u1"), "国际漫游怎么开通")
        assert "faq:12" in [k.id for k in reply.knowledge]
        system.retriever.close()

        config_path = tmp_path / "system.yaml"
        config_path.write_text(yaml.safe_dump(_config(uri), allow_unicode=True), encoding="utf-8")
        out = tmp_path / "run"
        command = [sys.executable, "-c", "from ragdial.cli import main; main()", "run", "demo", "--config"]
        command += [str(config_path), "--limit", "4", "--out", str(out), "--no-bertscore"]
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=600,
            env={"PYTHONPATH": str(ROOT / "src"), "HOME": str(tmp_path)},
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert any(out.iterdir())
    finally:
        server.terminate()
        server.wait(30)


def test_index_milvus_command_and_several_workers_need_a_server(tmp_path):
    from typer.testing import CliRunner

    from ragdial.cli import app

    config_path = tmp_path / "system.yaml"
    config_path.write_text(yaml.safe_dump(_config(str(tmp_path / "kb.db")), allow_unicode=True), encoding="utf-8")
    done = CliRunner().invoke(app, ["index", "milvus", "--config", str(config_path)])
    assert done.exit_code == 0, done.output
    assert "ragdial_zh: 102 items" in done.output and "ragdial_en: 102 items" in done.output
    refused = CliRunner().invoke(
        app, ["serve", "--config", str(config_path), "--workers", "2", "--db", str(tmp_path / "s.sqlite")]
    )
    assert refused.exit_code != 0
    assert "milvus-lite file, which one process at a time may open" in str(refused.exception)
