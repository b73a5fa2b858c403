"""Retriever configuration as plain data (JSON-serialisable), so an index directory records how it was built."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import TypedDict, cast

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict, JSONObject
from ragdial.retrieval.analyzer import Analyzer

QUERY_MODES = ("last_user", "recent")
FUSIONS = ("bm25", "dense", "rrf", "weighted")


class _ScalarOptions(TypedDict, total=False):
    """``RetrieverConfig``'s fields but ``analyzer``."""

    query: str
    turns: int
    decay: float
    entity_carry: bool
    entity_scope: bool
    carry_turns: int
    fusion: str
    rrf_k: int
    lexical_weight: float
    encoder: str | None
    select: int
    shortlist: int
    prune_above: int
    ann_nprobe: int


class RetrieverOptions(_ScalarOptions, total=False):
    """``RetrieverConfig``'s fields as a config gives them (``analyzer`` as its mapping)."""

    analyzer: JSONObject


class HybridOptions(RetrieverOptions, total=False):
    """The options of the ``bm25`` and ``hybrid`` retriever factories: the config's and a ``reranker`` folder."""

    reranker: str


@dataclass
class RetrieverConfig:
    """How a context becomes a query, which items are candidates, and how lexical and dense scores combine.

    - ``query``: ``last_user`` (the last user turn only) or ``recent`` (the last ``turns`` turns, the latest
      weighted 1 and each earlier one ``decay`` times the next).
    - ``entity_carry``: add the names of the entities under discussion to the last user turn's query.
    - ``entity_scope``: narrow candidates to the items of the entities under discussion plus items with no
      entity (domain-wide), falling back to every candidate when no entity is named.
    - ``carry_turns``: how far back before the latest entity-naming turn entities stay in focus.
    - ``fusion``: ``bm25``, ``dense``, ``rrf`` (reciprocal rank, constant ``rrf_k``) or ``weighted``
      (``lexical_weight`` x min-max BM25 + (1 - ``lexical_weight``) x cosine).
    - ``select``: how many of the ranked items are selected without a reranker (with one, its cut selects).
    - ``shortlist``, ``prune_above``: a candidate pool of more than ``prune_above`` items is first cut to the
      union of its ``shortlist`` best by BM25 (exact top-k that skips postings) and by dense similarity (an
      approximate index when the retriever has one, ``ann_nprobe`` lists probed), and only that union is scored
      and fused; ``shortlist: 0`` always scores every candidate.
    """

    query: str = "recent"
    turns: int = 3
    decay: float = 0.3
    entity_carry: bool = True
    entity_scope: bool = True
    carry_turns: int = 0
    fusion: str = "rrf"
    rrf_k: int = 60
    lexical_weight: float = 0.5
    encoder: str | None = "use"
    select: int = 1
    shortlist: int = 200
    prune_above: int = 50_000
    ann_nprobe: int = 16
    analyzer: Analyzer = field(default_factory=Analyzer)

    def __post_init__(self) -> None:
        if self.query not in QUERY_MODES:
            raise RagdialError(f"query must be one of {', '.join(QUERY_MODES)}, not {self.query!r}")
        if self.fusion not in FUSIONS:
            raise RagdialError(f"fusion must be one of {', '.join(FUSIONS)}, not {self.fusion!r}")
        if self.select < 1:
            raise RagdialError(f"select must be at least 1, not {self.select!r}")
        if self.shortlist < 0 or self.prune_above < 0 or self.ann_nprobe < 1:
            raise RagdialError("shortlist and prune_above must be at least 0 and ann_nprobe at least 1")
        if self.fusion in ("dense", "rrf", "weighted") and not self.encoder:
            self.fusion = "bm25"
        if isinstance(self.analyzer, dict):
            self.analyzer = Analyzer.from_dict(self.analyzer)

    @property
    def uses_dense(self) -> bool:
        return bool(self.encoder) and self.fusion != "bm25"

    def to_dict(self) -> JSONDict:
        data = asdict(self)
        data["analyzer"] = self.analyzer.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> RetrieverConfig:
        """The config of ``data`` (``RetrieverOptions``); an unknown option is an error naming it."""
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise RagdialError(f"unknown retriever option(s): {', '.join(sorted(unknown))}")
        options = dict(data)
        analyzer = options.pop("analyzer", None)
        config = cls(**cast(_ScalarOptions, options))
        if isinstance(analyzer, Mapping):
            config.analyzer = Analyzer.from_dict(analyzer)
        elif isinstance(analyzer, Analyzer):
            config.analyzer = analyzer
        elif "analyzer" in data:
            raise RagdialError(f"analyzer must be a mapping of Analyzer fields, not {analyzer!r}")
        return config
