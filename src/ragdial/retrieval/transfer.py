"""A reranker meant for knowledge bases and domains never trained on.

Every feature is normalised within the query's own candidates or the knowledge base itself, and none reads a
word: fused/BM25/dense ranks and gaps to the best candidate, question–question similarity (the turn against the
item's FAQ question or snippet title), answer–question similarity (against the answer/body), idf-weighted word
coverage of both, agreement with the fused top 3, the document type as formats share it (:data:`DOC_TYPES`: a
DSTC11 FAQ and a DSTC9 snippet are both question-and-answer), scope match (an item's scope is its entity, or its
domain for a domain-wide item such as DSTC9 ``train:*:3``: in focus, named in the last turn, how long ago), and
how well the dialog so far matches the item's scope and domain as a whole (the cosine of the recent turns to the
centroid of that scope's / domain's items, minus the best such cosine). Training on DSTC11, where every item has
an entity, thus teaches what carries to a KB of domain-wide items: a train question goes to the train snippets
because the dialog is about trains. For knowledge-graph triples, the asked attribute and what was said: the
longest run of the attribute's name found in the last user turn and the USE cosine of the two (each with its gap to
the best candidate), whether the same entity's attribute or the value itself came up earlier in the dialog or in the
last turn, how far into the dialog the turn is, and whether the value has the form the question asks for (a date
for "哪年…？"/"when", a number for "几首…？"/"how many") and its length. Among one entity's many review sentences the
asked aspect is the turn's word that few of *this query's candidates* use: coverage of the turn weighted by that
candidate-local idf (with its gap to the best), and whether the item has the locally rarest word of the turn.

With an entity-scoped retriever every training candidate is in scope, so :func:`train` also adds the same turns'
candidates without that narrowing (``widen``): the model then sees items outside the dialog's scope and learns
the scope features.

The model is LightGBM (binary). Two things are fitted out of fold on the training dialogs:

- the selection cut (absolute and relative to the best probability), as for ``rerank.Reranker``;
- a **fallback**: where the reranker's best probability is below ``fallback``, the fused ranking is kept (the
  fusion is then trusted more than a reranker that is unsure), chosen to maximise held-out MRR@5.

It has the interface of ``Reranker`` (``predict``, ``cut``, ``save``/``load``), so ``HybridRetriever`` uses it
unchanged.
"""

from __future__ import annotations

import math
import re
import weakref
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict
from ragdial.retrieval import saved_meta
from ragdial.retrieval.base import ScoredKnowledge
from ragdial.retrieval.fusion import ranks, rrf
from ragdial.retrieval.rerank import best_threshold, cut_by_score, dialog_folds, subset_scores
from ragdial.schema import Example, SourceKind, Speaker, Turn

if TYPE_CHECKING:
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.retrieval.pool import CandidateScores, KnowledgePool

DOC_TYPES = ("qa", "statement", "triple", "profile")
"""Document types that carry across formats: a question with its answer (FAQ, DSTC9 snippet), a statement
(review sentence, product text), a knowledge-graph triple, a user profile."""
_DOC_TYPE = {
    SourceKind.FAQ: "qa",
    SourceKind.SNIPPET: "qa",
    SourceKind.REVIEW: "statement",
    SourceKind.PRODUCT: "statement",
    SourceKind.KG_TRIPLE: "triple",
    SourceKind.USER_PROFILE: "profile",
}
FEATURES = [
    "fused_log_rank",
    "bm25_rel",
    "bm25_log_rank",
    "bm25_last_rel",
    "dense",
    "dense_gap",
    "dense_log_rank",
    "dense_last_gap",
    "question_cos",
    "question_gap",
    "answer_cos",
    "answer_gap",
    "question_coverage",
    "answer_coverage",
    "top_agreement",
    *[f"doc_{t}" for t in DOC_TYPES],
    "has_entity",
    "scope_in_focus",
    "scope_in_last_turn",
    "scope_recency",
    "entity_used_before",
    "scope_dialog_gap",
    "domain_dialog_gap",
    "used_before",
    "log_candidates",
    "attribute_match",
    "attribute_match_gap",
    "attribute_cos",
    "attribute_cos_gap",
    "attribute_used_before",
    "value_in_context",
    "value_in_last_turn",
    "log_turn",
    "answer_type_match",
    "answer_type_clash",
    "value_log_length",
    "local_coverage",
    "local_coverage_gap",
    "local_rarest_word",
]
PROTOTYPE_FEATURES = ["proto_cos", "proto_gap", "proto_log_rank"]
"""With ``prototype``: each candidate's cosine to the turn's **aspect prototype** (the mean of the knowledge base's
``PROTOTYPE_SIZE`` items nearest the last user turn among the items of *other* scopes than the candidates'), its gap
to the best and its rank. A question ("is it quiet at night?") and the sentences that answer it ("our room was very
quiet") differ in form; the other entities' nearest items are mostly statements on the asked aspect, so their mean
is the aspect as the knowledge base words it. Unlabelled: read off the deployment KB itself."""
PROTOTYPE_SIZE = 20
AUX_FEATURES = ["aux_cos", "aux_gap", "aux_log_rank", "aux_top_agreement"]
"""With a second encoder (``aux_encoder``, e.g. ``minilm``): the last user turn's cosine to each candidate under it,
the gap to the best, its rank, and the candidate's cosine to the mean of that encoder's top 3."""
MODEL_FILE = "transfer.txt"
META_FILE = "transfer.json"
FORMAT = "ragdial-transfer-reranker"


def feature_names(aux_encoder: str | None = None, prototype: bool = False) -> list[str]:
    """The feature columns of a model with (or without) a second encoder and the aspect prototype."""
    return FEATURES + (PROTOTYPE_FEATURES if prototype else []) + (AUX_FEATURES if aux_encoder else [])


def _question(item) -> str:
    title = item.fields.get("title")
    return title if isinstance(title, str) and title.strip() else item.text


def _answer(item) -> str:
    body = item.fields.get("body")
    return body if isinstance(body, str) and body.strip() else item.text


class _KbView:
    """What the features need of a retriever's knowledge base, computed once per retriever."""

    def __init__(self, retriever: KnowledgePool) -> None:
        from ragdial.text.encoders import encode_cached

        items = retriever.items
        analyzer = retriever.config.analyzer
        self.question_tokens = [set(analyzer(_question(i))) for i in items]
        self.answer_tokens = [set(analyzer(_answer(i))) for i in items]
        df: Counter[str] = Counter()
        for q, a in zip(self.question_tokens, self.answer_tokens, strict=True):
            df.update(q | a)
        self.idf = {t: math.log(1 + len(items) / n) for t, n in df.items()}
        self.max_idf = math.log(1 + max(len(items), 1))
        self.encoder = retriever.encoder
        dim = self.encoder.dim if self.encoder is not None else 0
        self.question_vectors = np.zeros((len(items), dim), np.float32)
        self.answer_vectors = self.question_vectors
        self.entity_of: list[str] = []
        self.domain_of: list[str] = []
        for item in items:
            entity = item.fields.get("entity")
            domain = str(item.fields.get("domain") or "")
            self.domain_of.append(domain)
            # the item's scope: its entity, or its domain as a whole for a domain-wide item (DSTC9 ``train:*:3``)
            self.entity_of.append(f"{domain}/{entity}" if isinstance(entity, str) and entity else f"{domain}/*")
        scope_ids = {key: n for n, key in enumerate(dict.fromkeys(self.entity_of))}
        self.scope_id = np.array([scope_ids[key] for key in self.entity_of], dtype=np.int64)
        self.entity_centroids: dict[str, np.ndarray] = {}
        self.domain_centroids: dict[str, np.ndarray] = {}
        if self.encoder is not None and items:
            self.question_vectors = np.asarray(encode_cached(self.encoder, [_question(i) for i in items]))
            self.answer_vectors = np.asarray(encode_cached(self.encoder, [_answer(i) for i in items]))
            vectors = retriever.vectors if retriever.vectors is not None else self.answer_vectors
            self.entity_centroids = _centroids(self.entity_of, vectors)
            self.domain_centroids = _centroids(self.domain_of, vectors)
        self.domain_names = {d: _domain_aliases(d) for d in set(self.domain_of) if d}
        # triples: the attribute's name (what a question asks for) and the value (what an answer says)
        self.attribute_of = [_triple_field(i, "attribute") for i in items]
        self.value_of = [_triple_field(i, "value") for i in items]
        names = sorted({a for a in self.attribute_of if a})
        self.attribute_vectors: dict[str, np.ndarray] = {}
        if self.encoder is not None and names:
            vectors = np.asarray(encode_cached(self.encoder, names))
            self.attribute_vectors = dict(zip(names, vectors, strict=True))

    def coverage(self, query: set[str], tokens: set[str]) -> float:
        if not query:
            return 0.0
        total = sum(self.idf.get(t, self.max_idf) for t in query)
        return sum(self.idf.get(t, self.max_idf) for t in query & tokens) / total


def _triple_field(item, name: str) -> str:
    value = item.fields.get(name) if item.source == SourceKind.KG_TRIPLE else None
    return value.strip() if isinstance(value, str) else ""


def _substring_share(name: str, text: str) -> float:
    """The longest run of ``name``'s characters found in ``text``, as a share of ``name`` (case-insensitive):
    "代表作品" in "他有什么代表作吗" is 0.75, "opening hours" in "what are your opening times" 8/13."""
    name, text = name.lower(), text.lower()
    best = 0
    for start in range(len(name)):
        size = best + 1
        while start + size <= len(name) and name[start : start + size] in text:
            best = size
            size += 1
    return best / len(name) if name else 0.0


_ASKS_WHEN = re.compile(r"哪年|哪一年|什么时候|何时|哪天|几月|几号|\bwhen\b|what (?:year|time|date)", re.IGNORECASE)
_ASKS_COUNT = re.compile(r"多少|几[首部个张岁次届位年种]|多长|多大|多久|\bhow (?:many|much|long|old)\b", re.IGNORECASE)
_DATE = re.compile(r"\d{4}\s*年|\d{1,2}\s*月|\d{4}[-/.]\d{1,2}|\b1[5-9]\d{2}\b|\b20\d{2}\b")
_DIGIT = re.compile(r"\d")


def _answer_type(question: str, value: str) -> tuple[float, float]:
    """(the value has the form the question asks for, the question asks for a date or number the value lacks):
    "哪年发行的？" wants a date, "几首？" / "how many" a number."""
    when, count = bool(_ASKS_WHEN.search(question)), bool(_ASKS_COUNT.search(question))
    if not when and not count:
        return 0.0, 0.0
    is_date, has_digit = bool(_DATE.search(value)), bool(_DIGIT.search(value))
    match = (when and is_date) or (count and has_digit and not is_date)
    return float(match), float(not has_digit)


VALUE_SAID_MAX = 40  # characters: longer values (descriptions) are never repeated whole


def _centroids(keys: Sequence[str], vectors: np.ndarray) -> dict[str, np.ndarray]:
    groups: dict[str, list[int]] = {}
    for index, key in enumerate(keys):
        if key:
            groups.setdefault(key, []).append(index)
    out = {}
    for key, rows in groups.items():
        mean = np.asarray(vectors[rows], dtype=np.float32).mean(axis=0)
        norm = float(np.linalg.norm(mean))
        out[key] = mean / norm if norm else mean
    return out


def _domain_aliases(domain: str) -> set[str]:
    """The words naming a domain in a turn: its key, plural and a trailing-'s'-less form."""
    base = domain.lower().strip()
    return {base, f"{base}s", base.rstrip("s")} - {""}


_VIEWS: weakref.WeakKeyDictionary[KnowledgePool, _KbView] = weakref.WeakKeyDictionary()


def kb_view(retriever: KnowledgePool) -> _KbView:
    view = _VIEWS.get(retriever)
    if view is None:
        view = _VIEWS[retriever] = _KbView(retriever)
    return view


def _dialog_vector(retriever: KnowledgePool, context: Sequence[Turn], turns: int = 6) -> np.ndarray | None:
    """A decayed mean of the recent turns' vectors (the newest weighted most)."""
    if retriever.encoder is None:
        return None
    from ragdial.text.encoders import QueryCache

    texts = [t.text for t in context[-turns:] if t.text.strip()]
    if not texts:
        return None
    vectors = QueryCache.shared(retriever.encoder)(texts)
    weights = 0.7 ** np.arange(len(texts))[::-1]
    mean = (vectors * weights[:, None]).sum(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm else None


def _domain_age(context: Sequence[Turn], names: set[str]) -> float:
    """How recently a domain was named: 1 in the last turn, decaying by half per turn, 0 never."""
    for back, turn in enumerate(reversed(context)):
        padded = " " + " ".join(turn.text.lower().replace("?", " ").replace(".", " ").replace(",", " ").split()) + " "
        if any(f" {name} " in padded for name in names):
            return 0.5**back
    return 0.0


def _age(recency: float) -> float:
    """Turns since a mention from its recency 0.5**age (infinite when never mentioned)."""
    return math.log2(1 / recency) if recency > 0 else math.inf


_AUX: weakref.WeakKeyDictionary[KnowledgePool, dict[str, np.ndarray]] = weakref.WeakKeyDictionary()


def aux_vectors(retriever: KnowledgePool, name: str) -> np.ndarray:
    """The items' vectors under the encoder ``name`` (computed once per retriever, cached on disk by content)."""
    from ragdial.text.encoders import encode_cached, get_encoder

    table = _AUX.setdefault(retriever, {})
    if name not in table:
        table[name] = np.asarray(encode_cached(get_encoder(name), [i.text or "" for i in retriever.items]))
    return table[name]


def _aux_cosine(
    retriever: KnowledgePool, context: Sequence[Turn], indices: np.ndarray, name: str
) -> tuple[np.ndarray, np.ndarray] | None:
    """(the items' vectors, their cosine to the last user turn) under the encoder ``name``; None without a turn."""
    from ragdial.text.encoders import QueryCache, get_encoder

    last_user = next((t.text for t in reversed(context) if t.speaker == Speaker.USER), "")
    if len(indices) == 0 or not last_user.strip():
        return None
    vectors = aux_vectors(retriever, name)[indices.astype(np.int64)]
    return vectors, vectors @ QueryCache.shared(get_encoder(name))([last_user])[0]


def reranker_input(
    retriever: KnowledgePool,
    context: Sequence[Turn],
    scores: CandidateScores,
    depth: int,
    aux: str | None = None,
    prototype: bool = False,
) -> np.ndarray:
    """The candidates the model scores: the ``depth`` best by the fused score or, with a second encoder and/or the
    aspect prototype, by the reciprocal-rank fusion of the fused score, that encoder's cosine to the last user turn
    and the candidates' cosine to the prototype (aspect matching brings up items the first stage ranks low: gold
    items in the 50 best, DSTC11 LODO dev, 0.837 -> 0.866 on restaurants and 0.885 -> 0.928 on hotels with the
    prototype)."""
    columns = [scores.fused]
    found = _aux_cosine(retriever, context, scores.indices, aux) if aux else None
    if found is not None:
        columns.append(found[1])
    if prototype:
        proto = prototype_features(retriever, context, scores)[:, 0]
        if proto.any():
            columns.append(proto)
    order_by = rrf(columns) if len(columns) > 1 else scores.fused
    return np.argsort(-order_by, kind="stable")[:depth]


def prototype_features(
    retriever: KnowledgePool, context: Sequence[Turn], scores: CandidateScores, size: int = PROTOTYPE_SIZE
) -> np.ndarray:
    """The ``PROTOTYPE_FEATURES`` columns (zero without an encoder or a user turn)."""
    out = np.zeros((len(scores.indices), len(PROTOTYPE_FEATURES)), dtype=np.float32)
    last_user = next((t.text for t in reversed(context) if t.speaker == Speaker.USER), "")
    vectors = retriever.vectors
    if retriever.encoder is None or vectors is None or not len(scores.indices) or not last_user.strip():
        return out
    from ragdial.text.encoders import QueryCache

    view = kb_view(retriever)
    idx = scores.indices.astype(np.int64)
    others = np.flatnonzero(~np.isin(view.scope_id, view.scope_id[idx]))
    if not len(others):
        return out
    query = QueryCache.shared(retriever.encoder)([last_user])[0]
    cos = np.asarray(vectors[others], dtype=np.float32) @ query
    nearest = others[np.argsort(-cos, kind="stable")[:size]]
    prototype = np.asarray(vectors[nearest], dtype=np.float32).mean(axis=0)
    norm = float(np.linalg.norm(prototype))
    if not norm:
        return out
    proto = np.asarray(vectors[idx], dtype=np.float32) @ (prototype / norm)
    out[:, 0] = proto
    out[:, 1] = float(proto.max()) - proto
    out[:, 2] = np.log(ranks(proto))
    return out


def aux_features(retriever: KnowledgePool, context: Sequence[Turn], scores: CandidateScores, name: str) -> np.ndarray:
    """The ``AUX_FEATURES`` columns: the last user turn against the candidates under the second encoder."""
    out = np.zeros((len(scores.indices), len(AUX_FEATURES)), dtype=np.float32)
    found = _aux_cosine(retriever, context, scores.indices, name)
    if found is None:
        return out
    vectors, cos = found
    out[:, 0] = cos
    out[:, 1] = float(cos.max()) - cos
    out[:, 2] = np.log(ranks(cos))
    head = vectors[np.argsort(-cos, kind="stable")[:3]].mean(axis=0)
    norm = float(np.linalg.norm(head))
    if norm:
        out[:, 3] = vectors @ (head / norm)
    return out


def features(
    retriever: KnowledgePool,
    context: Sequence[Turn],
    scores: CandidateScores,
    aux_encoder: str | None = None,
    prototype: bool = False,
) -> np.ndarray:
    """One row per candidate, columns in ``feature_names(aux_encoder, prototype)`` order."""
    n = len(scores.indices)
    out = np.zeros((n, len(FEATURES)), dtype=np.float32)
    if n == 0:
        return np.zeros((0, len(feature_names(aux_encoder, prototype))), dtype=np.float32)
    view = kb_view(retriever)
    cols = {name: i for i, name in enumerate(FEATURES)}
    idx = scores.indices.astype(np.int64)
    last_user = next((t.text for t in reversed(context) if t.speaker == Speaker.USER), "")
    query_tokens = set(retriever.config.analyzer(last_user))
    bm25_max = float(scores.bm25.max()) or 1.0
    bm25_last_max = float(scores.bm25_last.max()) or 1.0
    out[:, cols["fused_log_rank"]] = np.log(ranks(scores.fused))
    out[:, cols["bm25_rel"]] = scores.bm25 / bm25_max
    out[:, cols["bm25_log_rank"]] = np.log(ranks(scores.bm25))
    out[:, cols["bm25_last_rel"]] = scores.bm25_last / bm25_last_max
    out[:, cols["dense"]] = scores.dense
    out[:, cols["dense_gap"]] = float(scores.dense.max()) - scores.dense
    out[:, cols["dense_log_rank"]] = np.log(ranks(scores.dense))
    out[:, cols["dense_last_gap"]] = float(scores.dense_last.max()) - scores.dense_last
    query = None
    if view.encoder is not None and last_user.strip():
        from ragdial.text.encoders import QueryCache

        query = QueryCache.shared(view.encoder)([last_user])[0]
        q_cos = view.question_vectors[idx] @ query
        a_cos = view.answer_vectors[idx] @ query
        out[:, cols["question_cos"]] = q_cos
        out[:, cols["question_gap"]] = float(q_cos.max()) - q_cos
        out[:, cols["answer_cos"]] = a_cos
        out[:, cols["answer_gap"]] = float(a_cos.max()) - a_cos
    if retriever.vectors is not None and n > 1:
        # pseudo-relevance feedback: how close each candidate is to the fused top 3 (review sentences on the asked
        # aspect resemble each other, whatever the domain)
        vectors = np.asarray(retriever.vectors[idx], dtype=np.float32)
        head = vectors[np.argsort(-scores.fused, kind="stable")[:3]].mean(axis=0)
        norm = float(np.linalg.norm(head))
        if norm:
            out[:, cols["top_agreement"]] = vectors @ (head / norm)
    dialog = _dialog_vector(retriever, context)
    entity_cos: dict[str, float] = {}
    domain_cos: dict[str, float] = {}
    if dialog is not None:
        entity_cos = {view.entity_of[i]: 0.0 for i in idx}
        for key in entity_cos:
            entity_cos[key] = float(view.entity_centroids[key] @ dialog)
        domain_cos = {d: float(c @ dialog) for d, c in view.domain_centroids.items()}
    best_entity = max(entity_cos.values(), default=0.0)
    best_domain = max(domain_cos.values(), default=0.0)
    domain_named = {d: _domain_age(context, names) for d, names in view.domain_names.items()}
    last_entities = set(retriever.tracker.find(context[-1].text)) if context else set()
    used = {i for t in context for i in t.knowledge_ids}
    used_entities = {retriever.kb.get(i).fields.get("entity") for i in used if i in retriever.kb}
    focus = set(scores.focus)
    used_attributes = {
        (retriever.kb.get(i).fields.get("entity"), retriever.kb.get(i).fields.get("attribute"))
        for i in used
        if i in retriever.kb
    }
    history = [t.text for t in context]
    last_text = context[-1].text if context else ""
    out[:, cols["log_candidates"]] = math.log(n)
    for row, index in enumerate(idx):
        item = retriever.items[int(index)]
        doc_type = "qa" if isinstance(item.fields.get("title"), str) else _DOC_TYPE[item.source]
        out[row, cols[f"doc_{doc_type}"]] = 1.0
        out[row, cols["question_coverage"]] = view.coverage(query_tokens, view.question_tokens[index])
        out[row, cols["answer_coverage"]] = view.coverage(query_tokens, view.answer_tokens[index])
        entity = item.fields.get("entity")
        domain = view.domain_of[index]
        if isinstance(entity, str) and entity:
            age = scores.mention_age.get(entity)
            out[row, cols["has_entity"]] = 1.0
            out[row, cols["scope_in_focus"]] = entity in focus
            out[row, cols["scope_in_last_turn"]] = entity in last_entities
            out[row, cols["scope_recency"]] = 0.5**age if age is not None else 0.0
            out[row, cols["entity_used_before"]] = entity in used_entities
        else:  # a domain-wide item is in scope when its domain is named and no entity has been named since
            recency = domain_named.get(domain, 0.0)
            newer_entity = bool(scores.mention_age) and min(scores.mention_age.values()) < _age(recency)
            out[row, cols["scope_in_focus"]] = recency > 0 and not newer_entity
            out[row, cols["scope_in_last_turn"]] = recency == 1.0
            out[row, cols["scope_recency"]] = recency
        key = view.entity_of[index]
        if key in entity_cos:
            out[row, cols["scope_dialog_gap"]] = best_entity - entity_cos[key]
        if domain in domain_cos:
            out[row, cols["domain_dialog_gap"]] = best_domain - domain_cos[domain]
        out[row, cols["used_before"]] = item.id in used
        attribute, value = view.attribute_of[index], view.value_of[index]
        if attribute:
            out[row, cols["attribute_match"]] = _substring_share(attribute, last_user)
            vector = view.attribute_vectors.get(attribute)
            if vector is not None and query is not None:
                out[row, cols["attribute_cos"]] = float(vector @ query)
            out[row, cols["attribute_used_before"]] = (entity, attribute) in used_attributes
        if value:
            match, clash = _answer_type(last_user, value)
            out[row, cols["answer_type_match"]] = match
            out[row, cols["answer_type_clash"]] = clash
            out[row, cols["value_log_length"]] = math.log1p(len(value))
        if value and len(value) <= VALUE_SAID_MAX:
            out[row, cols["value_in_context"]] = any(value in text for text in history)
            out[row, cols["value_in_last_turn"]] = value in last_text
    for name in ("attribute_match", "attribute_cos"):
        column = out[:, cols[name]]
        out[:, cols[f"{name}_gap"]] = float(column.max()) - column
    out[:, cols["log_turn"]] = math.log1p(len(context))
    _local_coverage(out, cols, query_tokens, [view.question_tokens[i] | view.answer_tokens[i] for i in idx])
    if prototype:
        out = np.concatenate([out, prototype_features(retriever, context, scores)], axis=1)
    if aux_encoder:
        out = np.concatenate([out, aux_features(retriever, context, scores, aux_encoder)], axis=1)
    return out


def _local_coverage(out: np.ndarray, cols: dict[str, int], query: set[str], tokens: list[set[str]]) -> None:
    """The ``local_*`` columns: the turn's words weighted by their idf among these candidates only (the aspect
    word "quiet" is rare among a hotel's review sentences, "room" is not)."""
    found = {t: sum(t in item for item in tokens) for t in query}
    idf = {t: math.log(1 + len(tokens) / n) for t, n in found.items() if n}
    total, rarest = sum(idf.values()), max(idf.values(), default=0.0)
    if not total:
        return
    for row, item in enumerate(tokens):
        shared = [idf[t] for t in query & item if t in idf]
        out[row, cols["local_coverage"]] = sum(shared) / total
        out[row, cols["local_rarest_word"]] = max(shared, default=0.0) / rarest
    column = out[:, cols["local_coverage"]]
    out[:, cols["local_coverage_gap"]] = float(column.max()) - column


@dataclass
class TransferReranker:
    """LightGBM over transferable features, a selection cut and a fallback to the fused ranking."""

    booster: Any  # Any: lightgbm (untyped Booster)
    threshold: float = 0.5
    max_select: int = 10
    depth: int = 50
    relative: float = 0.0
    fallback: float = 0.0
    info: JSONDict = field(default_factory=dict)
    aux_encoder: str | None = None
    prototype: bool = False

    def probabilities(self, retriever: KnowledgePool, context: Sequence[Turn], scores: CandidateScores):
        """(indices of the ``depth`` best fused candidates, the model's probability for each)."""
        top = reranker_input(retriever, context, scores, self.depth, self.aux_encoder, self.prototype)
        sub = subset_scores(scores, top)
        return top, self.booster.predict(features(retriever, context, sub, self.aux_encoder, self.prototype))

    def predict(self, retriever: KnowledgePool, context: Sequence[Turn], scores: CandidateScores) -> np.ndarray:
        """A score per candidate: the model's probability for the ``depth`` best fused ones (or, below the
        fallback confidence, the fused order scaled under the best probability), below 0 for the rest."""
        n = len(scores.indices)
        final = -1.0 - ranks(scores.fused).astype(np.float32) / max(n, 1)
        if n == 0:
            return final
        top, probs = self.probabilities(retriever, context, scores)
        best = float(probs.max())
        if best < self.fallback:  # unsure: keep the fusion's order, scores still on the probability scale
            final[top] = best * (1.0 - np.arange(len(top)) / (len(top) + 1.0))
        else:
            final[top] = probs
        return final

    def cut(self, ranked: Sequence[ScoredKnowledge], k: int | None = None) -> list[ScoredKnowledge]:
        """The items scoring at least ``threshold`` and ``relative`` x the best (at least one, at most
        ``max_select`` or ``k``)."""
        return cut_by_score(ranked, self.threshold, self.relative, min(self.max_select, k or self.max_select))

    def save(self, directory: str | Path) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.booster.save_model(str(directory / MODEL_FILE))
        meta = {
            "format": FORMAT,
            "features": feature_names(self.aux_encoder, self.prototype),
            "aux_encoder": self.aux_encoder,
            "prototype": self.prototype,
            "fallback": self.fallback,
            **saved_meta.cut_fields(self),
        }
        saved_meta.write_meta(directory / META_FILE, meta)
        return directory

    @classmethod
    def load(cls, directory: str | Path) -> TransferReranker:
        import lightgbm

        directory = Path(directory)
        meta_path = directory / META_FILE
        if not meta_path.exists():
            raise RagdialError(f"{directory}: not a transfer reranker directory (needs {MODEL_FILE}, {META_FILE})")
        meta = saved_meta.read_meta(meta_path, "transfer reranker file", FORMAT)
        if not (directory / MODEL_FILE).exists():
            raise RagdialError(f"{directory}: not a transfer reranker directory (needs {MODEL_FILE}, {META_FILE})")
        aux = meta.get("aux_encoder")
        if aux is not None and not isinstance(aux, str):
            raise RagdialError(f"{meta_path}: field 'aux_encoder' must be an encoder name or null, got {aux!r}")
        prototype = meta.get("prototype", False)  # absent in models saved before the aspect prototype
        if not isinstance(prototype, bool):
            raise RagdialError(f"{meta_path}: field 'prototype' must be true or false, got {prototype!r}")
        saved_meta.check_features(meta, meta_path, feature_names(aux, prototype))
        booster = lightgbm.Booster(model_file=str(directory / MODEL_FILE))
        return cls(
            booster,
            **saved_meta.read_cut(meta, meta_path)._asdict(),
            fallback=saved_meta.number(meta, "fallback", meta_path),
            info=saved_meta.info(meta, meta_path),
            aux_encoder=aux,
            prototype=prototype,
        )


@dataclass
class _Rows:
    x: np.ndarray
    y: np.ndarray
    groups: np.ndarray
    cand_ids: list[list[str]]
    golds: list[list[str]]
    dialogs: list[str]


def _rows(
    retriever: HybridRetriever,
    examples: Sequence[Example],
    depth: int,
    aux: str | None = None,
    prototype: bool = False,
) -> _Rows:
    xs, ys, groups, cand_ids, golds, dialogs = [], [], [], [], [], []
    for example in examples:
        if not example.needs_knowledge or not example.knowledge_ids:
            continue
        scores = retriever.score(example.context, example.dialog_id)
        if len(scores.indices) == 0:
            continue
        top = reranker_input(retriever, example.context, scores, depth, aux, prototype)
        sub = subset_scores(scores, top)
        ids = [retriever.items[int(i)].id for i in sub.indices]
        xs.append(features(retriever, example.context, sub, aux, prototype))
        ys.append(np.array([i in set(example.knowledge_ids) for i in ids], dtype=np.float32))
        groups.append(len(ids))
        cand_ids.append(ids)
        golds.append(list(example.knowledge_ids))
        first = example.context[0].text if example.context else example.dialog_id
        dialogs.append(first)
    if not xs:
        raise RagdialError("no knowledge-seeking examples with gold knowledge to train the reranker on")
    return _Rows(np.concatenate(xs), np.concatenate(ys), np.array(groups), cand_ids, golds, dialogs)


def _fit(x: np.ndarray, y: np.ndarray, seed: int, rounds: int, names: list[str]):
    import lightgbm

    params = {
        "objective": "binary",
        "learning_rate": 0.05,
        "num_leaves": 15,
        "min_data_in_leaf": 40,
        "feature_fraction": 0.8,
        "bagging_fraction": 0.8,
        "bagging_freq": 1,
        "lambda_l2": 1.0,
        "seed": seed,
        "num_threads": 1,
        "verbosity": -1,
    }
    return lightgbm.train(params, lightgbm.Dataset(x, y, feature_name=names), num_boost_round=rounds)


FALLBACKS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)


def _mrr5(order: np.ndarray, hits: np.ndarray) -> float:
    for rank, position in enumerate(order[:5], start=1):
        if hits[position]:
            return 1.0 / rank
    return 0.0


def best_fallback(probs: list[np.ndarray], labels: list[np.ndarray]) -> float:
    """The confidence under which the fused order (the candidates' given order) beats the reranker's, by held-out
    MRR@5 (ties: the lower fallback)."""
    best, best_score = 0.0, -1.0
    for fallback in FALLBACKS:
        total = 0.0
        for p, y in zip(probs, labels, strict=True):
            order = np.arange(len(p)) if p.max() < fallback else np.argsort(-p, kind="stable")
            total += _mrr5(order, y)
        if total > best_score + 1e-9:
            best, best_score = fallback, total
    return best


def train(
    retriever: HybridRetriever,
    examples: Sequence[Example],
    depth: int = 50,
    max_select: int = 10,
    rounds: int = 200,
    seed: int = 0,
    folds: int = 5,
    relative_cut: bool = True,
    widen: bool = True,
    aux_encoder: str | None = None,
    prototype: bool = False,
) -> TransferReranker:
    """Fit on ``examples`` (knowledge-seeking with gold). The cut and the fallback are chosen on predictions made
    out of fold (dialogs grouped by their first turn) on the retriever's own candidates; the final model is fit on
    those plus, with ``widen``, the candidates of an unscoped twin of the retriever. ``aux_encoder`` (e.g.
    ``minilm``) adds the ``AUX_FEATURES`` of a second encoder, ``prototype`` the ``PROTOTYPE_FEATURES``."""
    columns = feature_names(aux_encoder, prototype)
    data = _rows(retriever, examples, depth, aux_encoder, prototype)
    query_fold = dialog_folds(data.dialogs, folds, seed)
    row_query = np.repeat(np.arange(len(data.groups)), data.groups)
    bounds = np.concatenate([[0], np.cumsum(data.groups)])
    oof = np.zeros(len(data.y))
    if len(set(data.dialogs)) >= folds:
        for fold in range(folds):
            held = query_fold[row_query] == fold
            oof[held] = _fit(data.x[~held], data.y[~held], seed, rounds, columns).predict(data.x[held])
    else:
        oof[:] = _fit(data.x, data.y, seed, rounds, columns).predict(data.x)
    probs = [oof[bounds[q] : bounds[q + 1]] for q in range(len(data.groups))]
    labels = [data.y[bounds[q] : bounds[q + 1]] for q in range(len(data.groups))]
    fallback = best_fallback(probs, labels)
    cuts = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7) if relative_cut else (0.0,)
    threshold, relative = best_threshold(probs, data.cand_ids, data.golds, max_select, cuts)
    x, y = data.x, data.y
    if widen and retriever.config.entity_scope:
        from ragdial.retrieval.hybrid import HybridRetriever

        config = replace(retriever.config, entity_scope=False)
        twin = HybridRetriever(retriever.kb, config, lexical=retriever.lexical, vectors=retriever.vectors)
        wide = _rows(twin, examples, depth, aux_encoder, prototype)
        x, y = np.concatenate([x, wide.x]), np.concatenate([y, wide.y])
    booster = _fit(x, y, seed, rounds, columns)
    info: JSONDict = {
        "queries": len(data.groups),
        "rows": len(y),
        "positives": int(y.sum()),
        "rounds": rounds,
        "widen": widen,
    }
    return TransferReranker(booster, threshold, max_select, depth, relative, fallback, info, aux_encoder, prototype)
