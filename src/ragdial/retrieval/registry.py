"""``RETRIEVERS``: the retrievers a config can name. Factories only load (an index built from the knowledge base, a
saved index directory, a Milvus collection, a trained reranker); training is ``ragdial train retriever``.

```yaml
retriever: {name: hybrid, query: recent}              # BM25 + dense over the system's knowledge base
retriever: {name: bm25}                               # BM25 only
retriever: {name: index, path: idx/, reranker: rr/}   # a directory written by `ragdial index build`
retriever: {name: hybrid, reranker: tr/}              # either reranker kind (`ragdial train retriever --transfer`)
retriever: {name: milvus, uri: kb.db}                 # milvus-lite file or http://host:19530; indexed if absent
retriever: {name: milvus, uri: kb.db, reranker: rr/}  # the same reranker, applied after Milvus
```
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Unpack, cast

from ragdial.components import BuildContext, ConfigError, Registry
from ragdial.retrieval.base import Retriever

if TYPE_CHECKING:
    from ragdial.jsontypes import JSONObject
    from ragdial.retrieval.config import HybridOptions, RetrieverOptions

RETRIEVERS: Registry[Retriever] = Registry("retriever")


def _hybrid(ctx: BuildContext, name: str, defaults: RetrieverOptions, params: HybridOptions) -> Retriever:
    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.retrieval.rerank import load_reranker

    reranker = params.get("reranker")  # a folder of `ragdial train retriever [--transfer]`
    options = {key: value for key, value in params.items() if key != "reranker"}
    config = RetrieverConfig.from_dict({**defaults, **options})
    retriever = HybridRetriever(ctx.kb, config, reranker=load_reranker(reranker) if reranker else None)
    retriever.spec = {"name": name, **cast("JSONObject", params)}  # every option is a JSON value
    return retriever


def bm25(ctx: BuildContext, **params: Unpack[HybridOptions]) -> Retriever:
    """BM25 over the shared tokens (no dense encoder); parameters are ``RetrieverConfig`` fields and ``reranker``."""
    return _hybrid(ctx, "bm25", {"fusion": "bm25", "encoder": None}, params)


def hybrid(ctx: BuildContext, **params: Unpack[HybridOptions]) -> Retriever:
    """BM25 + dense (USE multilingual) fused by reciprocal rank; ``reranker``: a trained reranker folder."""
    return _hybrid(ctx, "hybrid", {"fusion": "rrf"}, params)


def index(ctx: BuildContext, path: str, reranker: str | None = None, mmap: bool = True) -> Retriever:
    """A saved index directory (``ragdial index build``), memory-mapped; ``reranker`` overrides the stored one."""
    from ragdial.retrieval.index import load_index

    retriever = load_index(path, mmap=mmap, reranker=reranker)
    retriever.spec = {"name": "index", "path": path, **({"reranker": reranker} if reranker else {})}
    return retriever


def milvus(
    ctx: BuildContext,
    uri: str,
    collection: str | None = None,
    token: str = "",
    build: str = "missing",
    timeout: float = 10.0,
    progress: Callable[[int], None] | None = None,
    reranker: str | None = None,
    lexical: str = "ragdial",
    **params: Unpack[RetrieverOptions],
) -> Retriever:
    """A Milvus collection: ``uri`` a milvus-lite file (``kb.db``, one process) or a server (``http://host:19530``).
    ``collection`` defaults to ``ragdial_<language>``. ``build``: ``missing`` (default: index the system's knowledge
    base into it when the collection is absent or holds another number of items), ``always``, or ``never`` (it must
    exist; a collection built for the other ``lexical`` mode or by an older ragdial counts as absent).
    ``reranker``: a trained reranker folder, applied after Milvus as after the in-process retriever. ``lexical``:
    ``ragdial`` (BM25 over ragdial's analyzer tokens, as in-process) or ``milvus`` (Milvus' own analyzer).
    Other parameters are ``RetrieverConfig`` fields. An unreachable ``uri`` is one error naming it.
    ``progress(n)`` (from code, not a config) hears of each batch of ``n`` items indexed."""
    import sys

    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.milvus import LEXICAL, MilvusRetriever

    if build not in BUILD_MODES:
        raise ConfigError(f"retriever 'milvus': build must be one of {', '.join(BUILD_MODES)}, not {build!r}")
    if lexical not in LEXICAL:
        raise ConfigError(f"retriever 'milvus': lexical must be one of {', '.join(LEXICAL)}, not {lexical!r}")
    name = collection or f"ragdial_{ctx.language}"
    from ragdial.retrieval.rerank import load_reranker

    model = load_reranker(reranker) if reranker else None
    config = RetrieverConfig.from_dict(params)
    retriever = MilvusRetriever(
        uri, name, config, ctx.language, token, timeout, kb=ctx.kb, reranker=model, lexical=lexical
    )
    retriever.reranker_path = reranker
    rows = retriever.count()
    stale = retriever.stale()
    if build == "always" or (build == "missing" and (rows != len(ctx.kb) or stale)):
        print(f"ragdial: indexing {len(ctx.kb)} items into Milvus {uri} ({name}) ...", file=sys.stderr, flush=True)
        retriever.build(ctx.kb, progress=progress)
    elif rows < 0 or stale:
        retriever.close()
        why = f"has no collection {name!r}" if rows < 0 else f"collection {name!r} cannot be used: {stale}"
        raise ConfigError(f"retriever 'milvus': {uri} {why} (build it first, or build: missing)")
    return retriever


BUILD_MODES = ("missing", "always", "never")


RETRIEVERS.register("hybrid", hybrid, "BM25 + dense encoder, reciprocal-rank fusion", auto=True)
RETRIEVERS.register("bm25", bm25, "BM25 (ragdial.retrieval.HybridRetriever without a dense encoder)", auto=True)
RETRIEVERS.register("index", index, "a saved index directory: {name: index, path: DIR}")
RETRIEVERS.register("milvus", milvus, "a Milvus collection: {name: milvus, uri: kb.db or http://host:19530}")
