"""A retriever on disk: a directory that loads back fast (bm25s arrays, the vectors and the per-item columns
memory-mapped; the items read from disk when a ranking needs them).

Layout: ``index.json`` (format version, retriever config, item count, encoder), ``items.jsonl`` (the knowledge
items in index order) and ``items.offsets.npy`` (where each line starts: ``ItemStore``), ``column.*.npy`` and
``columns.json`` (each item's scope, source and entity: ``ItemColumns``), ``entities.json`` (the entity tracker's
names and learnt aliases), ``bm25/`` (``bm25s`` save), ``vectors.npy`` (float32, L2-normalised rows) where the
config uses a dense encoder, ``ann.faiss`` (``ragdial.retrieval.dense``) for a knowledge base large enough to
shortlist dense candidates approximately, and optionally ``reranker/`` (see ``ragdial.retrieval.rerank``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragdial.errors import RagdialError
from ragdial.io import atomic_directory
from ragdial.jsontypes import JSONDict, as_object
from ragdial.retrieval.bm25_writer import BM25Writer
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.dense import DenseIndex, read_rows
from ragdial.retrieval.entities import EntityTracker
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.retrieval.lexical import LexicalIndex
from ragdial.retrieval.rerank import load_reranker
from ragdial.retrieval.store import COLUMNS, ITEMS, OFFSETS, ColumnsBuilder, ItemColumns, ItemStore, write_offsets
from ragdial.schema import Knowledge, KnowledgeBase

if TYPE_CHECKING:
    from ragdial.text.encoders import Encoder

INDEX_VERSION = 1
META = "index.json"
TRACKER = "entities.json"
BM25_DIR = "bm25"
VECTORS = "vectors.npy"
ANN = "ann.faiss"
RERANKER_DIR = "reranker"
CHUNK = 20_000


def save_index(retriever: HybridRetriever, directory: str | Path, extra: JSONDict | None = None) -> Path:
    """Write ``retriever`` to ``directory`` (replaced whole: written beside it, then renamed into place)."""
    directory = Path(directory)
    with atomic_directory(directory) as tmp:
        write_offsets(tmp, retriever.items)
        retriever.columns.save(tmp)
        retriever.tracker.save(tmp / TRACKER)
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
    reranker: str | Path | None = None,
) -> Path:
    """Write an index directory from a stream of items in memory bounded by a chunk of items (plus the vocabulary
    and, above ``prune_above`` items, the approximate index's 8-bit codes), never by the knowledge base: each item
    goes to ``items.jsonl`` and its BM25 terms to a part file as it comes (``BM25Writer``), then BM25 is merged on
    disk; the vectors (``vectors``: one row per item, e.g. a memory-mapped ``.npy``, read chunk by chunk; without
    them the config's encoder encodes chunk by chunk) are written into the directory, and the approximate dense
    index is built from them when the items are more than ``prune_above``. The items' columns and the entity
    tracker (``ItemColumns``, ``EntityTracker``) are saved too, so ``load_index`` reads no item. ``progress(step,
    n)`` hears of each chunk of ``n`` items per step (``items``, ``bm25``, ``ann index``). ``reranker``: a trained
    reranker folder, checked by loading it and stored in the index. The directory is replaced whole, as
    ``save_index``."""
    from ragdial.text.encoders import get_encoder

    config = config or RetrieverConfig()
    directory = Path(directory)
    encoder = get_encoder(config.encoder) if config.encoder and config.uses_dense else None
    model = load_reranker(reranker) if reranker is not None else None  # a bad folder fails before any work
    with atomic_directory(directory) as tmp:
        bm25 = BM25Writer(tmp / BM25_DIR, CHUNK)
        columns = ColumnsBuilder()
        with open(tmp / "vectors.raw", "wb") as raw:

            def passing(stream: Iterable[Knowledge]) -> Iterator[Knowledge]:
                """Each item on its way to ``items.jsonl``: its BM25 terms, columns (and vector) taken."""
                texts: list[str] = []
                for count, item in enumerate(stream, 1):
                    bm25.add(config.analyzer(item.text or ""))
                    columns.add(item)
                    if encoder is not None and vectors is None:
                        texts.append(item.text or "")
                        if len(texts) == CHUNK:
                            raw.write(encoder.encode(texts).astype(np.float32).tobytes())
                            texts = []
                    if progress is not None and count % CHUNK == 0:
                        progress("items", CHUNK)
                    yield item
                if encoder is not None and vectors is None and texts:
                    raw.write(encoder.encode(texts).astype(np.float32).tobytes())

            count = write_offsets(tmp, passing(items))
        if progress is not None and count % CHUNK:
            progress("items", count % CHUNK)
        columns.build().save(tmp)
        # the tracker reads the items back from disk (its learnt aliases take two passes over the texts)
        EntityTracker(ItemStore(tmp), pinyin=config.analyzer.pinyin).save(tmp / TRACKER)
        bm25.finish((lambda n: progress("bm25", n)) if progress is not None else None)
        if encoder is not None:
            if vectors is not None and len(vectors) != count:
                raise RagdialError(f"{len(vectors)} vectors for {count} knowledge items")
            source = vectors
            if source is None:
                source = np.memmap(tmp / "vectors.raw", dtype=np.float32, mode="r", shape=(count, encoder.dim))
            with open(tmp / VECTORS, "wb") as out:  # written, not mapped: none of it stays resident
                header = {"descr": "<f4", "fortran_order": False, "shape": (count, encoder.dim)}
                np.lib.format.write_array_header_1_0(out, header)
                for start in range(0, count, CHUNK):
                    out.write(read_rows(source, start, start + CHUNK).tobytes())
            del source
            stored = np.load(tmp / VECTORS, mmap_mode="r")
            if config.shortlist and count > config.prune_above:
                step = (lambda n: progress("ann index", n)) if progress is not None else None
                ann = DenseIndex.build(stored, config.ann_nprobe, progress=step)
                ann.save(tmp / ANN)
                del ann
            del stored
        (tmp / "vectors.raw").unlink()
        if model is not None:
            model.save(tmp / RERANKER_DIR)
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
    kb: KnowledgeBase | ItemStore
    tracker, columns = None, None
    if (directory / OFFSETS).exists():  # read by offset: no item is read at start-up
        kb = ItemStore(directory)
        if len(kb) != meta["items"]:
            raise RagdialError(f"{directory / OFFSETS}: {len(kb)} items, index.json says {meta['items']}")
        columns = ItemColumns.load(directory) if (directory / COLUMNS).exists() else None
        tracker = EntityTracker.load(directory / TRACKER) if (directory / TRACKER).exists() else None
    else:  # an index written before the item store: its items in memory
        kb = KnowledgeBase(read_items(directory))
    lexical = LexicalIndex.load(directory / BM25_DIR, config.analyzer, len(kb), mmap=mmap)
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
    return HybridRetriever(
        kb, config, lexical=lexical, vectors=vectors, reranker=model, ann=ann, tracker=tracker, columns=columns
    )
