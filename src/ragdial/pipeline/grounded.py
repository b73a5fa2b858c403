"""The grounded answer path of the knowledge branch: an answer policy decided before generation, conversational
retrieval (a follow-up rewritten against earlier turns and cited items, routed by what the turn asks for, cut by
relevance so a turn can cite nothing), and verified grounding after generation (every claim checked against the
cited items and the dialog; unsupported → one constrained retry, then the extractive answer; degenerate text cut
and replaced). ``Grounding`` is what the ``TurnRecord``, the API's ``ragdial.grounding`` block and the page show.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Generator as PieceStream
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

from ragdial.errors import RagdialError
from ragdial.generation.base import GenerationRequest, Generator
from ragdial.generation.extractive import (
    ExtractiveGenerator,
    extractive_reply,
    is_service_item,
    item_fields,
)
from ragdial.jsontypes import JSONDict
from ragdial.metrics.grounding import Evidence, GroundingCheck, check_grounding, degenerate_reason
from ragdial.pipeline.answer_features import Candidates, TurnView, item_name
from ragdial.retrieval.base import ScoredKnowledge
from ragdial.schema import Knowledge, SourceKind, Speaker, Turn, type_attribute
from ragdial.understanding.decision import Decision
from ragdial.understanding.policy import (
    ACTION,
    ANSWER,
    NOT_IN_KNOWLEDGE,
    OTHER_LANGUAGE,
    SMALL_TALK,
    Rewrite,
    TurnIntent,
)

if TYPE_CHECKING:
    from ragdial.text.encoders import Encoder

logger = logging.getLogger(__name__)
DEFAULT_MIN_RELEVANCE = 0.1  # tuned on the dev half with the answer model trained on the train set
INSTRUCTIONS = {
    "zh": {
        ANSWER: "只回答用户问的那一项，数字、价格、日期、名称必须与【知识】完全一致；知识里没有的不要说。",
        ACTION: "你不能替用户办理、开通、退订或修改任何业务，绝不能说已经办好；"
        "请说明用户可以如何自己办理，或转人工客服。",
        "retry": "上一个回复包含【知识】中没有的内容（{claims}）。请重新回复，只使用【知识】里逐字出现的数字和名称。",
    },
    "en": {
        ANSWER: "Answer only what the user asked; numbers, prices, dates and names must match the KNOWLEDGE exactly; "
        "say nothing the KNOWLEDGE does not say.",
        ACTION: "You cannot change, activate, cancel or subscribe anything on the account and must never say it is "
        "done; explain how the user can do it, or offer a human agent.",
        "retry": "The previous reply stated things the KNOWLEDGE does not say ({claims}). Reply again using only "
        "numbers and names that appear word for word in the KNOWLEDGE.",
    },
}


def policy_guidance(language: str, policy: str) -> str:
    """The guidance added to the LLM's instruction for a turn of ``policy`` (an action, or an answer)."""
    return INSTRUCTIONS["zh" if language == "zh" else "en"][ACTION if policy == ACTION else ANSWER]


@dataclass(frozen=True)
class Grounding:
    """How a knowledge-branch reply was decided and verified: the answer policy, the turn's route and rewrite,
    the items the relevance cut dropped, the check of each attempt (the generator's reply, the constrained retry)
    and of the delivered reply, and which fallback delivered it (``retry``, ``extractive``, or ``None``)."""

    policy: str
    intent: TurnIntent | None = None
    rewrite: Rewrite | None = None
    check: GroundingCheck = field(default_factory=GroundingCheck)
    attempts: tuple[GroundingCheck, ...] = ()
    fallback: str | None = None
    cut: tuple[str, ...] = ()
    policies: dict[str, float] = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        return self.check.ok

    def to_dict(self) -> JSONDict:
        return {
            "policy": self.policy,
            "route": self.intent.route if self.intent else "",
            "rewrite": self.rewrite.to_dict() if self.rewrite else None,
            "verified": self.verified,
            "claims": [c.to_dict() for c in self.check.claims],
            "unsupported": [c.to_dict() for c in self.check.unsupported],
            "degenerate": self.check.degenerate,
            "fallback": self.fallback,
            "attempts": [a.to_dict() for a in self.attempts],
            "cut": list(self.cut),
            "policy_scores": {k: round(v, 3) for k, v in self.policies.items()},
        }


_STOP = frozenset(
    [
        "的",
        "了",
        "吗",
        "呢",
        "吧",
        "啊",
        "我",
        "你",
        "您",
        "是",
        "有",
        "在",
        "这",
        "那",
        "个",
        "么",
        "什",
        "多",
        "少",
        "怎",
        "还",
        "能",
        "可",
        "以",
        "要",
        "想",
        "就",
        "都",
        "也",
        "和",
        "跟",
        "一",
        "下",
        "a",
        "an",
        "the",
        "is",
        "are",
        "do",
        "does",
        "i",
        "my",
        "me",
        "you",
        "your",
        "it",
        "of",
        "to",
        "for",
        "in",
        "on",
        "and",
        "or",
        "can",
        "how",
        "what",
        "which",
        "when",
        "much",
        "many",
        "there",
        "have",
        "has",
        "with",
        "that",
        "this",
        "be",
        "will",
        "would",
        "should",
        "could",
        "please",
    ]
)


class Relevance:
    """How relevant an item is to a query, in about [0, 1]: the larger of the lexical cover (idf-weighted share of
    the query's terms, Chinese character bigrams and other words, found in the item; idf over the knowledge base)
    and, where the retriever has a sentence encoder, the cosine of the query and the item (``dense``)."""

    def __init__(
        self,
        items: Iterable[Knowledge],
        dense: Callable[[str, Sequence[Knowledge]], list[float]] | None = None,
        embed: Callable[[str], np.ndarray | None] | None = None,
    ) -> None:
        documents = [set(_terms(item.text)) for item in items]
        counts: Counter[str] = Counter()
        for terms in documents:
            counts.update(terms)
        self.n = max(1, len(documents))
        self.counts = counts
        self.dense = dense
        self.embed = embed  # the retriever's sentence vector of a text

    def terms(self, text: str) -> list[str]:
        """The lexical terms of ``text`` (Chinese character bigrams and other words, stop words left out)."""
        return _terms(text)

    def unknown(self, text: str) -> float:
        """Share of the terms of ``text`` that no item of the knowledge base has (0 without terms): a question
        about something the knowledge never mentions has many."""
        terms = sorted(set(_terms(text)))
        return sum(term not in self.counts for term in terms) / len(terms) if terms else 0.0

    def idf(self, term: str) -> float:
        return math.log((self.n + 1) / (self.counts.get(term, 0) + 0.5))

    def lexical(self, query: str, item: Knowledge) -> float:
        terms = sorted(set(_terms(query)))  # a fixed order: the same sum in every process (hash seeds differ)
        if not terms:
            return 0.0
        have = set(_terms(item.text))
        total = sum(self.idf(t) for t in terms)
        return sum(self.idf(t) for t in terms if t in have) / total if total else 0.0

    def scores(self, query: str, items: Sequence[Knowledge]) -> list[float]:
        lexical = [self.lexical(query, item) for item in items]
        if self.dense is None or not items:
            return lexical
        return [max(a, b) for a, b in zip(lexical, self.dense(query, items), strict=True)]


class Embeddings:
    """Sentence vectors under one encoder (the answer model's, ``use``): of a text (the process-wide query cache)
    and cosines of a text with items (the retriever's item vectors when it uses the same encoder, else each item
    encoded once and kept). The encoder is loaded at first use; where it cannot be, there are no vectors."""

    def __init__(self, encoder: str, retriever: object = None) -> None:
        self.name = encoder
        self.retriever = retriever
        self._queries: Callable[[Sequence[str]], np.ndarray] | None = None
        self._encoder: Encoder | None = None
        self._items: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._failed = False

    def _load(self) -> bool:
        if self._queries is not None or self._failed:
            return not self._failed
        from ragdial.text.encoders import QueryCache, get_encoder

        try:
            self._encoder = get_encoder(self.name)
        except (ImportError, RagdialError, OSError) as err:
            logger.warning("no sentence vectors for the answer model (%s): %s", self.name, err)
            self._failed = True
            return False
        self._queries = QueryCache.shared(self._encoder)
        return True

    def preload(self, texts: Sequence[str]) -> int:
        """Encode ``texts`` now (or read them from the disk cache) instead of at a turn; how many."""
        from ragdial.text.encoders import QueryCache

        if not self._load() or not isinstance(self._queries, QueryCache):
            return 0
        return self._queries.preload(texts)

    def text(self, text: str) -> np.ndarray | None:
        if not self._load() or self._queries is None:
            return None
        return np.asarray(self._queries([text])[0], dtype=float)

    def cosines(self, text: str, items: Sequence[Knowledge]) -> list[float]:
        query = self.text(text)
        if query is None:
            return [0.0] * len(items)
        return [float(self._vector(item) @ query) for item in items]

    def _vector(self, item: Knowledge) -> np.ndarray:
        retriever = self.retriever
        if getattr(getattr(retriever, "encoder", None), "name", None) == self.name:
            vectors, position = getattr(retriever, "vectors", None), getattr(retriever, "position", None)
            if vectors is not None and position is not None:
                try:
                    return np.asarray(vectors[position(item.id)], dtype=float)
                except KeyError:
                    pass
        with self._lock:
            if item.id not in self._items and self._encoder is not None:
                self._items[item.id] = np.asarray(self._encoder.encode([item.text])[0], dtype=float)
            return self._items.get(item.id, np.zeros(0))


def _terms(text: str) -> list[str]:
    text = text.lower()
    terms: list[str] = []
    for run in re.findall(r"[\u4e00-\u9fff]+", text):
        chars = [c for c in run if c not in _STOP] if len(run) > 1 else [run]
        terms.extend(a + b for a, b in pairwise(run) if a not in _STOP or b not in _STOP)
        if len(run) == 1 and chars:
            terms.append(run)
    for word in re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", text):
        if word in _STOP or (len(word) < 2 and not word.isdigit()):
            continue
        terms.append(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return terms


@dataclass(frozen=True)
class Analysis:
    """What the grounded path decided about a turn before generating: the turn's view, its intent (policy and
    route from the answer model; ``follow_up``/``services`` cues), the rewrite, the detector's decision, the
    candidates with their features, the candidates ranked by the answer model (score: the probability of being the
    item to cite first), and the route and policy probabilities."""

    view: TurnView
    intent: TurnIntent
    rewrite: Rewrite | None
    decision: Decision
    candidates: Candidates
    ranked: list[ScoredKnowledge]
    routes: dict[str, float] = field(default_factory=dict)
    policies: dict[str, float] = field(default_factory=dict)
    reranked: list[ScoredKnowledge] | None = None  # a trained reranker's selection, cited as it is
    vector: np.ndarray | None = None  # the turn's sentence vector (the retriever's encoder), if it has one
    sibling: str = ""  # the id of the product the turn asks for instead of the last one ("有大点的吗"), if any
    mine: tuple[str, ...] = ()  # the catalogue products of the user's services


def select_cited(
    analysis: Analysis, relevance: Relevance, top_k: int, min_relevance: float, cite_min: float
) -> tuple[list[ScoredKnowledge], list[str]]:
    """The items to cite: nothing for small talk, another language or nothing in the knowledge; else the model's
    first item (if a global item, only when its relevance to the query, ``Relevance``, reaches ``min_relevance``:
    else nothing), then the next ones whose probability reaches ``cite_min`` and whose relevance reaches
    ``min_relevance``, up to ``top_k``. A question about which services the user has cites
    all their services. Returns (cited, ids dropped from the first ``top_k``)."""
    ranked = analysis.ranked
    if analysis.intent.policy in (SMALL_TALK, OTHER_LANGUAGE, NOT_IN_KNOWLEDGE) or not ranked:
        return [], [c.id for c in ranked[:top_k]]
    if analysis.reranked is not None:
        return list(analysis.reranked), []
    query = analysis.rewrite.text if analysis.rewrite else analysis.view.text
    if analysis.intent.policy == ACTION:  # how to do it oneself: an FAQ or a product's channels, not the profile
        ranked = [c for c in ranked if c.item.is_global] or ranked
        talked_about = _talked_about(analysis)
        if talked_about is not None:  # "给我办一个": the product the last reply was about
            return [talked_about], [c.id for c in ranked[:top_k] if c.id != talked_about.id]
    services = [c for c in ranked if not c.item.is_global and is_service_item(c.item)]
    if analysis.intent.services and services:
        services.sort(key=lambda c: str(c.item.fields.get("index", "")).zfill(6))
        return services, []
    first = ranked[0]
    relevant = relevance.scores(query, [first.item])[0] >= min_relevance or _goes_on_about(analysis, first)
    if first.item.is_global and not relevant:
        return [], [c.id for c in ranked[:top_k]]  # nothing relevant enough (a profile item answers as it is)
    named = first.item.source != SourceKind.FAQ and bool(item_name(first.item))
    if analysis.intent.possession and services and named and first.item.is_global:
        # "do I have X?" and X is not one of theirs: X, then what they have (the reply says no)
        services.sort(key=lambda c: str(c.item.fields.get("index", "")).zfill(6))
        return [first, *services], [c.id for c in ranked[1:top_k] if c not in services]
    if analysis.intent.comparison:
        other = _compared_with(analysis, first)
        if other is not None:
            return [first, other], [c.id for c in ranked[1:top_k] if c.id != other.id]
    kept = [first]
    cut: list[ScoredKnowledge] = []
    for candidate in ranked[1:top_k]:
        close = relevance.scores(query, [candidate.item])[0] >= min_relevance
        (kept if candidate.score >= cite_min and close else cut).append(candidate)
    return kept, [c.id for c in cut]


def _goes_on_about(analysis: Analysis, first: ScoredKnowledge) -> bool:
    """Whether a short turn that names no item goes on about ``first``, the item the last reply cited first
    ("多少钱", "包含啥", "what does it include?") or the sibling of it the turn asks for: its subject is that item,
    so its own words need not match it."""
    view, columns = analysis.view, analysis.candidates
    if analysis.sibling and first.id == analysis.sibling:
        return True  # "有大点的吗", "那澳门的呢": the sibling of what the last reply was about
    if not view.short or not view.last_cited or view.last_cited[0] != first.id or not columns.items:
        return False
    return not columns.column("named_turn").any() and not (columns.column("name_cover") >= 0.5).any()


def _talked_about(analysis: Analysis) -> ScoredKnowledge | None:
    """For a turn that names no product or service: the named global item the last reply cited first, if any."""
    columns = analysis.candidates
    if not columns.items or columns.column("named_turn").any() or (columns.column("name_cover") >= 0.5).any():
        return None
    first = columns.column("cited_last_first")
    for j, item in enumerate(columns.items):
        if first[j] and item.is_global and item.source != SourceKind.FAQ and item_name(item):
            return next((c for c in analysis.ranked if c.id == item.id), None)
    return None


def _compared_with(analysis: Analysis, first: ScoredKnowledge) -> ScoredKnowledge | None:
    """The other side of a comparison whose first item is a named product or service: the best-ranked other named
    product or service that the turn names or the last reply cited; else, when the turn compares with what the user
    has (and the first is not theirs), the product of one of the user's services of the first's type (its type
    field); else the best-ranked one of the first's type; else one of the user's; else the best-ranked other one."""
    if first.item.source == SourceKind.FAQ or not item_name(first.item):
        return None
    row = {item.id: j for j, item in enumerate(analysis.candidates.items)}
    named, cited = analysis.candidates.column("name_cover"), analysis.candidates.column("cited_last")
    others = [
        c
        for c in analysis.ranked[1:]
        if c.item.source != SourceKind.FAQ and item_name(c.item) and item_name(c.item) != item_name(first.item)
    ]
    if not others:
        return None

    def pointed(c: ScoredKnowledge) -> bool:
        j = row.get(c.id)
        return j is not None and (named[j] >= 0.5 or cited[j] > 0)

    kind = type_attribute(item_fields(first.item))
    with_own = compares_with_own(analysis.view.text) and first.id not in analysis.mine
    own = [c for c in others if c.id in analysis.mine] if with_own else []
    family = [c for c in others if kind and type_attribute(item_fields(c.item)) == kind]
    ordered = [*(c for c in own if c in family), *family, *own]
    return next((c for c in others if pointed(c)), None) or next(iter(ordered), others[0])


_OWN_SIDE = re.compile(
    r"我(?:现在|这|的|目前|用的)|\b(?:mine|i have now|what i have|i'?m on|my (?:plan|current))\b", re.I
)


def compares_with_own(text: str) -> bool:
    """Whether a comparison's other side is what the user has ("跟我现在这个比", "more data than ... is mine")."""
    return bool(_OWN_SIDE.search(text))


def evidence_for(items: Sequence[Knowledge], context: Sequence[Turn], names: Sequence[str]) -> Evidence:
    """What a reply may rest on: the cited items and the dialog's turns."""
    return Evidence.of(items, [t.text for t in context], names)


@dataclass
class Verified:
    """What :func:`stream_verified` delivered: the text, the check of each generator attempt, the check of the
    delivered text, the fallback (``retry``, ``extractive``, ``truncated``: the verified sentences kept and the
    unsupported rest dropped, or ``None``) and the generator's piece count."""

    text: str = ""
    attempts: tuple[GroundingCheck, ...] = ()
    check: GroundingCheck = field(default_factory=GroundingCheck)
    fallback: str | None = None
    pieces: int = 0


_BOUNDARY = re.compile(r"[。！？!?；;\n]|\.(?=\s)")
_CLAUSE = re.compile(r"[，、：]|[,:](?=\s)")  # a clause ends here ("1,000" and "10:30" do not split)
_ENDED = re.compile(r"(?:[。！？!?；;.…]|\n)$")


def stream_verified(
    generator: Generator, request: GenerationRequest, evidence: Evidence, result: Verified, clauses: bool = True
) -> PieceStream[str, None, None]:
    """The reply, each sentence yielded once the text so far passes the check (so an LLM reply starts after its
    first verified sentence, not after the whole reply); with ``clauses``, a clause (up to ，、： or ", ") goes out
    as soon as the text up to it passes, and a clause that does not pass on its own waits for its sentence (an
    eligibility claim is judged by the whole sentence). A sentence that fails stops the generator: with nothing
    delivered yet, one constrained retry (whole, then checked), then the extractive answer; with verified
    sentences or clauses delivered, the reply ends there (``truncated``; a clause gets a full stop). Degenerate
    text stops the generator at once.
    Policy turns without knowledge to state (small talk, not in the knowledge, another language) get the fixed
    policy reply. ``result`` is filled in when the stream ends."""
    if request.policy in (SMALL_TALK, NOT_IN_KNOWLEDGE, OTHER_LANGUAGE):
        text = extractive_reply(request)
        result.text, result.check, result.pieces = text, check_grounding(text, evidence), 1
        yield text
        return
    language = "zh" if request.language == "zh" else "en"
    guidance = policy_guidance(language, request.policy)
    attempts: list[GroundingCheck] = []
    delivered = ""
    sentences = _sentences(generator, replace(request, instruction=guidance), evidence, attempts, result, clauses)
    for sentence in sentences:
        delivered += sentence
        yield sentence
    first = attempts[-1]
    if first.ok or (delivered.strip() and not first.degenerate):
        result.text = delivered.strip()
        result.attempts, result.check = tuple(attempts), check_grounding(result.text, evidence)
        result.fallback = None if first.ok else "truncated"
        return
    if delivered.strip():  # verified sentences went out, then the text turned degenerate or the generator failed
        result.text, result.attempts = delivered.strip(), tuple(attempts)
        result.check, result.fallback = check_grounding(result.text, evidence), "truncated"
        return
    if not isinstance(generator, ExtractiveGenerator) and first.degenerate is None:
        claims = "、".join(c.text for c in first.unsupported[:4])
        retry = replace(
            request,
            instruction=guidance + "\n" + INSTRUCTIONS[language]["retry"].format(claims=claims),
            temperature=0.0,
        )
        text, count, error = _collect(generator, retry)
        result.pieces += count
        check = GroundingCheck((), error) if error else check_grounding(text, evidence)
        attempts.append(check)
        if check.ok:
            result.text, result.attempts, result.check, result.fallback = text.strip(), tuple(attempts), check, "retry"
            yield result.text
            return
    text = extractive_reply(request)
    final = check_grounding(text, evidence)
    if not final.ok:  # the extractive answer copies items verbatim; if even it fails, say what we cannot answer
        text = extractive_reply(replace(request, policy=NOT_IN_KNOWLEDGE))
        final = check_grounding(text, evidence)
    result.text, result.attempts, result.check, result.fallback = text, tuple(attempts), final, "extractive"
    yield text


def _sentences(
    generator: Generator,
    request: GenerationRequest,
    evidence: Evidence,
    attempts: list[GroundingCheck],
    result: Verified,
    clauses: bool = False,
) -> Iterator[str]:
    """Verified sentences (and with ``clauses`` verified clauses) of one generation, in order; appends the attempt's
    check (of the whole generated text, or of the text up to the first failing sentence) to ``attempts``. A clause's
    closing mark is held back with the rest of its sentence, so a reply that ends after a clause ends with a full
    stop, not a comma."""
    delivered, buffer, count = "", "", 0
    tried = 0  # the buffer's clause ends up to here were checked already (and did not pass on their own)
    stream: Iterator[str] | None = None
    check: GroundingCheck | None = None
    try:
        stream = iter(generator.stream(request))
        for piece in stream:
            if not piece:
                continue
            count += 1
            buffer += piece
            if count % 8 == 0 and degenerate_reason(delivered + buffer) not in (None, "empty"):
                check = GroundingCheck((), degenerate_reason(delivered + buffer))
                break
            while (match := _BOUNDARY.search(buffer)) is not None:
                sentence, buffer = buffer[: match.end()], buffer[match.end() :]
                candidate = check_grounding(delivered + sentence, evidence)
                if not candidate.ok:
                    check = candidate
                    break
                delivered += sentence
                tried = 0
                yield sentence
            if check is not None:
                break
            if clauses:
                ends = [m.start() for m in _CLAUSE.finditer(buffer) if m.start() > tried]
                if ends and check_grounding(delivered + buffer[: ends[-1]], evidence).ok:
                    clause, buffer, tried = buffer[: ends[-1]], buffer[ends[-1] :], 0
                    delivered += clause
                    yield clause
                elif ends:
                    tried = ends[-1]
        else:
            whole = check_grounding(delivered + buffer, evidence) if (delivered + buffer).strip() else None
            if whole is not None and whole.ok:
                if buffer:
                    yield buffer
                check = whole
            else:
                check = whole or GroundingCheck((), "empty")
    except Exception as err:  # the customer gets the extractive answer; the failure is in ragdial.grounding
        logger.warning("generator failed, answering extractively: %s: %s", type(err).__name__, err)
        check = GroundingCheck((), f"generator failed: {type(err).__name__}: {err}"[:300])
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
        result.pieces += count
        attempts.append(check if check is not None else GroundingCheck((), "empty"))
    if not attempts[-1].ok and delivered.strip() and not _ENDED.search(delivered.rstrip()):
        yield "。" if request.language == "zh" else "."  # the reply ends after a verified clause


def generate_verified(
    generator: Generator, request: GenerationRequest, evidence: Evidence
) -> tuple[str, tuple[GroundingCheck, ...], GroundingCheck, str | None, int]:
    """:func:`stream_verified` consumed whole: (text, attempts' checks, the delivered text's check, fallback,
    generator pieces)."""
    result = Verified()
    for _ in stream_verified(generator, request, evidence, result):
        pass
    return result.text, result.attempts, result.check, result.fallback, result.pieces


def _collect(generator: Generator, request: GenerationRequest) -> tuple[str, int, str | None]:
    """The generator's whole reply, its piece count, and why it failed (``None`` if it did not). The stream is
    stopped as soon as the text turns degenerate (runaway digits, repetition), so a looping model costs a few
    pieces, not the token limit; a generator that raises gives the extractive answer instead of a failed turn."""
    pieces: list[str] = []
    stream: Iterator[str] | None = None
    error = None
    try:
        stream = iter(generator.stream(request))
        for piece in stream:
            if not piece:
                continue
            pieces.append(piece)
            if len(pieces) % 8 == 0 and degenerate_reason("".join(pieces)) not in (None, "empty"):
                break
    except Exception as err:  # the customer gets the extractive answer; the failure is in ragdial.grounding
        logger.warning("generator failed, answering extractively: %s: %s", type(err).__name__, err)
        error = f"generator failed: {type(err).__name__}: {err}"[:300]
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    return "".join(pieces), len(pieces), error


def user_turns(context: Sequence[Turn]) -> list[str]:
    return [t.text for t in context if t.speaker == Speaker.USER]
