"""Exemplars reach the generator the same way everywhere: a config's ``exemplars`` block feeds the knowledge branch
of every DialogSystem (CLI chat, the HTTP service, ``ragdial run``), and batch generation attaches the same ones."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

import service_doubles as doubles
from ragdial import datasets
from ragdial.components import BuildContext, ConfigError
from ragdial.generation.batch import request_for
from ragdial.generation.exemplars import EXEMPLARS
from ragdial.pipeline import SystemConfig
from ragdial.pipeline.components import build_system
from ragdial.serve.app import create_app
from ragdial.serve.service import Service, ServiceSettings

# our own writing: two short dialogs about plan fees (kdconv format), replies the generator should be shown
DIALOGS = [
    {
        "name": "畅游套餐",
        "messages": [
            {"message": "畅游套餐的月费是多少？"},
            {
                "message": "畅游套餐每月五十八元。",
                "attrs": [{"name": "畅游套餐", "attrname": "月费", "attrvalue": "58元"}],
            },
        ],
    },
    {
        "name": "夜猫流量包",
        "messages": [
            {"message": "夜猫流量包有多少流量？"},
            {
                "message": "夜猫流量包有夜间二十GB。",
                "attrs": [{"name": "夜猫流量包", "attrname": "流量", "attrvalue": "20GB"}],
            },
        ],
    },
]


@pytest.fixture
def shots_file(tmp_path):
    path = tmp_path / "shots.json"
    path.write_text(json.dumps(DIALOGS, ensure_ascii=False), encoding="utf-8")
    return path


def _config(shots_file, grounded: bool, k: int = 1) -> SystemConfig:
    return SystemConfig.from_data(
        {
            **doubles.CONFIG,
            "languages": ["zh"],
            "generator": "service_doubles:recording_generator",
            "grounded": grounded,
            "exemplars": {"name": "dataset", "format": "kdconv", "path": str(shots_file), "k": k},
        }
    )


@pytest.mark.parametrize("grounded", [False, True])
def test_the_served_system_shows_the_generator_the_nearest_exemplars(shots_file, grounded):
    system = build_system(_config(shots_file, grounded), "zh")
    reply = system.respond(system.new_session("u1"), "畅游套餐月费多少钱？")
    requests = system.generator.requests  # type: ignore[attr-defined]
    assert requests and reply.text
    shots = requests[-1].exemplars
    assert [s.response for s in shots] == ["畅游套餐每月五十八元。"]
    assert shots[0].context[-1].text == "畅游套餐的月费是多少？"


def test_without_an_exemplars_block_the_generator_gets_none(shots_file):
    config = SystemConfig.from_data(
        {**doubles.CONFIG, "languages": ["zh"], "generator": "service_doubles:recording_generator"}
    )
    system = build_system(config, "zh")
    system.respond(system.new_session("u1"), "畅游套餐月费多少钱？")
    assert system.generator.requests[-1].exemplars == []  # type: ignore[attr-defined]


def test_the_http_service_feeds_exemplars_to_its_generator(tmp_path, shots_file):
    service = Service(ServiceSettings(_config(shots_file, grounded=False, k=2), str(tmp_path / "s.sqlite")))
    client = TestClient(create_app(service), raise_server_exceptions=False)
    body = {"messages": [{"role": "user", "content": "夜猫流量包流量有多少？"}], "language": "zh", "profile": "u2"}
    response = client.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    generator = service.systems["zh"].generator
    shots = generator.requests[-1].exemplars  # type: ignore[attr-defined]
    assert shots and shots[0].response == "夜猫流量包有夜间二十GB。"


def test_batch_generation_and_the_system_attach_the_same_exemplars(shots_file):
    config = _config(shots_file, grounded=False, k=2)
    system = build_system(config, "zh")
    exemplars = system.knowledge_branch.exemplars
    assert exemplars is not None
    dataset = datasets.load("kdconv", shots_file)
    example = dataset.examples[0]
    batch = request_for(example, dataset, exemplars=exemplars)
    system.answer(example.context, dialog_id=example.dialog_id)
    served = system.generator.requests[-1].exemplars  # type: ignore[attr-defined]
    assert served == batch.exemplars
    # an example never sees its own dialog's reply as an exemplar
    assert all(s.response != example.response for s in served)
    system.answer(example.context)
    assert any(s.response == example.response for s in system.generator.requests[-1].exemplars)  # type: ignore[attr-defined]


def test_exemplar_config_round_trips_and_a_bad_one_is_a_config_error(shots_file):
    config = _config(shots_file, grounded=False)
    assert SystemConfig.from_data(config.to_data()) == config
    assert SystemConfig.from_data({"exemplars": None}).exemplars is None
    with pytest.raises(ConfigError, match="field 'exemplars'"):
        SystemConfig.from_data({"exemplars": {"format": "kdconv"}}, "x.yaml")
    bad = SystemConfig.from_data({**config.to_data(), "exemplars": {"name": "dataset", "format": "kdconv"}})
    with pytest.raises(ConfigError, match="exemplar source 'dataset'"):
        build_system(bad, "zh")
    with pytest.raises(ConfigError, match="unknown exemplar source"):
        EXEMPLARS.build("nope", BuildContext(datasets.load("kdconv", shots_file), "zh"))
