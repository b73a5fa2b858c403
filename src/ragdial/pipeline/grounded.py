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
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Generator as PieceStream
from dataclasses import dataclass, field, replace
from itertools import pairwise

from ragdial.generation.base import GenerationRequest, Generator
from ragdial.generation.extractive import (
    ExtractiveGenerator,
    asked_keys,
    extractive_reply,
    is_service_item,
    item_fields,
)
from ragdial.jsontypes import JSONDict
from ragdial.metrics.grounding import Evidence, GroundingCheck, check_grounding, degenerate_reason
from ragdial.retrieval.base import ScoredKnowledge
from ragdial.schema import Knowledge, SourceKind, Speaker, Turn
from ragdial.understanding.policy import (
    ACTION,
    ANSWER,
    FAQ,
    NOT_IN_KNOWLEDGE,
    OTHER_LANGUAGE,
    PRODUCT,
    PROFILE,
    SMALL_TALK,
    Rewrite,
    TurnIntent,
)

logger = logging.getLogger(__name__)
ROUTE_SOURCES = {PROFILE: SourceKind.USER_PROFILE, PRODUCT: SourceKind.PRODUCT, FAQ: SourceKind.FAQ}
DEFAULT_MIN_RELEVANCE = 0.22
CANDIDATES = 12  # the retriever's first items the relevance cut looks at
HARD_ROUTES = (PROFILE,)  # routes whose source is searched on its own and put first (tuned on dev)
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
        self, items: Iterable[Knowledge], dense: Callable[[str, Sequence[Knowledge]], list[float]] | None = None
    ) -> None:
        documents = [set(_terms(item.text)) for item in items]
        counts: Counter[str] = Counter()
        for terms in documents:
            counts.update(terms)
        self.n = max(1, len(documents))
        self.counts = counts
        self.dense = dense

    def idf(self, term: str) -> float:
        return math.log((self.n + 1) / (self.counts.get(term, 0) + 0.5))

    def lexical(self, query: str, item: Knowledge) -> float:
        terms = set(_terms(query))
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


def dense_of(retriever: object) -> Callable[[str, Sequence[Knowledge]], list[float]] | None:
    """The query-item cosine of a retriever with a sentence encoder and item vectors (``HybridRetriever``)."""
    queries = getattr(retriever, "_queries", None)
    vectors = getattr(retriever, "vectors", None)
    position = getattr(retriever, "position", None)
    if queries is None or vectors is None or position is None:
        return None

    def dense(query: str, items: Sequence[Knowledge]) -> list[float]:
        vector = queries([query])[0]
        return [float(vectors[position(item.id)] @ vector) for item in items]

    return dense


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


def rank_for_turn(
    ranked: Sequence[ScoredKnowledge],
    query: str,
    intent: TurnIntent,
    relevance: Relevance,
    top_k: int,
    min_relevance: float,
) -> tuple[list[ScoredKnowledge], list[str]]:
    """The candidates (the route's source first, then the retriever's order) cut by relevance: items under
    ``min_relevance`` are dropped, so a turn can cite nothing. On a question about one's own data, the profile item
    holding the figure asked for comes first."""
    candidates = list(ranked[:CANDIDATES])
    scores = relevance.scores(query, [c.item for c in candidates])
    if intent.route == PROFILE:
        # one's own data: the profile items first, the one holding the figure asked for, then by relevance; they
        # stay whatever their wording (the user asked about their account)
        def key(index: int) -> tuple[int, float]:
            item = candidates[index].item
            if item.source != SourceKind.USER_PROFILE:
                return (2, 0.0)
            asked = asked_keys(query, item_fields(item), first_match=True)
            return (0 if asked else 1, -scores[index])

        order = sorted(range(len(candidates)), key=key)
        profile = {i for i in order if candidates[i].item.source == SourceKind.USER_PROFILE}
        services = [i for i in order if i in profile and is_service_item(candidates[i].item)]
        if services and intent.services:  # "which plans do I have": their services, in profile order
            order = sorted(services, key=lambda i: str(candidates[i].item.fields.get("index", "")).zfill(6))
        candidates = [candidates[i] for i in order]
        scores = [max(scores[i], min_relevance) if i in profile else scores[i] for i in order]
    kept = [c for c, s in zip(candidates, scores, strict=True) if s >= min_relevance][:top_k]
    cut = [c.id for c, s in zip(candidates[:top_k], scores[:top_k], strict=True) if s < min_relevance]
    return kept, cut


_PAST_PERIOD = re.compile(r"上个?月|上期|去年|last (?:month|year)|previous month", re.IGNORECASE)


def policy_of(intent: TurnIntent, selected: Sequence[ScoredKnowledge], query: str = "", user: str | None = "") -> str:
    """The answer policy: small talk and actions as the turn asks; an answerable turn with nothing relevant is
    ``not_in_knowledge``, and so is a question about one's own account without an account (a guest) or about a
    past period the cited items do not cover."""
    if intent.policy in (SMALL_TALK, ACTION, OTHER_LANGUAGE):
        return intent.policy
    if intent.route == PROFILE and user is None:
        return NOT_IN_KNOWLEDGE
    if (
        intent.route == PROFILE
        and _PAST_PERIOD.search(query)
        and not any(_PAST_PERIOD.search(c.item.text) for c in selected)
    ):
        return NOT_IN_KNOWLEDGE
    return ANSWER if selected else NOT_IN_KNOWLEDGE


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


def stream_verified(
    generator: Generator, request: GenerationRequest, evidence: Evidence, result: Verified
) -> PieceStream[str, None, None]:
    """The reply, each sentence yielded once the text so far passes the check (so an LLM reply starts after its
    first verified sentence, not after the whole reply). A sentence that fails stops the generator: with nothing
    delivered yet, one constrained retry (whole, then checked), then the extractive answer; with verified
    sentences delivered, the reply ends there (``truncated``). Degenerate text stops the generator at once.
    Policy turns without knowledge to state (small talk, not in the knowledge, another language) get the fixed
    policy reply. ``result`` is filled in when the stream ends."""
    if request.policy in (SMALL_TALK, NOT_IN_KNOWLEDGE, OTHER_LANGUAGE):
        text = extractive_reply(request)
        result.text, result.check, result.pieces = text, check_grounding(text, evidence), 1
        yield text
        return
    language = "zh" if request.language == "zh" else "en"
    guidance = INSTRUCTIONS[language][ACTION if request.policy == ACTION else ANSWER]
    attempts: list[GroundingCheck] = []
    delivered = ""
    sentences = _sentences(generator, replace(request, instruction=guidance), evidence, attempts, result)
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
) -> Iterator[str]:
    """Verified sentences of one generation, in order; appends the attempt's check (of the whole generated text,
    or of the text up to the first failing sentence) to ``attempts``."""
    delivered, buffer, count = "", "", 0
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
                yield sentence
            if check is not None:
                break
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
