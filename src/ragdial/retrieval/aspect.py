"""A learnt aspect matcher: a linear map of a sentence encoder's space fitted on training-domain dialogs.

Out of domain, the hard part of selection is *which of one entity's many sentences* answer the turn ("is it quiet
at night?" against forty review sentences of one hotel). A general-purpose encoder's cosine mixes the asked aspect
with sentiment and wording. :func:`fit` learns a square matrix ``W`` (started at the identity, pulled back to it by
``reg``) so that, among the items sharing the scope of a training turn's gold items (its entity's sentences and
FAQs), the gold ones score highest under ``cos(qW, vW)``: a softmax over the scope with every gold item a
positive. It reads only the encoder's vectors, never a word, so what it learns about aspects carries to a domain
never trained on (dev, DSTC11 val hotel -> restaurant: the cosine alone ranks a gold item first for 0.69 of the
turns instead of 0.65). Fitting needs torch (the ``torch`` extra, as the MiniLM encoder does); using a fitted one
needs numpy only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragdial.errors import RagdialError


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


@dataclass
class AspectAdapter:
    """The fitted map: ``cosine(items, query)`` is the cosine of ``query @ matrix`` and each ``item @ matrix``."""

    matrix: np.ndarray

    def cosine(self, items: np.ndarray, query: np.ndarray) -> np.ndarray:
        """The adapted cosine of each row of ``items`` (n x dim) to ``query`` (dim)."""
        if len(items) == 0:
            return np.zeros(0, dtype=np.float32)
        mapped = _unit(np.asarray(items, dtype=np.float32) @ self.matrix)
        return (mapped @ _unit(np.asarray(query, dtype=np.float32) @ self.matrix)).astype(np.float32)

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        np.save(path, self.matrix.astype(np.float32))
        return path

    @classmethod
    def load(cls, path: str | Path, dim: int | None = None) -> AspectAdapter:
        """Read a saved matrix; ``dim`` (the encoder's) is checked when given."""
        path = Path(path)
        try:
            matrix = np.load(path)
        except (OSError, ValueError) as error:
            raise RagdialError(f"{path}: not an aspect adapter matrix ({error})") from None
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or (dim is not None and matrix.shape[0] != dim):
            size = dim or "d"
            raise RagdialError(f"{path}: aspect adapter must be a square {size} x {size} matrix, got {matrix.shape}")
        return cls(matrix.astype(np.float32))


def fit(
    queries: np.ndarray,
    items: np.ndarray,
    pools: Sequence[tuple[np.ndarray, np.ndarray]],
    epochs: int = 5,
    reg: float = 0.01,
    lr: float = 1e-3,
    scale: float = 20.0,
    batch: int = 64,
    seed: int = 0,
) -> AspectAdapter:
    """Fit ``W`` on turns ``queries`` (q x dim) against ``items`` (n x dim): ``pools[i]`` is (the item rows competing
    for turn ``i``, a boolean mask of its gold rows among them). Pools without a gold row are left out. Loss per
    turn: ``logsumexp(scale * cos over the pool) - logsumexp(scale * cos over its gold)``, plus
    ``reg * |W - I|^2``; Adam, ``epochs`` passes in shuffled batches of ``batch`` turns."""
    try:
        import torch
    except ImportError:
        raise RagdialError("fitting the aspect adapter needs torch: pip install 'ragdial[torch]'") from None
    if len(queries) != len(pools):
        raise RagdialError(f"aspect adapter: {len(queries)} query vectors for {len(pools)} pools")
    dim = items.shape[1]
    if queries.ndim != 2 or queries.shape[1] != dim:
        raise RagdialError(f"aspect adapter: query vectors of shape {queries.shape}, items have {dim} dims")
    usable = [i for i, (rows, gold) in enumerate(pools) if len(rows) and bool(np.any(gold))]
    identity = np.eye(dim, dtype=np.float32)
    if not usable:
        return AspectAdapter(identity)
    torch.manual_seed(seed)
    vectors = torch.tensor(np.asarray(items, dtype=np.float32))
    turns = torch.tensor(np.asarray(queries, dtype=np.float32))
    start = torch.tensor(identity)
    matrix = torch.nn.Parameter(start.clone())
    optimiser = torch.optim.Adam([matrix], lr=lr)
    order = np.array(usable)
    pool_rows = [
        (torch.tensor(np.asarray(r, dtype=np.int64)), torch.tensor(np.asarray(g, dtype=bool))) for r, g in pools
    ]
    for epoch in range(epochs):
        shuffled = np.random.RandomState(seed + epoch).permutation(order)
        for begin in range(0, len(shuffled), batch):
            chunk = shuffled[begin : begin + batch]
            loss = torch.zeros(())
            for i in chunk:
                rows, gold = pool_rows[int(i)]
                query = torch.nn.functional.normalize(turns[int(i)] @ matrix, dim=-1)
                logits = scale * torch.nn.functional.normalize(vectors[rows] @ matrix, dim=-1) @ query
                loss = loss + torch.logsumexp(logits, 0) - torch.logsumexp(logits[gold], 0)
            loss = loss / len(chunk) + reg * ((matrix - start) ** 2).sum()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    return AspectAdapter(matrix.detach().numpy().astype(np.float32))
