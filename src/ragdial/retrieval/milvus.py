"""The same retriever interface over Milvus: BM25 and dense vectors kept and searched in Milvus, scored and fused as
the in-process retriever does; dialog scope and entities as Milvus filters.

``uri`` is a local file for the embedded milvus-lite (``"kb.db"``) or a server/cluster address
(``"http://host:19530"``); nothing else changes. Needs the ``milvus`` extra (``pymilvus``, ``milvus-lite``).

A query is the in-process one: each weighted context turn is a BM25 search (``lexical: ragdial``, the default: over
the items' ragdial analyzer tokens, kept in a ``terms`` field that Milvus only splits apart, so BM25 sees the very
tokens ``HybridRetriever`` indexes; ``lexical: milvus``: over the raw text with Milvus' own analyzer, jieba for
Chinese, the standard tokenizer for English), and the weighted mean of the turns' query vectors a dense search. The
union of each list's best ``depth`` (the reranker's depth, at least ``shortlist``) is scored by every turn and by the
stored vectors, and fused (RRF over each list's top ``depth``) on the client; then ranked, or reranked and cut by the
same ``KnowledgePool.rank`` as ``HybridRetriever`` when there is a reranker. A candidate pool no larger than
``depth`` is scored whole, so the ranking is the in-process one up to float rounding.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict
from ragdial.retrieval.base import KnowledgeFilter, Retrieval, Retriever, Scope, ScoredKnowledge, take
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.entities import EntityTracker
from ragdial.retrieval.fusion import top_k
from ragdial.retrieval.pool import CandidateScores, KnowledgePool, fuse
from ragdial.retrieval.query import query_texts
from ragdial.schema import Knowledge, KnowledgeBase, SourceKind, Turn
from ragdial.text.encoders import QueryCache, encode_cached, get_encoder
from ragdial.text.tokenize import detect_language

if TYPE_CHECKING:
    from ragdial.retrieval.rerank import RerankerModel

MAX_TEXT = 65535
ANALYZERS = {
    "zh": {"tokenizer": "jieba"},
    "en": {
        "tokenizer": "standard",
        "filter": [
            "lowercase",
            {"type": "stemmer", "language": "english"},
            {"type": "stop", "stop_words": ["_english_"]},
        ],
    },
}
FIELDS = ["pk", "text", "source", "scope", "entity", "meta"]
LEXICAL = ("ragdial", "milvus")
BM25_K1, BM25_B = 1.5, 0.75  # bm25s' (method "lucene") defaults, as the in-process index
MAX_DEPTH = 16384  # Milvus' largest search limit
_NON_WORD = re.compile(r"\W")


TOO_OLD = "ragdial needs Milvus 2.5 or later (BM25 functions and sparse vectors)"


def old_server(version: str) -> str | None:
    """``version`` (``get_server_version()``: "v2.3.5-lite", "2.5.4", "milvus_lite-3.2.2") when it is a Milvus server
    older than 2.5, whose collections cannot hold a BM25 function (2.3 drops it from the schema without an error);
    ``None`` otherwise (milvus-lite 3.x and anything not read as a server version are tried as they are)."""
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?", version.strip())
    if match is None or (int(match[1]), int(match[2])) >= (2, 5):
        return None
    return version.strip()


def _quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _key(hit: dict[str, Any]) -> str:  # Any: pymilvus (untyped hit)
    return str(hit["pk"] if "pk" in hit else hit["entity"]["pk"])


def _field(hit: dict[str, Any], name: str) -> Any:  # Any: pymilvus (untyped hit)
    row = hit.get("entity") or hit
    return row[name] if name in row else hit[name]


def terms_text(tokens: Sequence[str]) -> str:
    """Analyzer tokens as one string that Milvus splits back into the same tokens: at spaces (the ``whitespace``
    tokenizer of a server) or into runs of word characters (milvus-lite's ``standard``), so any other character
    inside a token becomes ``_``."""
    return " ".join(_NON_WORD.sub("_", token) for token in tokens)


class MilvusRetriever(Retriever):
    """Knowledge in one Milvus collection; ``build(kb)`` (re)creates it, ``retrieve`` searches it."""

    def __init__(
        self,
        uri: str,
        collection: str = "ragdial_knowledge",
        config: RetrieverConfig | None = None,
        language: str = "en",
        token: str = "",
        timeout: float = 10.0,
        kb: KnowledgeBase | None = None,
        reranker: RerankerModel | None = None,
        lexical: str = "ragdial",
    ) -> None:
        try:
            from pymilvus import MilvusClient
        except ImportError as err:  # pragma: no cover - depends on the install
            raise RagdialError("the Milvus backend needs the 'milvus' extra: pip install 'ragdial[milvus]'") from err
        if language not in ANALYZERS:
            raise RagdialError(f"language must be one of {', '.join(ANALYZERS)}, not {language!r}")
        if lexical not in LEXICAL:
            raise RagdialError(f"lexical must be one of {', '.join(LEXICAL)}, not {lexical!r}")
        try:
            self.client = MilvusClient(uri, token=token, timeout=timeout)
        except Exception as err:  # pymilvus raises MilvusException (or an OS error for a bad local path)
            reason = str(getattr(err, "message", "") or err).strip().splitlines()[0]
            raise RagdialError(f"cannot reach Milvus at {uri}: {reason}") from None
        try:
            version = str(self.client.get_server_version())
        except Exception:  # a server that does not say: tried as it is
            version = ""
        too_old = old_server(version)
        if too_old:
            self.client.close()
            raise RagdialError(f"Milvus at {uri} is {too_old}: {TOO_OLD}")
        self.lite = version.startswith("milvus_lite")  # its analyzers: standard (\w+ runs) and jieba only
        self.collection = collection
        self.config = config or RetrieverConfig()
        self.language = language
        self.lexical = lexical
        self.encoder = get_encoder(self.config.encoder) if self.config.encoder and self.config.uses_dense else None
        self.uri = uri
        self.tracker = EntityTracker(())
        self._lock = threading.Lock()
        self.reranker_path: str | None = None  # how a config named the reranker (``to_config``)
        self.pool: KnowledgePool | None = None
        if reranker is not None:
            if kb is None:
                raise RagdialError("a reranker after Milvus needs the knowledge base the collection holds")
            self.pool = KnowledgePool(kb, self.config, self.encoder, reranker=reranker)
            self.tracker = self.pool.tracker
        elif kb is not None:  # the in-process tracker (its aliases learnt from the texts), not the names alone
            self.tracker = EntityTracker(list(kb), pinyin=self.config.analyzer.pinyin)
        elif self.client.has_collection(collection) and self.stale() is None:
            self._load_entities()

    @property
    def depth(self) -> int:
        """How many of each list's best a query shortlists: the reranker's depth, at least ``config.shortlist``
        (every candidate when ``shortlist`` is 0, up to Milvus' largest limit)."""
        shortlist = self.config.shortlist or MAX_DEPTH
        reranker = self.pool.reranker if self.pool is not None else None
        return min(MAX_DEPTH, max(shortlist, int(getattr(reranker, "depth", 0))))

    def count(self) -> int:
        """Rows in the collection (-1 when there is no collection)."""
        if not self.client.has_collection(self.collection):
            return -1
        return int(self.client.get_collection_stats(self.collection).get("row_count", 0))

    def stale(self) -> str | None:
        """Why the existing collection cannot serve this retriever (built by an older ragdial, or for the other
        ``lexical`` mode), or ``None``."""
        if not self.client.has_collection(self.collection):
            return None
        fields = {f["name"] for f in self.client.describe_collection(self.collection).get("fields", [])}
        if "pos" not in fields:
            return "it has no item positions (built by an older ragdial)"
        if ("terms" in fields) != (self.lexical == "ragdial"):
            built = "ragdial" if "terms" in fields else "milvus"
            return f"it was built for lexical: {built}, not {self.lexical}"
        return None

    def _load_entities(self) -> None:
        names: set[str] = set()
        iterator = self.client.query_iterator(
            self.collection, batch_size=1000, filter='entity != ""', output_fields=["entity"]
        )
        while batch := iterator.next():
            names.update(row["entity"] for row in batch)
        iterator.close()
        self.tracker = EntityTracker(
            (Knowledge(n, "", SourceKind.FAQ, {"entity": n}) for n in sorted(names)), pinyin=self.config.analyzer.pinyin
        )

    def _terms(self, text: str) -> str:
        """What a BM25 search or the ``terms`` field gets for a text: its ragdial tokens, or the text itself for
        Milvus' own analyzer."""
        return terms_text(self.config.analyzer(text)) if self.lexical == "ragdial" else text

    def build(
        self,
        kb: KnowledgeBase,
        batch_size: int = 500,
        vectors: np.ndarray | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        """Drop and recreate the collection with every item of ``kb``, then flush it (sealed, its BM25 statistics
        are the whole collection's). ``vectors`` (one row per item, e.g. a saved index's memory-mapped
        ``vectors.npy``) are used instead of encoding the texts; ``progress(n)`` is called after each inserted batch
        of ``n`` items. Rows are sent batch by batch, so memory stays bounded."""
        from pymilvus import DataType, Function, FunctionType

        client = self.client
        if client.has_collection(self.collection):
            client.drop_collection(self.collection)
        schema = client.create_schema(auto_id=False)
        schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=1024)
        schema.add_field("pos", DataType.INT64)
        own = self.lexical == "milvus"
        schema.add_field(
            "text", DataType.VARCHAR, max_length=MAX_TEXT, enable_analyzer=own, analyzer_params=ANALYZERS[self.language]
        )
        if not own:  # tokens already analysed by ragdial, each a run of word characters (``terms_text``): split
            # them apart only. milvus-lite's standard is ``\w+``; a server's (Unicode word breaks) keeps such runs
            # whole in Latin text but cuts Chinese words into characters, so Chinese needs its whitespace tokenizer
            whitespace = not self.lite and self.language == "zh"
            split = {"tokenizer": "whitespace" if whitespace else "standard"}
            schema.add_field(
                "terms", DataType.VARCHAR, max_length=MAX_TEXT, enable_analyzer=True, analyzer_params=split
            )
        for name in ("source", "scope", "entity"):
            schema.add_field(name, DataType.VARCHAR, max_length=1024)
        schema.add_field("meta", DataType.VARCHAR, max_length=MAX_TEXT)
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(
            Function(
                name="bm25",
                function_type=FunctionType.BM25,
                input_field_names=["text" if own else "terms"],
                output_field_names=["sparse"],
            )
        )
        index = client.prepare_index_params()
        bm25 = {"bm25_k1": BM25_K1, "bm25_b": BM25_B}
        index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25", params=bm25)
        if self.encoder is not None:
            schema.add_field("dense", DataType.FLOAT_VECTOR, dim=self.encoder.dim)
            index.add_index("dense", index_type="FLAT", metric_type="IP")
        client.create_collection(self.collection, schema=schema, index_params=index)
        items = list(kb)
        if vectors is not None and len(vectors) != len(items):
            raise RagdialError(f"{len(vectors)} vectors for {len(items)} knowledge items")
        if self.encoder is None:
            vectors = None
        elif vectors is None and items:
            vectors = encode_cached(self.encoder, [i.text for i in items])
        for start in range(0, len(items), batch_size):
            rows = []
            for offset, item in enumerate(items[start : start + batch_size]):
                entity = item.fields.get("entity")
                row = {
                    "pk": item.id,
                    "pos": start + offset,
                    "text": (item.text or "")[:MAX_TEXT],
                    "source": item.source.value,
                    "scope": item.scope,
                    "entity": entity if isinstance(entity, str) else "",
                    "meta": json.dumps(dict(item.fields), ensure_ascii=False, default=str)[:MAX_TEXT],
                }
                if not own:
                    row["terms"] = self._terms(item.text or "")[:MAX_TEXT]
                if vectors is not None:
                    row["dense"] = np.asarray(vectors[start + offset], dtype=np.float32).tolist()
                rows.append(row)
            client.insert(self.collection, rows)
            if progress is not None:
                progress(len(rows))
        # sealed: milvus-lite re-indexes unsealed rows at every search and, filtered, takes BM25 statistics
        # over the filtered rows only
        client.flush(self.collection)
        if self.pool is None:
            self.tracker = EntityTracker(items, pinyin=self.config.analyzer.pinyin)

    def _filter(self, scope: Scope, filter: KnowledgeFilter | None, focus: Sequence[str]) -> str:
        parts = []
        if scope.include_global:
            glob = 'scope == ""'
            if filter is not None and filter.sources:
                glob += f" and source in [{', '.join(_quote(s.value) for s in filter.sources)}]"
            if self.config.entity_scope and focus:
                glob += f' and (entity in [{", ".join(_quote(n) for n in focus)}] or entity == "")'
            parts.append(f"({glob})")
        if scope.local is not None:
            parts.append(f"(scope == {_quote(scope.local)})")
        return " or ".join(parts)

    def retrieve(
        self,
        context: Sequence[Turn],
        scope: Scope | str | None = None,
        k: int = 20,
        filter: KnowledgeFilter | None = None,
        select: int | None = None,
    ) -> Retrieval:
        """The ``k`` best items within ``scope`` and ``filter`` (as Milvus filter expressions) and the selection:
        the reranker's cut, or the first ``select`` (default ``config.select``). Empty for a missing collection or a
        context without text."""
        with self._lock:
            scored = self.score(context, Scope.of(scope), k, filter)
            if scored is None:
                return Retrieval()
            keys, scores = scored
            if self.pool is not None:
                return self.pool.rank(context, scores, k, filter, select)
            best = top_k(scores.fused, k)
            if not len(best):
                return Retrieval()
            rows = {
                str(r["pk"]): r
                for r in self.client.get(self.collection, ids=[keys[i] for i in best], output_fields=FIELDS)
            }
            ranked = [ScoredKnowledge(_item(rows[keys[i]]), float(scores.fused[i])) for i in best]
        if filter is not None and filter.min_score is not None:
            ranked = take(ranked, filter, k)
        return Retrieval(ranked, ranked[: self.config.select if select is None else select])

    def _query(
        self, context: Sequence[Turn], scope: Scope, k: int, filter: KnowledgeFilter | None
    ) -> tuple[list[str], list[tuple[str, float]], str] | None:
        """(entities in focus, weighted query texts, the Milvus filter expression); ``None`` when there is nothing
        to search."""
        if k <= 0 or not (scope.include_global or scope.local is not None):
            return None
        if not self.client.has_collection(self.collection):
            return None
        focus = self.tracker.focus(context, self.config.carry_turns) if len(self.tracker) else []
        pairs = query_texts(context, self.config, focus, scoped=self.config.entity_scope and bool(focus))
        if not pairs:
            return None
        return focus, pairs, self._filter(scope, filter, focus)

    def score(
        self, context: Sequence[Turn], scope: Scope, k: int, filter: KnowledgeFilter | None
    ) -> tuple[list[str], CandidateScores] | None:
        """The shortlisted candidates' keys and scores, as ``HybridRetriever.score`` gives them: the union of the
        ``depth`` best by BM25 of each query turn and by dense similarity to the turns' weighted query vector, in
        the in-process order (the dialog's own items, then the global ones, each by position), every one scored
        by each turn's BM25 and by its stored vector, then fused. ``None`` when there is nothing to search."""
        query = self._query(context, scope, k, filter)
        if query is None:
            return None
        focus, pairs, expr = query
        depth = max(k, self.depth)
        found: dict[str, tuple[bool, int]] = {}  # key -> (global, position)
        texts = [self._terms(text) for text, _ in pairs]
        lexical: list[dict[str, float]] = [{} for _ in pairs]
        complete = [True] * len(pairs)
        asked = [i for i, text in enumerate(texts) if text.strip()]
        if asked and self.config.fusion != "dense":
            results = self.client.search(
                self.collection,
                data=[texts[i] for i in asked],
                anns_field="sparse",
                limit=depth,
                filter=expr,
                output_fields=["pos", "scope"],
                search_params={"metric_type": "BM25"},
            )
            for i, hits in zip(asked, results, strict=True):
                complete[i] = len(hits) < depth
                for hit in hits:
                    key = _key(hit)
                    found[key] = (_field(hit, "scope") == "", int(_field(hit, "pos")))
                    lexical[i][key] = abs(float(hit["distance"])) / (BM25_K1 + 1.0)
        weights = np.array([w for _, w in pairs], dtype=np.float32)
        queries = None
        if self.encoder is not None and self.config.fusion != "bm25":
            queries = QueryCache.shared(self.encoder)([t for t, _ in pairs])
            combined = weights @ queries / weights.sum()
            hits = self.client.search(
                self.collection,
                data=[combined.tolist()],
                anns_field="dense",
                limit=depth,
                filter=expr,
                output_fields=["pos", "scope"],
            )[0]
            for hit in hits:
                found[_key(hit)] = (_field(hit, "scope") == "", int(_field(hit, "pos")))
        keys = sorted(found, key=found.__getitem__)
        n = len(keys)
        if self.config.fusion != "dense":
            self._complete(keys, texts, lexical, complete)
        bm25 = np.zeros(n, np.float32)
        bm25_last = np.zeros(n, np.float32)
        dense = np.zeros(n, np.float32)
        dense_last = np.zeros(n, np.float32)
        for rank, (turn, weight) in enumerate(zip(lexical, weights, strict=True)):
            row = np.array([turn.get(key, 0.0) for key in keys], np.float32)
            bm25 += weight * row
            if rank == 0:
                bm25_last = row
        if queries is not None and n:
            stored = self.client.get(self.collection, ids=keys, output_fields=["dense"])
            at = {key: i for i, key in enumerate(keys)}
            vectors = np.zeros((n, queries.shape[1]), np.float32)
            for entry in stored:
                vectors[at[str(entry["pk"])]] = entry["dense"]
            sims = vectors @ queries.T
            dense = sims @ weights / weights.sum()
            dense_last = sims[:, 0]
        if self.pool is not None:
            try:
                indices = np.array([self.pool.position(key) for key in keys], dtype=np.int64)
            except KeyError as err:
                raise RagdialError(
                    f"Milvus collection {self.collection!r} holds item {err.args[0]!r}, which is not in the system's "
                    "knowledge base: rebuild it (build: always)"
                ) from None
        else:
            indices = np.array([found[key][1] for key in keys], dtype=np.int64)
        scores = CandidateScores(
            indices,
            bm25,
            dense,
            fuse(self.config, bm25, dense, depth),
            bm25_last,
            dense_last,
            focus,
            self.tracker.last_mention(context) if len(self.tracker) else {},
            pairs[0][0],
        )
        return keys, scores

    def _complete(
        self, keys: list[str], texts: list[str], lexical: list[dict[str, float]], complete: list[bool]
    ) -> None:
        """Fill in the BM25 score of each shortlisted key for the query turns whose search was cut at ``depth``
        (a turn whose search returned fewer hits found every candidate it scores above zero)."""
        cut = [i for i, done in enumerate(complete) if not done and texts[i].strip()]
        missing = sorted({key for i in cut for key in keys if key not in lexical[i]})
        if not missing:
            return
        results = self.client.search(
            self.collection,
            data=[texts[i] for i in cut],
            anns_field="sparse",
            limit=len(missing),
            filter=f"pk in [{', '.join(_quote(key) for key in missing)}]",
            search_params={"metric_type": "BM25"},
        )
        for i, hits in zip(cut, results, strict=True):
            for hit in hits:
                lexical[i].setdefault(_key(hit), abs(float(hit["distance"])) / (BM25_K1 + 1.0))

    def to_config(self) -> JSONDict:
        reranker = {"reranker": self.reranker_path} if self.reranker_path else {}
        return {
            "name": "milvus",
            "uri": self.uri,
            "collection": self.collection,
            "lexical": self.lexical,
            **reranker,
            **self.config.to_dict(),
        }

    def close(self) -> None:
        self.client.close()


def _item(row: dict[str, Any]) -> Knowledge:  # Any: pymilvus (untyped row)
    return Knowledge(
        id=str(row["pk"]),
        text=row["text"],
        source=SourceKind(row["source"]),
        fields=json.loads(row["meta"] or "{}"),
        scope=row["scope"],
    )


def language_of(kb: KnowledgeBase) -> str:
    """``zh`` when most of a sample of the KB's texts are Chinese."""
    sample = [item.text for item, _ in zip(kb, range(200), strict=False) if item.text]
    return "zh" if sum(detect_language(t) == "zh" for t in sample) * 2 > len(sample) else "en"
