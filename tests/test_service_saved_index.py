"""`retriever: {name: index, path: …}` in the served system: a saved index directory is served memory-mapped, with no
re-indexing (no BM25 build, no encoding) at start-up."""

from __future__ import annotations

import numpy as np
from fastapi.testclient import TestClient

from ragdial.datasets.mobilecs2 import load_demo
from ragdial.pipeline import SystemConfig
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.retrieval.index import save_index
from ragdial.serve.app import create_app
from ragdial.serve.service import Service, ServiceSettings


def test_saved_index_is_served_without_reindexing(tmp_path, monkeypatch):
    index = tmp_path / "idx"
    save_index(HybridRetriever(load_demo("zh").kb, RetrieverConfig(encoder="hash", fusion="rrf")), index)

    from ragdial.retrieval import hybrid, lexical

    def no_indexing(*args, **kwargs):
        raise AssertionError("the service indexed the knowledge again")

    monkeypatch.setattr(lexical.LexicalIndex, "build", no_indexing)
    monkeypatch.setattr(hybrid, "encode_cached", no_indexing)
    config = SystemConfig.from_data(
        {
            "languages": ["zh"],
            "knowledge": {"name": "demo"},
            "detector": {"name": "always"},
            "retriever": {"name": "index", "path": str(index)},
            "generator": {"name": "template"},
        }
    )
    service = Service(ServiceSettings(config, str(tmp_path / "s.sqlite")))
    retriever = service.systems["zh"].retriever
    assert isinstance(retriever.vectors, np.memmap)  # memory-mapped, not read into memory
    body = {"messages": [{"role": "user", "content": "国际漫游怎么开通"}], "profile": "demo-u1"}
    reply = TestClient(create_app(service)).post("/v1/chat/completions", json=body)
    assert reply.status_code == 200, reply.text
    assert "faq:12" in [k["id"] for k in reply.json()["ragdial"]["knowledge"]]
