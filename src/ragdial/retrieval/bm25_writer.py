"""A ``bm25s`` index written to disk chunk by chunk, so building it takes memory bounded by a chunk (plus the
vocabulary), not by the corpus.

``bm25s`` builds its score matrix in memory from every document's token ids at once. ``BM25Writer`` takes one
document at a time: each chunk of documents is reduced to (token, document, term frequency) triples sorted by
token and written to a part file; at the end, with the document frequencies and the average length known, every
part's Lucene BM25 impacts are computed and written into their place in the memory-mapped CSC arrays, one part at a
time. The directory it writes is what ``bm25s.BM25.save`` writes for ``method="lucene"`` (the same arrays to the
bit: tested), so ``LexicalIndex.load`` reads it.
"""

from __future__ import annotations

import json
import math
import shutil
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

CHUNK = 20_000
DATA, INDICES, INDPTR = "data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy"


class BM25Writer:
    """``add(tokens)`` per document, in index order, then ``finish()`` writes ``directory``."""

    def __init__(self, directory: str | Path, chunk: int = CHUNK) -> None:
        self.directory = Path(directory)
        self.chunk = chunk
        self.vocab: dict[str, int] = {}
        self._parts_dir = self.directory.with_name(self.directory.name + ".parts")
        self._parts: list[tuple[Path, int]] = []  # part file, documents in it
        self._lengths = array("i")  # tokens per document, 4 bytes each
        self._df = np.zeros(0, np.int64)
        self._rows: list[int] = []
        self._cols: list[int] = []
        self._tfs: list[int] = []
        self._in_chunk = 0

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, tokens: Sequence[str]) -> None:
        """The next document's analyzer tokens."""
        vocab = self.vocab
        counts = Counter(vocab.setdefault(token, len(vocab)) for token in tokens)
        doc = len(self._lengths)
        self._lengths.append(len(tokens))
        self._rows.extend([doc] * len(counts))
        self._cols.extend(counts.keys())
        self._tfs.extend(counts.values())
        self._in_chunk += 1
        if self._in_chunk == self.chunk:
            self._flush()

    def _flush(self) -> None:
        """Write the chunk's triples, sorted by token (documents stay ascending within a token), to a part file."""
        cols = np.asarray(self._cols, dtype=np.int32)
        order = np.argsort(cols, kind="stable")
        part = np.stack([cols[order], np.asarray(self._rows, np.int32)[order], np.asarray(self._tfs, np.int32)[order]])
        counts = np.bincount(cols, minlength=len(self.vocab))
        self._df = np.concatenate([self._df, np.zeros(len(counts) - len(self._df), np.int64)]) + counts
        self._parts_dir.mkdir(parents=True, exist_ok=True)
        path = self._parts_dir / f"{len(self._parts)}.npy"
        np.save(path, part, allow_pickle=False)
        self._parts.append((path, self._in_chunk))
        self._rows, self._cols, self._tfs = [], [], []
        self._in_chunk = 0

    def finish(self, progress: Callable[[int], None] | None = None) -> int:
        """Write the index (nothing for no documents) and remove the part files; the number of documents.
        ``progress(n)`` hears of each part of ``n`` documents placed."""
        if self._in_chunk:
            self._flush()
        docs = len(self._lengths)
        if not docs:
            return 0
        import bm25s

        model = bm25s.BM25(method="lucene")
        k1, b = float(model.k1), float(model.b)
        lengths = np.frombuffer(self._lengths, dtype=np.int32).astype(np.int64)
        l_avg = lengths.mean()  # as bm25s: np.float64, so the arithmetic below is bm25s' own, in float64
        vocab_size = len(self.vocab)
        df = self._df
        idf = np.zeros(vocab_size, np.float32)
        for value in np.unique(df):  # bm25s: math.log per token (np.log may differ in the last bit)
            idf[df == value] = math.log(1 + (docs - int(value) + 0.5) / (int(value) + 0.5))
        indptr = np.zeros(vocab_size + 1, np.int64)
        np.cumsum(df, out=indptr[1:])
        nnz = int(indptr[-1])
        self.directory.mkdir(parents=True, exist_ok=True)
        data = np.lib.format.open_memmap(self.directory / DATA, mode="w+", dtype=np.float32, shape=(nnz,))
        indices = np.lib.format.open_memmap(self.directory / INDICES, mode="w+", dtype=np.int32, shape=(nnz,))
        del data, indices
        np.save(self.directory / INDPTR, indptr, allow_pickle=False)
        cursor = indptr[:-1].copy()
        scale = k1 * ((1 - b) + b * lengths / l_avg)  # per document, as bm25s computes it per document
        for path, size in self._parts:
            cols, rows, tfs = np.load(path)
            tf = tfs.astype(np.float32)
            impact = (idf[cols] * (tf / (scale[rows] + tf))).astype(np.float32)
            first = np.searchsorted(cols, cols, side="left")
            where = cursor[cols] + np.arange(len(cols)) - first
            # mapped for one part at a time, so only the pages this part writes are resident
            data = np.load(self.directory / DATA, mmap_mode="r+")
            indices = np.load(self.directory / INDICES, mmap_mode="r+")
            data[where] = impact
            indices[where] = rows
            data.flush()
            indices.flush()
            del data, indices
            cursor += np.bincount(cols, minlength=vocab_size)
            path.unlink()
            if progress is not None:
                progress(size)
        shutil.rmtree(self._parts_dir, ignore_errors=True)
        vocab = dict(self.vocab)
        if "" not in vocab:  # bm25s adds an empty token to the vocabulary (no postings)
            vocab[""] = vocab_size
        (self.directory / "vocab.index.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
        params = {
            "k1": model.k1,
            "b": model.b,
            "delta": model.delta,
            "method": model.method,
            "idf_method": model.idf_method,
            "dtype": model.dtype,
            "int_dtype": model.int_dtype,
            "num_docs": docs,
            "version": bm25s.__version__,
            "backend": model.backend,
        }
        (self.directory / "params.index.json").write_text(json.dumps(params, indent=4), encoding="utf-8")
        self.vocab, self._lengths, self._parts = {}, array("i"), []
        return docs
