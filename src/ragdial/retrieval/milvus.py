"""The same retriever interface over Milvus: BM25 (Milvus' own analyzer: jieba for Chinese, standard + stemming
for English) and dense vectors, fused with RRF by ``hybrid_search``; dialog scope and entities as filters.

``uri`` is a local file for the embedded milvus-lite (``"kb.db"``) or a server/cluster address
(``"http://host:19530"``); nothing else changes. Needs the ``milvus`` extra (``pymilvus``, ``milvus-lite``).

With a learned reranker (and the system's knowledge base, which the collection holds), Milvus shortlists: the
reranker's ``depth`` best by BM25 and by dense similarity, each scored by both (per query turn, as the in-process
retriever does), fused, then reranked and cut by the same ``KnowledgePool.rank`` as ``HybridRetriever``. BM25 is
Milvus' own (its analyzer), so the lexical features differ from those the reranker was trained on in-process.
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
from ragdial.retrieval.pool import CandidateScores, KnowledgePool
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
    ) -> None:
        try:
            from pymilvus import MilvusClient
        except ImportError as err:  # pragma: no cover - depends on the install
            raise RagdialError("the Milvus backend needs the 'milvus' extra: pip install 'ragdial[milvus]'") from err
        if language not in ANALYZERS:
            raise RagdialError(f"language must be one of {', '.join(ANALYZERS)}, not {language!r}")
        try:
            self.client = MilvusClient(uri, token=token, timeout=timeout)
        except Exception as err:  # pymilvus raises MilvusException (or an OS error for a bad local path)
            reason = str(getattr(err, "message", "") or err).strip().splitlines()[0]
            raise RagdialError(f"cannot reach Milvus at {uri}: {reason}") from None
        try:
            too_old = old_server(str(self.client.get_server_version()))
        except Exception:  # a server that does not say: tried as it is
            too_old = None
        if too_old:
            self.client.close()
            raise RagdialError(f"Milvus at {uri} is {too_old}: {TOO_OLD}")
        self.collection = collection
        self.config = config or RetrieverConfig()
        self.language = language
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
        elif self.client.has_collection(collection):
            self._load_entities()

    def count(self) -> int:
        """Rows in the collection (-1 when there is no collection)."""
        if not self.client.has_collection(self.collection):
            return -1
        return int(self.client.get_collection_stats(self.collection).get("row_count", 0))

    def _load_entities(self) -> None:
        names: set[str] = set()
        iterator = self.client.query_iterator(
            self.collection, batch_size=1000, filter='entity != ""', output_fields=["entity"]
        )
        while batch := iterator.next():
            names.update(row["entity"] for row in batch)
        iterator.close()
        self.tracker = EntityTracker(Knowledge(n, "", SourceKind.FAQ, {"entity": n}) for n in sorted(names))

    def build(
        self,
        kb: KnowledgeBase,
        batch_size: int = 500,
        vectors: np.ndarray | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        """Drop and recreate the collection with every item of ``kb``. ``vectors`` (one row per item, e.g. a saved
        index's memory-mapped ``vectors.npy``) are used instead of encoding the texts; ``progress(n)`` is called
        after each inserted batch of ``n`` items. Rows are sent batch by batch, so memory stays bounded."""
        from pymilvus import DataType, Function, FunctionType

        client = self.client
        if client.has_collection(self.collection):
            client.drop_collection(self.collection)
        schema = client.create_schema(auto_id=False)
        schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=1024)
        schema.add_field(
            "text",
            DataType.VARCHAR,
            max_length=MAX_TEXT,
            enable_analyzer=True,
            analyzer_params=ANALYZERS[self.language],
        )
        for name in ("source", "scope", "entity"):
            schema.add_field(name, DataType.VARCHAR, max_length=1024)
        schema.add_field("meta", DataType.VARCHAR, max_length=MAX_TEXT)
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(
            Function(
                name="bm25", function_type=FunctionType.BM25, input_field_names=["text"], output_field_names=["sparse"]
            )
        )
        index = client.prepare_index_params()
        index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
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
                    "text": (item.text or "")[:MAX_TEXT],
                    "source": item.source.value,
                    "scope": item.scope,
                    "entity": entity if isinstance(entity, str) else "",
                    "meta": json.dumps(dict(item.fields), ensure_ascii=False, default=str)[:MAX_TEXT],
                }
                if vectors is not None:
                    row["dense"] = np.asarray(vectors[start + offset], dtype=np.float32).tolist()
                rows.append(row)
            client.insert(self.collection, rows)
            if progress is not None:
                progress(len(rows))
        if self.pool is None:
            self.tracker = EntityTracker(items)

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
        """Top ``k`` by BM25 (and dense with RRF) within ``scope`` and ``filter`` (as Milvus filter expressions);
        the first ``select`` (default ``config.select``) are selected. Empty for a missing collection or a context
        without text."""
        with self._lock:
            if self.pool is not None:
                scores = self._candidate_scores(context, Scope.of(scope), k, filter)
                return self.pool.rank(context, scores, k, filter, select) if scores is not None else Retrieval()
            ranked = self._search(context, Scope.of(scope), k, filter)
        if filter is not None and filter.min_score is not None:
            ranked = take(ranked, filter, k)
        return Retrieval(ranked, ranked[: self.config.select if select is None else select])

    def _search(
        self, context: Sequence[Turn], scope: Scope, k: int, filter: KnowledgeFilter | None
    ) -> list[ScoredKnowledge]:
        from pymilvus import AnnSearchRequest, RRFRanker

        query = self._query(context, scope, k, filter)
        if query is None:
            return []
        _, pairs, text, expr = query
        if self.encoder is None or self.config.fusion == "bm25":
            hits = self.client.search(
                self.collection, data=[text], anns_field="sparse", limit=k, filter=expr, output_fields=FIELDS
            )[0]
            return [
                self._scored(hit, -float(hit["distance"]) if hit["distance"] < 0 else float(hit["distance"]))
                for hit in hits
            ]
        weights = np.array([w for _, w in pairs], dtype=np.float32)
        query = (self.encoder.encode([t for t, _ in pairs], is_query=True) * weights[:, None]).sum(axis=0)
        query /= np.linalg.norm(query) or 1.0
        requests = [
            AnnSearchRequest(data=[query.tolist()], anns_field="dense", param={}, limit=k, expr=expr),
        ]
        if self.config.fusion != "dense":
            requests.append(AnnSearchRequest(data=[text], anns_field="sparse", param={}, limit=k, expr=expr))
        hits = self.client.hybrid_search(
            self.collection, requests, RRFRanker(self.config.rrf_k), limit=k, output_fields=FIELDS
        )[0]
        return [self._scored(hit, float(hit["distance"])) for hit in hits]

    def _query(
        self, context: Sequence[Turn], scope: Scope, k: int, filter: KnowledgeFilter | None
    ) -> tuple[list[str], list[tuple[str, float]], str, str] | None:
        """(entities in focus, weighted query texts, their joined text, the Milvus filter expression); ``None`` when
        there is nothing to search."""
        if k <= 0 or not (scope.include_global or scope.local is not None):
            return None
        if not self.client.has_collection(self.collection):
            return None
        focus = self.tracker.focus(context, self.config.carry_turns) if len(self.tracker) else []
        pairs = query_texts(context, self.config, focus, scoped=self.config.entity_scope and bool(focus))
        text = " ".join(t for t, _ in pairs).strip()
        if not text:
            return None
        return focus, pairs, text, self._filter(scope, filter, focus)

    def _candidate_scores(
        self, context: Sequence[Turn], scope: Scope, k: int, filter: KnowledgeFilter | None
    ) -> CandidateScores | None:
        """The shortlist (the reranker's ``depth`` best by BM25 and by dense similarity) with every candidate's
        BM25 and dense scores per query turn, weighted and fused as ``HybridRetriever.score`` does."""
        pool = self.pool
        assert pool is not None
        query = self._query(context, scope, k, filter)
        if query is None:
            return None
        focus, pairs, text, expr = query
        depth = max(k, int(getattr(pool.reranker, "depth", 100)))
        hits = self.client.search(
            self.collection, data=[text], anns_field="sparse", limit=depth, filter=expr, output_fields=["pk"]
        )[0]
        keys = [str(hit["pk"] if "pk" in hit else hit["entity"]["pk"]) for hit in hits]
        weights = np.array([w for _, w in pairs], dtype=np.float32)
        queries = None
        if self.encoder is not None and self.config.fusion != "bm25":
            queries = QueryCache.shared(self.encoder)([t for t, _ in pairs])
            combined = (weights @ queries / weights.sum()).tolist()
            hits = self.client.search(
                self.collection, data=[combined], anns_field="dense", limit=depth, filter=expr, output_fields=["pk"]
            )[0]
            keys += [str(hit["pk"] if "pk" in hit else hit["entity"]["pk"]) for hit in hits]
        keys = list(dict.fromkeys(keys))
        try:
            indices = np.array([pool.position(key) for key in keys], dtype=np.int64)
        except KeyError as err:
            raise RagdialError(
                f"Milvus collection {self.collection!r} holds item {err.args[0]!r}, which is not in the system's "
                "knowledge base: rebuild it (build: always)"
            ) from None
        n = len(keys)
        among = f"pk in [{', '.join(_quote(key) for key in keys)}]"
        bm25 = np.zeros(n, np.float32)
        bm25_last = np.zeros(n, np.float32)
        dense = np.zeros(n, np.float32)
        dense_last = np.zeros(n, np.float32)
        if n:
            row_of = {key: i for i, key in enumerate(keys)}
            for rank, (turn_text, weight) in enumerate(pairs):
                row = np.zeros(n, np.float32)
                found = self.client.search(
                    self.collection, data=[turn_text], anns_field="sparse", limit=n, filter=among, output_fields=["pk"]
                )[0]
                for hit in found:
                    key = str(hit["pk"] if "pk" in hit else hit["entity"]["pk"])
                    row[row_of[key]] = abs(float(hit["distance"]))
                bm25 += weight * row
                if rank == 0:
                    bm25_last = row
            if queries is not None:
                stored = self.client.get(self.collection, ids=keys, output_fields=["dense"])
                vectors = np.zeros((n, queries.shape[1]), np.float32)
                for entry in stored:
                    vectors[row_of[str(entry["pk"])]] = entry["dense"]
                sims = vectors @ queries.T
                dense = sims @ weights / weights.sum()
                dense_last = sims[:, 0]
        return CandidateScores(
            indices,
            bm25,
            dense,
            pool.fuse(bm25, dense, depth),
            bm25_last,
            dense_last,
            focus,
            self.tracker.last_mention(context) if len(self.tracker) else {},
            pairs[0][0],
        )

    def to_config(self) -> JSONDict:
        reranker = {"reranker": self.reranker_path} if self.reranker_path else {}
        return {"name": "milvus", "uri": self.uri, "collection": self.collection, **reranker, **self.config.to_dict()}

    @staticmethod
    def _scored(hit: dict[str, Any], score: float) -> ScoredKnowledge:  # Any: pymilvus (untyped hit)
        row = hit.get("entity") or hit
        item = Knowledge(
            id=row["pk"] if "pk" in row else hit["pk"],
            text=row["text"],
            source=SourceKind(row["source"]),
            fields=json.loads(row["meta"] or "{}"),
            scope=row["scope"],
        )
        return ScoredKnowledge(item, score)

    def close(self) -> None:
        self.client.close()


def language_of(kb: KnowledgeBase) -> str:
    """``zh`` when most of a sample of the KB's texts are Chinese."""
    sample = [item.text for item, _ in zip(kb, range(200), strict=False) if item.text]
    return "zh" if sum(detect_language(t) == "zh" for t in sample) * 2 > len(sample) else "en"
