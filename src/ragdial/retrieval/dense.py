"""An approximate nearest-neighbour index over a retriever's vectors, for knowledge bases too large for an exact
(brute-force) dense search per query: faiss IVF with 8-bit scalar quantisation and inner product.

It only shortlists: the retriever scores the shortlist exactly from its own (memory-mapped) vectors, so the
quantisation changes which items reach the shortlist, never their scores. Saved as one faiss file and read back
memory-mapped. Needs ``faiss-cpu``.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

from ragdial.errors import RagdialError

CHUNK = 20_000
TRAIN_PER_LIST = 40  # training vectors per inverted list (faiss warns below 39)


def _faiss() -> Any:  # Any: faiss (untyped)
    try:
        import faiss
    except ImportError as err:  # pragma: no cover - depends on the install
        raise RagdialError("an approximate dense index needs faiss-cpu: pip install faiss-cpu") from err
    return faiss


def read_rows(vectors: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of ``vectors`` as float32. A memory-mapped matrix (``np.load(..., mmap_mode="r")``) is read
    with a plain file read instead, so a pass over a matrix larger than memory leaves none of it resident."""
    stop = min(stop, len(vectors))
    if _mapped(vectors) and start < stop:
        width = int(np.prod(vectors.shape[1:]))
        rows = np.fromfile(
            str(vectors.filename),
            dtype=vectors.dtype,
            count=(stop - start) * width,
            offset=vectors.offset + start * width * vectors.dtype.itemsize,
        )
        return rows.reshape(stop - start, *vectors.shape[1:]).astype(np.float32, copy=False)
    return np.ascontiguousarray(vectors[start:stop], dtype=np.float32)


def _mapped(vectors: np.ndarray) -> TypeGuard[np.memmap]:
    """Whether ``vectors`` is a whole memory-mapped C-ordered matrix of a file (not a slice or an in-memory array)."""
    return (
        isinstance(vectors, np.memmap)
        and isinstance(vectors.base, mmap.mmap)
        and vectors.filename is not None
        and vectors.flags.c_contiguous
    )


def lists_for(size: int) -> int:
    """The number of inverted lists for ``size`` vectors: about the square root, 16 to 4,096."""
    return int(min(4096, max(16, round(size**0.5))))


class DenseIndex:
    """``search(query, k)``: the ``k`` rows with (approximately) the highest inner product with ``query``."""

    def __init__(self, index: Any, nprobe: int = 16) -> None:  # Any: faiss (untyped)
        self.index = index
        self.nprobe = nprobe
        index.nprobe = nprobe

    def __len__(self) -> int:
        return int(self.index.ntotal)

    @classmethod
    def build(
        cls,
        vectors: np.ndarray,
        nprobe: int = 16,
        lists: int | None = None,
        progress: Callable[[int], None] | None = None,
        seed: int = 0,
    ) -> DenseIndex:
        """Train on a seeded sample of ``vectors`` (rows of a possibly memory-mapped matrix), then add them chunk by
        chunk (memory bounded by the sample, a chunk and the 8-bit codes: a memory-mapped matrix is read chunk by
        chunk, :func:`read_rows`); ``progress(n)`` after each chunk of ``n`` rows."""
        faiss = _faiss()
        size, dim = vectors.shape
        lists = min(lists or lists_for(size), max(1, size))  # faiss needs a training point per list
        index = faiss.IndexIVFScalarQuantizer(
            faiss.IndexFlatIP(dim), dim, lists, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
        )
        sample = np.sort(np.random.default_rng(seed).choice(size, min(size, lists * TRAIN_PER_LIST), replace=False))
        bounds = np.searchsorted(sample, np.arange(0, size + CHUNK, CHUNK))
        index.train(
            np.concatenate(
                [
                    read_rows(vectors, start, start + CHUNK)[sample[bounds[i] : bounds[i + 1]] - start]
                    for i, start in enumerate(range(0, size, CHUNK))
                ]
            )
        )
        for start in range(0, size, CHUNK):
            stop = min(size, start + CHUNK)
            index.add(read_rows(vectors, start, stop))
            if progress is not None:
                progress(stop - start)
        return cls(index, nprobe)

    def search(self, query: np.ndarray, k: int) -> np.ndarray:
        """Row indices of the (approximately) ``k`` best rows for one query vector, best first."""
        if k <= 0 or len(self) == 0:
            return np.zeros(0, np.int64)
        _, found = self.index.search(np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32), k)
        rows = found[0]
        return rows[rows >= 0].astype(np.int64)

    def save(self, path: str | Path) -> Path:
        _faiss().write_index(self.index, str(path))
        return Path(path)

    @classmethod
    def load(cls, path: str | Path, nprobe: int = 16, mmap: bool = True) -> DenseIndex:
        faiss = _faiss()
        flags = faiss.IO_FLAG_MMAP if mmap else 0
        try:
            index = faiss.read_index(str(path), flags)
        except RuntimeError as err:
            raise RagdialError(f"{path}: not a faiss index ({str(err).strip().splitlines()[-1]})") from None
        return cls(index, nprobe)
