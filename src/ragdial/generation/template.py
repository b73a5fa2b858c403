"""Template / extractive generator learned from training dialogs.

What is learned (and saved as JSON):
- for knowledge-graph triples, a sentence pattern per attribute (``"门票是{value}"``) taken from training replies that
  contain the triple's value verbatim, plus one pattern over all attributes (``"{attribute}是{value}"``); values too
  long to repeat whole are cut to their clauses closest to the user's question, within the usual reply length;
- for text knowledge (FAQ answers, review sentences, product and profile strings), the usual reply length and the
  most frequent opening and closing sentences that carry no knowledge ("Anything else I can help with?");
- for triples, the most frequent short opening clause of replies that carry a triple ("是的，"), put before them;
- a fallback reply for turns without knowledge: the *central* such reply of the data, the one sharing most tokens
  (characters in Chinese) with the others, i.e. the reply an unseen turn without knowledge most likely resembles
  (in KdConv the most frequent one, "不客气！", shares almost nothing with the typical reply, a question back).

Knowledge values are always copied verbatim. Generation is deterministic and streams its words.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ragdial.datasets._io import write_json
from ragdial.errors import DataFormatError, RagdialError
from ragdial.generation.base import GenerationRequest, Generator
from ragdial.generation.extractive import comparison_reply, extractive_reply, is_service_item, possession_reply
from ragdial.generation.knowledge_view import content
from ragdial.generation.pieces import length, pieces, sentences
from ragdial.jsontypes import JSONDict
from ragdial.metrics import tokenizers
from ragdial.schema import Example, Knowledge, KnowledgeBase, SourceKind, Speaker
from ragdial.text.tokenize import words
from ragdial.understanding.policy import asks_own_services

FORMAT = "ragdial-template-1"
VALUE, ENTITY, ATTRIBUTE = "{value}", "{entity}", "{attribute}"
DEFAULT_FALLBACK = {"zh": "好的，还有什么可以帮您的吗？", "en": "Is there anything else I can help you with?"}
MAX_PATTERN_LITERAL = 30  # characters of a pattern outside its placeholders
MIN_PATTERN_COUNT = 2
FRAMING_OVERLAP = 0.3  # a reply sentence sharing less than this with the knowledge is framing
MIN_FRAMING_SHARE = 0.2  # framing closers/openers are used when at least this share of replies have one
MIN_LEAD_SHARE = 0.03
MAX_LEAD_WORDS = 6
MAX_TRIPLE_LEAD = 4  # characters (Chinese) or words of an opening clause such as "是的，" before a triple
CENTRAL_SAMPLE = 400  # replies compared when choosing the fallback


@dataclass
class TemplateModel:
    """Everything the template generator learned; plain data, saved as JSON."""

    language: str
    attribute_patterns: dict[str, str] = field(default_factory=dict)
    generic_pattern: str = VALUE
    value_budget: dict[str, int] = field(default_factory=dict)  # attribute -> usual reply length for long values
    default_value_budget: int = 60
    openers: dict[str, str] = field(default_factory=dict)  # source kind -> sentence
    closers: dict[str, str] = field(default_factory=dict)
    leads: dict[str, str] = field(default_factory=dict)  # source kind -> reply prefix, e.g. "According to {entity},"
    content_budget: dict[str, int] = field(default_factory=dict)  # source kind -> usual reply length
    fallback: str = ""
    trained_on: int = 0

    def to_dict(self) -> JSONDict:
        return {"format": FORMAT, **asdict(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, object], path: str | Path = "<template model>") -> TemplateModel:
        if data.get("format") != FORMAT:
            raise DataFormatError(path, f"not a template model (expected format {FORMAT!r})", field="format")
        known = {k: v for k, v in data.items() if k != "format"}
        if "language" not in known:
            raise DataFormatError(path, "required field is missing", field="language")
        build: Callable[..., TemplateModel] = cls  # the fields are checked here: a TypeError names the bad one
        try:
            return build(**known)
        except TypeError as err:
            raise DataFormatError(path, f"unexpected content: {err}") from None

    def save(self, path: str | Path) -> Path:
        return write_json(path, self.to_dict())

    @classmethod
    def load(cls, path: str | Path) -> TemplateModel:
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RagdialError(f"{path}: template model file not found") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise DataFormatError(path, f"not valid JSON: {err}") from None
        if not isinstance(data, dict):
            raise DataFormatError(path, "expected a JSON object")
        return cls.from_dict(data, path)


def _most_common(counter: Counter[str], minimum: int = 1) -> str | None:
    """The most frequent key (ties: shorter, then alphabetical) if seen at least ``minimum`` times."""
    if not counter:
        return None
    best = min(counter.items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))
    return best[0] if best[1] >= minimum else None


def _pattern_from(sentence: str, item: Knowledge) -> str | None:
    value = str(item.fields["value"]).strip()
    pattern = sentence.replace(value, VALUE, 1)
    entity = str(item.fields.get("entity") or "")
    if entity and entity in pattern and entity not in VALUE:
        pattern = pattern.replace(entity, ENTITY)
    literal = pattern.replace(VALUE, "").replace(ENTITY, "")
    return pattern if len(literal) <= MAX_PATTERN_LITERAL else None


def _generalise(pattern: str, attribute: str) -> str:
    return pattern.replace(attribute, ATTRIBUTE) if len(attribute) >= 2 else pattern


def _overlap(sentence: str, reference: set[str], language: str) -> float:
    tokens = words(sentence, language)
    return sum(1 for t in tokens if t in reference) / len(tokens) if tokens else 1.0


def learn(examples: Iterable[Example], kb: KnowledgeBase, language: str) -> TemplateModel:
    """Learn patterns, lengths, framing sentences and the fallback from labelled examples."""
    attr_patterns: dict[str, Counter[str]] = defaultdict(Counter)
    generic: Counter[str] = Counter()
    value_lengths: dict[str, list[int]] = defaultdict(list)
    content_lengths: dict[str, list[int]] = defaultdict(list)
    openers: dict[str, Counter[str]] = defaultdict(Counter)
    closers: dict[str, Counter[str]] = defaultdict(Counter)
    kind_count: Counter[str] = Counter()
    leads: dict[str, Counter[str]] = defaultdict(Counter)
    no_knowledge: list[str] = []
    triple_leads: Counter[str] = Counter()
    triple_replies = 0
    trained = 0
    for example in examples:
        response = (example.response or "").strip()
        if not response:
            continue
        trained += 1
        items = [kb.get(i) for i in example.knowledge_ids if i in kb]
        if not items:
            no_knowledge.append(response)
            continue
        reply_sentences = sentences(response, language)
        triples = [k for k in items if k.source == SourceKind.KG_TRIPLE and "value" in k.fields]
        if triples:
            triple_replies += 1
            lead = _triple_lead(response, triples, language)
            if lead:
                triple_leads[lead] += 1
        for item in triples:
            value = str(item.fields["value"]).strip()
            attribute = str(item.fields.get("attribute") or "")
            if not value:
                continue
            carrier = next((s for s in reply_sentences if value in s), None)
            if carrier is None and value in response:
                carrier = response
            if carrier is None:
                value_lengths[attribute].append(length(response, language))
                continue
            pattern = _pattern_from(carrier, item)
            if pattern:
                attr_patterns[attribute][pattern] += 1
                generic[_generalise(pattern, attribute)] += 1
        texts = [k for k in items if k not in triples]
        if not texts:
            continue
        kind = texts[0].source.value
        kind_count[kind] += 1
        content_lengths[kind].append(length(response, language))
        reference = {t for k in texts for t in words(content(k), language)}
        if language != "zh":
            leads[kind].update(_lead_candidates(response, texts))
        if len(reply_sentences) > 1:
            if _overlap(reply_sentences[0], reference, language) < FRAMING_OVERLAP:
                openers[kind][reply_sentences[0]] += 1
            if _overlap(reply_sentences[-1], reference, language) < FRAMING_OVERLAP:
                closers[kind][reply_sentences[-1]] += 1
    model = TemplateModel(language=language, trained_on=trained)
    for attribute, counter in sorted(attr_patterns.items()):
        best = _most_common(counter, MIN_PATTERN_COUNT)
        if best:
            model.attribute_patterns[attribute] = best
    model.generic_pattern = _most_common(generic, MIN_PATTERN_COUNT) or VALUE
    model.value_budget = {a: int(statistics.median(v)) for a, v in sorted(value_lengths.items()) if len(v) >= 2}
    all_lengths = [n for v in value_lengths.values() for n in v]
    if all_lengths:
        model.default_value_budget = int(statistics.median(all_lengths))
    model.content_budget = {k: int(statistics.median(v)) for k, v in sorted(content_lengths.items())}
    for kind, total in kind_count.items():
        if sum(openers[kind].values()) >= MIN_FRAMING_SHARE * total:
            model.openers[kind] = _most_common(openers[kind], MIN_PATTERN_COUNT) or ""
        if sum(closers[kind].values()) >= MIN_FRAMING_SHARE * total:
            model.closers[kind] = _most_common(closers[kind], MIN_PATTERN_COUNT) or ""
        minimum = max(MIN_PATTERN_COUNT, MIN_LEAD_SHARE * total)
        frequent = {lead: n for lead, n in leads[kind].items() if n >= minimum}
        if frequent:  # the lead-in covering most reply words: frequency x length
            model.leads[kind] = max(frequent, key=lambda lead: (frequent[lead] * len(lead.split()), lead))
    lead = _most_common(triple_leads, max(MIN_PATTERN_COUNT, math.ceil(MIN_LEAD_SHARE * triple_replies)))
    if lead:
        model.leads[SourceKind.KG_TRIPLE.value] = lead
    model.openers = {k: v for k, v in model.openers.items() if v}
    model.closers = {k: v for k, v in model.closers.items() if v}
    model.fallback = central_reply(no_knowledge, language) or DEFAULT_FALLBACK.get(language, "")
    return model


_LEAD_CLAUSE = re.compile(r"^([^，,。.！!？?；;]+[，,])")


def _triple_lead(response: str, triples: Sequence[Knowledge], language: str) -> str | None:
    """A reply's short opening clause ("是的，", "Yes,") when it carries none of the triples' values."""
    match = _LEAD_CLAUSE.match(response.strip())
    if not match or length(match.group(1), language) > MAX_TRIPLE_LEAD:
        return None
    clause = match.group(1)
    if any(str(t.fields["value"]).strip() in clause or clause[:-1] in str(t.fields["value"]) for t in triples):
        return None
    return clause + ("" if language == "zh" else " ")


def _join_values(triples: Sequence[Knowledge], language: str) -> list[Knowledge]:
    """Triples of one entity and attribute as one, their values listed ("主演：A、B、C" is one sentence, not three)."""
    groups: dict[tuple[str, str], list[Knowledge]] = {}
    for item in triples:
        key = (str(item.fields.get("entity") or ""), str(item.fields.get("attribute") or ""))
        groups.setdefault(key, []).append(item)
    joined = []
    for group in groups.values():
        if len(group) == 1:
            joined.append(group[0])
            continue
        values = ("、" if language == "zh" else ", ").join(str(i.fields["value"]).strip() for i in group)
        joined.append(replace(group[0], fields={**group[0].fields, "value": values}))
    return joined


def central_reply(replies: Sequence[str], language: str, sample: int = CENTRAL_SAMPLE) -> str | None:
    """The reply with the highest mean token-overlap F1 to the others (characters in Chinese, words otherwise),
    over an evenly spaced sample of at most ``sample`` replies as references and as candidates; ties go to the
    more frequent, then shorter reply. ``None`` when fewer than ``MIN_PATTERN_COUNT`` replies are given."""
    if len(replies) < MIN_PATTERN_COUNT:
        return None
    tokenize = tokenizers.get("chars-nopunct" if language == "zh" else "words")
    counts = Counter(replies)
    step = max(1, len(replies) // sample)
    references = [Counter(tokenize(r)) for r in replies[::step]]
    unique = sorted(counts, key=lambda r: (-counts[r], len(r), r))
    candidates = unique[:: max(1, len(unique) // sample)]

    def mean_f1(reply: str) -> float:
        tokens = Counter(tokenize(reply))
        size = sum(tokens.values())
        total = 0.0
        for reference in references:
            common = sum((tokens & reference).values())
            if common:
                total += 2 * common / (size + sum(reference.values()))
        return total / len(references)

    return max(candidates, key=lambda r: (mean_f1(r), counts[r], -len(r)))


_LOWER_AFTER_LEAD = frozenset(
    [
        "The",
        "A",
        "An",
        "This",
        "That",
        "These",
        "Those",
        "It",
        "Its",
        "They",
        "Their",
        "There",
        "Our",
        "My",
        "We",
        "Everything",
    ]
)


def _lead_candidates(response: str, items: Sequence[Knowledge]) -> set[str]:
    """The first 2..6 words of a reply, with the entity's name replaced by ``{entity}``."""
    for item in items:
        entity = str(item.fields.get("entity") or "")
        if entity and entity in response:
            response = response.replace(entity, ENTITY)
            break
    tokens = response.split()
    return {" ".join(tokens[:n]) for n in range(2, min(MAX_LEAD_WORDS, len(tokens) - 1) + 1)}


def _closest_sentences(text: str, query: str, budget: int, language: str) -> str:
    """The sentences of ``text`` most like ``query``, in their original order, within ``budget`` length."""
    if length(text, language) <= budget:
        return text.strip()
    parts = sentences(text, language)
    if len(parts) <= 1:
        parts = [p for p in _COMMA.findall(text) if p.strip()]
    if len(parts) <= 1:
        return text.strip()
    query_tokens = set(words(query, language))
    ranked = sorted(range(len(parts)), key=lambda i: (-_overlap_count(parts[i], query_tokens, language), i))
    chosen: list[int] = []
    used = 0
    for index in ranked:
        size = length(parts[index], language)
        if chosen and used + size > budget:
            break
        chosen.append(index)
        used += size
    return ("" if language == "zh" else " ").join(parts[i] for i in sorted(chosen))


_COMMA = re.compile(r"[^，,]+[，,]?")
_TRAILING_PUNCT = "。.！!？?；;，,、 "


def _overlap_count(sentence: str, query_tokens: set[str], language: str) -> int:
    return sum(1 for t in set(words(sentence, language)) if t in query_tokens)


def _end(sentence: str, language: str) -> str:
    sentence = sentence.strip()
    if not sentence or sentence[-1] in "。！？!?.…；;~":
        return sentence
    return sentence + ("。" if language == "zh" else ".")


class TemplateGenerator(Generator):
    """Fills learned patterns with knowledge copied verbatim; deterministic; streams words."""

    def __init__(self, model: TemplateModel, max_items: int = 3, path: str | None = None) -> None:
        self.model = model
        self.max_items = max_items
        self.path = path  # where the model was loaded from (``to_config``)

    @classmethod
    def train(
        cls, examples: Iterable[Example], kb: KnowledgeBase, language: str, max_items: int = 3
    ) -> TemplateGenerator:
        return cls(learn(examples, kb, language), max_items=max_items)

    @classmethod
    def load(cls, path: str | Path, max_items: int = 3) -> TemplateGenerator:
        return cls(TemplateModel.load(path), max_items, path=str(path))

    def save(self, path: str | Path) -> Path:
        return self.model.save(path)

    def to_config(self) -> JSONDict:
        return {"name": "template", "model": self.path, "max_items": self.max_items}

    def reply(self, request: GenerationRequest) -> str:
        """The whole reply text (before max-token and stop handling)."""
        language = request.language or self.model.language
        query = next((t.text for t in reversed(request.context) if t.speaker == Speaker.USER), "")
        if request.policy != "answer":  # an account action (or another policy): its fixed reply, never "好的"
            return extractive_reply(request)
        items = list(request.knowledge)[: self.max_items]
        if not items:
            return self.model.fallback or DEFAULT_FALLBACK.get(language, "")
        compared = comparison_reply(items, query, language)  # "which is cheaper?": both sides, not the first one
        if compared is None:  # "do I have X?": yes or no from the user's services
            compared = possession_reply(request.knowledge, query, language)
        if compared is not None:
            return compared
        out: list[str] = []
        triples = [k for k in items if k.source == SourceKind.KG_TRIPLE and "value" in k.fields]
        for item in _join_values(triples, language):
            out.append(_end(self._fill_triple(item, query, language), language))
        lead = self.model.leads.get(SourceKind.KG_TRIPLE.value)
        if lead and out:
            out[0] = lead + out[0]
        texts = [k for k in items if k not in triples]
        if texts:
            out.extend(self._text_reply(texts, query, language))
        joined: list[str] = []
        for sentence in out:
            if sentence and sentence not in joined:
                joined.append(sentence)
        return ("" if language == "zh" else " ").join(joined)

    def _fill_triple(self, item: Knowledge, query: str, language: str) -> str:
        attribute = str(item.fields.get("attribute") or "")
        value = str(item.fields["value"]).strip()
        budget = self.model.value_budget.get(attribute, self.model.default_value_budget)
        if length(value, language) > budget:
            entity = str(item.fields.get("entity") or "")
            value = _closest_sentences(value, query.replace(entity, "") if entity else query, budget, language)
        pattern = self.model.attribute_patterns.get(attribute) or self.model.generic_pattern
        after = pattern.split(VALUE, 1)[1][:1] if VALUE in pattern else ""
        if after and after in _TRAILING_PUNCT:
            value = value.rstrip(_TRAILING_PUNCT)
        text = pattern.replace(ENTITY, str(item.fields.get("entity") or ""))
        text = text.replace(ATTRIBUTE, attribute)
        return text.replace(VALUE, value)

    def _text_reply(self, items: Sequence[Knowledge], query: str, language: str) -> list[str]:
        kind = items[0].source.value
        budget = self.model.content_budget.get(kind, 40 if language == "en" else 60)
        body: list[str] = []
        used = 0
        # "which plans do I have?": every service cited, whatever the usual reply length
        whole = asks_own_services(query) and all(is_service_item(i) for i in items)
        for item in items:
            text = _end(content(item), language)
            size = length(text, language)
            if body and used + size > budget and not whole:
                break
            body.append(text)
            used += size
        lead = self.model.leads.get(kind)
        if lead and body and (ENTITY not in lead or items[0].fields.get("entity")):
            first = body[0]
            head, _, rest = first.partition(" ")
            if head in _LOWER_AFTER_LEAD:
                first = f"{head.lower()} {rest}"
            body[0] = lead.replace(ENTITY, str(items[0].fields.get("entity") or "")) + " " + first
        opener, closer = self.model.openers.get(kind), self.model.closers.get(kind)
        return [s for s in (opener, *body, closer) if s]

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        text = self.reply(request)
        for stop in request.stop:
            if stop and stop in text:
                text = text[: text.index(stop)]
        for count, piece in enumerate(pieces(text)):
            if count >= request.max_tokens or request.cancelled:
                return
            yield piece
