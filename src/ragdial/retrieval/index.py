"""A retriever on disk: a directory that loads back fast (bm25s arrays and the vectors memory-mapped).

Layout: ``index.json`` (format version, retriever config, item count, encoder), ``items.jsonl`` (the knowledge
items in index order), ``bm25/`` (``bm25s`` save), ``vectors.npy`` (float32, L2-normalised rows) where the
config uses a dense encoder, ``ann.faiss`` (``ragdial.retrieval.dense``) for a knowledge base large enough to
shortlist dense candidates approximately, and optionally ``reranker/`` (see ``ragdial.retrieval.rerank``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragdial.errors import RagdialError
from ragdial.io import atomic_directory
from ragdial.jsontypes import JSONDict, as_object
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.dense import DenseIndex
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.retrieval.lexical import LexicalIndex
from ragdial.retrieval.rerank import load_reranker
from ragdial.schema import Knowledge, KnowledgeBase

if TYPE_CHECKING:
    from ragdial.text.encoders import Encoder

INDEX_VERSION = 1
META = "index.json"
ITEMS = "items.jsonl"
BM25_DIR = "bm25"
VECTORS = "vectors.npy"
ANN = "ann.faiss"
RERANKER_DIR = "reranker"
CHUNK = 20_000


def save_index(retriever: HybridRetriever, directory: str | Path, extra: JSONDict | None = None) -> Path:
    """Write ``retriever`` to ``directory`` (replaced whole: written beside it, then renamed into place)."""
    directory = Path(directory)
    with atomic_directory(directory) as tmp:
        with open(tmp / ITEMS, "w", encoding="utf-8") as handle:
            for item in retriever.items:
                handle.write(json.dumps(item.to_dict(), ensure_ascii=False) + "\n")
        retriever.lexical.save(tmp / BM25_DIR)
        if retriever.vectors is not None:
            np.save(tmp / VECTORS, np.asarray(retriever.vectors, dtype=np.float32), allow_pickle=False)
        if retriever.ann is not None:
            retriever.ann.save(tmp / ANN)
        if retriever.reranker is not None:
            retriever.reranker.save(tmp / RERANKER_DIR)
        meta = _meta(len(retriever.items), retriever.config, retriever.encoder, extra)
        _write_meta(tmp, meta)
    return directory


def write_index(
    items: Iterable[Knowledge],
    directory: str | Path,
    config: RetrieverConfig | None = None,
    vectors: np.ndarray | None = None,
    progress: Callable[[str, int], None] | None = None,
    extra: JSONDict | None = None,
) -> Path:
    """Write an index directory from a stream of items without holding them: each item goes to ``items.jsonl`` and
    its BM25 token ids are kept as it comes, then BM25 is built from the ids; the vectors (``vectors``: one row per
    item, e.g. a memory-mapped ``.npy``; without them the config's encoder encodes chunk by chunk) are written
    into the directory, and the approximate dense index is built from them when the items are more than
    ``prune_above``. What ``load_index`` builds in memory (the items, the entity tracker) is built when it loads.
    ``progress(step, n)`` hears of each chunk of ``n`` items. The directory is replaced whole, as ``save_index``."""
    import bm25s
    from bm25s.tokenization import Tokenized

    from ragdial.text.encoders import get_encoder

    config = config or RetrieverConfig()
    directory = Path(directory)
    encoder = get_encoder(config.encoder) if config.encoder and config.uses_dense else None
    with atomic_directory(directory) as tmp:
        vocab: dict[str, int] = {}
        ids: list[list[int]] = []
        texts: list[str] = []
        count = 0
        with open(tmp / ITEMS, "w", encoding="utf-8") as handle, open(tmp / "vectors.raw", "wb") as raw:
            for item in items:
                handle.write(json.dumps(item.to_dict(), ensure_ascii=False) + "\n")
                ids.append([vocab.setdefault(token, len(vocab)) for token in config.analyzer(item.text or "")])
                count += 1
                if encoder is not None and vectors is None:
                    texts.append(item.text or "")
                    if len(texts) == CHUNK:
                        raw.write(encoder.encode(texts).astype(np.float32).tobytes())
                        texts = []
                if progress is not None and count % CHUNK == 0:
                    progress("items", CHUNK)
            if encoder is not None and vectors is None and texts:
                raw.write(encoder.encode(texts).astype(np.float32).tobytes())
        if progress is not None and count % CHUNK:
            progress("items", count % CHUNK)
        lexical = bm25s.BM25(method="lucene")
        if count:
            lexical.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
            lexical.save(str(tmp / BM25_DIR))
        del ids, lexical
        if encoder is not None:
            if vectors is not None and len(vectors) != count:
                raise RagdialError(f"{len(vectors)} vectors for {count} knowledge items")
            matrix = np.lib.format.open_memmap(tmp / VECTORS, mode="w+", dtype=np.float32, shape=(count, encoder.dim))
            source = vectors
            if source is None:
                source = np.memmap(tmp / "vectors.raw", dtype=np.float32, mode="r", shape=(count, encoder.dim))
            for start in range(0, count, CHUNK):
                matrix[start : start + CHUNK] = source[start : start + CHUNK]
            matrix.flush()
            del matrix, source
            stored = np.load(tmp / VECTORS, mmap_mode="r")
            if config.shortlist and count > config.prune_above:
                step = (lambda n: progress("ann index", n)) if progress is not None else None
                ann = DenseIndex.build(stored, config.ann_nprobe, progress=step)
                ann.save(tmp / ANN)
        (tmp / "vectors.raw").unlink()
        meta = _meta(count, config, encoder, extra)
        _write_meta(tmp, meta)
    return directory


def _meta(items: int, config: RetrieverConfig, encoder: Encoder | None, extra: JSONDict | None) -> JSONDict:
    """The index's ``meta.json``: format version, size, retriever config, encoder, time written, ``extra``."""
    return {
        "version": INDEX_VERSION,
        "items": items,
        "config": config.to_dict(),
        "encoder": encoder.name if encoder is not None else None,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **(extra or {}),
    }


def _write_meta(directory: Path, meta: JSONDict) -> None:
    (directory / META).write_text(json.dumps(meta, indent=2, ensure_ascii=False), encoding="utf-8")


def read_meta(directory: str | Path) -> JSONDict:
    path = Path(directory) / META
    if not path.exists():
        raise RagdialError(f"{directory}: not an index directory (no {META}; build one with `ragdial index build`)")
    meta = json.loads(path.read_text(encoding="utf-8"))
    if meta.get("version") != INDEX_VERSION:
        raise RagdialError(f"{path}: index version {meta.get('version')} (this ragdial reads {INDEX_VERSION})")
    return meta


def read_items(directory: str | Path) -> list[Knowledge]:
    """The knowledge items of an index directory, in index order."""
    directory = Path(directory)
    meta = read_meta(directory)
    items = []
    with open(directory / ITEMS, encoding="utf-8") as handle:
        for line in handle:
            items.append(Knowledge.from_dict(json.loads(line)))
    if len(items) != meta["items"]:
        raise RagdialError(f"{directory / ITEMS}: {len(items)} items, index.json says {meta['items']}")
    return items


def load_index(directory: str | Path, mmap: bool = True, reranker: str | Path | None = None) -> HybridRetriever:
    """Load an index directory; ``reranker`` overrides the one stored inside it."""
    directory = Path(directory)
    meta = read_meta(directory)
    config = RetrieverConfig.from_dict(dict(as_object(meta["config"])))
    items = read_items(directory)
    lexical = LexicalIndex.load(directory / BM25_DIR, config.analyzer, len(items), mmap=mmap)
    vectors = None
    if config.uses_dense:
        path = directory / VECTORS
        if not path.exists():
            raise RagdialError(f"{directory}: the config uses encoder {config.encoder!r} but {VECTORS} is missing")
        vectors = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    if reranker is None and (directory / RERANKER_DIR).exists():
        reranker = directory / RERANKER_DIR
    model = load_reranker(reranker) if reranker is not None else None
    # the approximate index is read into memory (a quarter of the vectors' size): memory-mapped, each probe of a
    # list not yet paged in costs page faults on the first queries
    ann = DenseIndex.load(directory / ANN, config.ann_nprobe, mmap=False) if (directory / ANN).exists() else None
    return HybridRetriever(KnowledgeBase(items), config, lexical=lexical, vectors=vectors, reranker=model, ann=ann)
