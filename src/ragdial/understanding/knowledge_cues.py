"""Knowledge-conditioned detection features: does some item of *this* knowledge base answer the turn, and is the
turn a question at all? No feature reads a content word, so a detector trained on one domain carries to another.

The task definition (DSTC9/11 track 1): a turn is knowledge-seeking when some item in K satisfies it. Two blocks:

- :class:`KnowledgeCues`: how well the last user turn matches the knowledge base (sentence-embedding cosine to the
  items' questions and texts, idf-weighted share of the turn's words the best item covers, entity names of the KB
  in the turn), and dialog-act cues of the last user and system turns (question form, numbers and times, booking,
  thanks, the system's offer or question). Every value lies in about [0, 1] whatever the knowledge base.
- :class:`ActNgrams`: word n-grams of the last user turn and last system turn with every content word masked
  (``<sys>`` when the training dialogs' system turns use the word, ``<kb>`` when the knowledge base uses it,
  ``<w>`` when neither, ``<num>`` for numbers), so "can i bring my <kb> on the <kb>" is learnt, never "dog" or
  "train"; "what is the <sys> <sys>" is a question the system's database answers (address, price range, ...).

The knowledge base is not part of what is learnt: :meth:`set_knowledge` swaps in the deployment KB; the items
given at training time are kept only so that a saved model reproduces its own training features.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from scipy import sparse

from ragdial.jsontypes import JSONDict, JSONObject, JSONValue
from ragdial.schema import Knowledge, Speaker, Turn
from ragdial.text.tokenize import detect_language, words
from ragdial.understanding.features import BLOCKS, FeatureBlock, NgramTfidf
from ragdial.understanding.saved import array, mapping, texts
from ragdial.understanding.views import view_text

Context = Sequence[Turn]
KnowledgeText = str | Knowledge

_FUNCTION_TEXT = """
    a an the this that these those it its it's they them their there here i me my mine we us our you your yours
    he she his her him one ones some any anything something nothing all each every both either neither other
    another much many more most less few little lot lots
    is am are was were be been being do does did done doing have has had having will would shall should can could
    may might must need needs want wants wanted like would'd 'd 'll 've 're 's n't not no yes yeah ok okay sure
    what which who whom whose where when why how whether if then than so because but and or nor also too as just
    only even still yet already very really quite please thanks thank bye goodbye great perfect fine good
    to of in on at by for with about from into onto over under up down out off near around after before between
    during until while without within via per
    book booking booked reserve reservation reference confirm confirmation number help else anyway
    allowed allow available offer offers provide provides any
    吗 呢 吧 啊 的 了 是 有 没有 不 什么 怎么 怎样 哪 哪里 哪个 几 多少 为什么
    请问 可以 能 能不能 会 要 想 我 你 他 她 它 这 那
"""
_QUESTION_TEXT = """what which who whom whose where when why how is are was were do does did can could will would
shall should may might have has am any"""
FUNCTION_WORDS = frozenset(_FUNCTION_TEXT.split())
QUESTION_STARTS = frozenset(_QUESTION_TEXT.split())
_NUMBER = re.compile(r"\d")
_TIME = re.compile(r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s?(?:am|pm)\b", re.IGNORECASE)
_DAYS = re.compile(r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tonight|tomorrow)\b", re.I)
_BOOK = re.compile(r"\b(?:book|booking|reserve|reservation|reference|confirmation number)\b", re.I)
_THANKS = re.compile(r"\b(?:thanks?|thank you|bye|goodbye|that'?s all|that is all|no,? that|have a nice)\b", re.I)
_NEED = re.compile(r"\b(?:i need|i want|i'?d like|i would like|looking for|find me|i am looking|i'm looking)\b", re.I)
_OFFER = re.compile(
    r"\b(?:would you like|shall i|should i|do you want|can i help|anything else|something else|may i|"
    r"how many|what time|which day|what day|how about|is there anything)\b",
    re.I,
)
_BOOKED = re.compile(r"\b(?:booked|reference|confirmed|booking is|successful)\b", re.I)


def _tokens(text: str) -> list[str]:
    return words(text, detect_language(text)) if text.strip() else []


def _content(text: str) -> list[str]:
    """Stemmed content words (no stopwords), as retrieval indexes them."""
    return words(text, detect_language(text), stem=True, drop_stopwords=True) if text.strip() else []


def question_text(item: KnowledgeText) -> str:
    """What an item answers, phrased as its knowledge base phrases it: the FAQ question / snippet title, else the
    item's text."""
    if isinstance(item, str):
        return item
    title = item.fields.get("title")
    return title if isinstance(title, str) and title.strip() else item.text


def item_text(item: KnowledgeText) -> str:
    return item if isinstance(item, str) else item.text


def item_names(items: Sequence[KnowledgeText]) -> list[str]:
    """Entity names and domain names of the items (for "is a KB entity named in the turn")."""
    names: set[str] = set()
    for item in items:
        if isinstance(item, str):
            continue
        for key in ("entity", "domain"):
            value = item.fields.get(key)
            if isinstance(value, str) and len(value.strip()) >= 3:
                names.add(value.strip().lower())
    return sorted(names, key=len, reverse=True)


def act_cues(context: Context) -> list[float]:
    """Dialog-act cues of the last user turn and the system turn before it (0/1 flags and a length)."""
    user = view_text(context, "last_user")
    system = view_text(context, "last_system")
    tokens = _tokens(user)
    first = tokens[0] if tokens else ""
    lowered = user.lower()
    clauses = [c.strip() for c in re.split(r"[.!?;,]", lowered) if c.strip()]
    starts_question = any(_tokens(c)[:1] and _tokens(c)[0] in QUESTION_STARTS for c in clauses)
    user_asks = "?" in user or "？" in user
    return [
        float(user_asks),
        float(first in QUESTION_STARTS),
        float(starts_question),
        float(bool(_NUMBER.search(user)) and not starts_question and not user_asks),
        float(bool(_TIME.search(user))),
        float(bool(_DAYS.search(user))),
        float(bool(_BOOK.search(user))),
        float(bool(_THANKS.search(user))),
        float(bool(_NEED.search(user))),
        min(math.log1p(len(tokens)) / math.log(40), 1.0),
        float("?" in system or "？" in system),
        float(bool(_OFFER.search(system))),
        float(bool(_NUMBER.search(system))),
        float(bool(_BOOKED.search(system))),
    ]


ACT_NAMES = [
    "user_qmark",
    "user_wh_or_aux_first",
    "user_clause_question",
    "user_number_statement",
    "user_time",
    "user_day",
    "user_booking",
    "user_thanks",
    "user_need",
    "user_length",
    "system_qmark",
    "system_offer",
    "system_number",
    "system_booked",
]
MATCH_NAMES = [
    "question_cos_max",
    "text_cos_max",
    "question_cos_peak",
    "previous_question_cos_max",
    "best_item_coverage",
    "kb_vocabulary_coverage",
    "kb_name_in_user",
]
CROSS_NAMES = ["question_x_cos", "question_x_coverage", "question_x_offer"]


class KnowledgeMatcher:
    """The deployment knowledge base, indexed for matching turns: question/text vectors, BM25 and idf."""

    def __init__(self, items: Sequence[KnowledgeText], encoder: str = "use") -> None:
        import bm25s
        from bm25s.tokenization import Tokenized

        from ragdial.text.encoders import encode_cached, get_encoder

        self.encoder_name = encoder
        self.size = len(items)
        self.encoder = get_encoder(encoder)
        self.question_vectors = np.zeros((0, self.encoder.dim), np.float32)
        self.text_vectors = self.question_vectors
        self.names = item_names(items)
        self.item_tokens: list[set[str]] = [set(_content(item_text(i)) + _content(question_text(i))) for i in items]
        df: Counter[str] = Counter()
        for tokens in self.item_tokens:
            df.update(tokens)
        self.idf = {t: math.log(1 + self.size / n) for t, n in df.items()}
        self.max_idf = math.log(1 + max(self.size, 1))
        self.vocab = {t: i for i, t in enumerate(sorted(df))}
        self.index = None
        if items:
            self.question_vectors = np.asarray(encode_cached(self.encoder, [question_text(i) for i in items]))
            self.text_vectors = np.asarray(encode_cached(self.encoder, [item_text(i) for i in items]))
            if self.vocab:
                ids = [[self.vocab[t] for t in sorted(tokens)] for tokens in self.item_tokens]
                self.index = bm25s.BM25()
                self.index.index(Tokenized(ids=ids, vocab=self.vocab), show_progress=False)

    def encode(self, texts: list[str]) -> np.ndarray:
        from ragdial.text.encoders import encode_cached

        if len(texts) >= 64:
            return np.asarray(encode_cached(self.encoder, texts, is_query=True))
        return self.encoder.encode(texts, is_query=True)

    def coverage(self, text: str) -> tuple[float, float]:
        """(idf share of the text's content words in the best BM25 item, idf share found anywhere in the KB)."""
        tokens = list(dict.fromkeys(_content(text)))
        if not tokens or self.index is None:
            return 0.0, 0.0
        weights = {t: self.idf.get(t, self.max_idf) for t in tokens}
        total = sum(weights.values())
        known = [self.vocab[t] for t in tokens if t in self.vocab]
        if not known:
            return 0.0, 0.0
        best = int(np.argmax(self.index.get_scores_from_ids(known)))
        covered = sum(w for t, w in weights.items() if t in self.item_tokens[best])
        in_kb = sum(w for t, w in weights.items() if t in self.vocab)
        return covered / total, in_kb / total

    def names_in(self, text: str) -> bool:
        padded = f" {' '.join(_tokens(text))} "
        return any(f" {name} " in padded for name in self.names)


class KnowledgeCues(FeatureBlock):
    """Knowledge-base match and dialog-act cue features of a context (see the module docstring)."""

    kind = "knowledge_cues"
    NAMES: ClassVar[list[str]] = [*MATCH_NAMES, *ACT_NAMES, *CROSS_NAMES]

    def __init__(self, encoder: str = "use") -> None:
        self.encoder = encoder
        self.items: list[KnowledgeText] = []
        self._matcher: KnowledgeMatcher | None = None

    def config(self) -> JSONDict:
        return {"encoder": self.encoder}

    def set_knowledge(self, items: Sequence[KnowledgeText]) -> None:
        """Match turns against these items from now on."""
        self.items = list(items)
        self._matcher = KnowledgeMatcher(self.items, self.encoder)

    @property
    def dim(self) -> int:
        return len(self.NAMES)

    def values(self, contexts: Sequence[Context]) -> np.ndarray:
        """The dense feature matrix, columns in ``NAMES`` order."""
        out = np.zeros((len(contexts), self.dim), dtype=np.float32)
        if not contexts:
            return out
        if self._matcher is None:
            self.set_knowledge(self.items)
        matcher = self._matcher
        assert matcher is not None
        users = [view_text(c, "last_user") for c in contexts]
        previous = [_previous_user(c) for c in contexts]
        if matcher.size:
            vectors = matcher.encode(users + previous)
            q_sims = vectors @ matcher.question_vectors.T
            t_sims = vectors[: len(users)] @ matcher.text_vectors.T
        for row, context in enumerate(contexts):
            match = [0.0] * len(MATCH_NAMES)
            if matcher.size and users[row].strip():
                sims = q_sims[row]
                top = np.sort(sims)[-10:]
                coverage, in_kb = matcher.coverage(users[row])
                match = [
                    float(sims.max()),
                    float(t_sims[row].max()),
                    float(sims.max() - top.mean()),
                    float(q_sims[len(users) + row].max()) if previous[row].strip() else 0.0,
                    coverage,
                    in_kb,
                    float(matcher.names_in(users[row])),
                ]
            acts = act_cues(context)
            question = max(acts[0], acts[2])
            cross = [question * match[0], question * match[4], question * acts[11]]
            out[row] = match + acts + cross
        return out

    def transform(self, contexts: Sequence[Context]) -> sparse.csr_matrix:
        return sparse.csr_matrix(self.values(contexts))

    def state(self) -> tuple[JSONDict, dict[str, np.ndarray]]:
        return {"items": [_item_state(i) for i in self.items]}, {}

    def load_state(self, data: JSONObject, arrays: Mapping[str, np.ndarray]) -> None:
        self.items = [_item_from_state(i) for i in array(data.get("items", []), "items")]
        self._matcher = None


def _previous_user(context: Context) -> str:
    seen = 0
    for turn in reversed(context):
        if turn.speaker == Speaker.USER:
            seen += 1
            if seen == 2:
                return turn.text
    return ""


def _item_state(item: KnowledgeText) -> JSONValue:
    return item if isinstance(item, str) else item.to_dict()


def _item_from_state(data: JSONValue) -> KnowledgeText:
    return data if isinstance(data, str) else Knowledge.from_dict(mapping(data, "items"))


class ActNgrams(NgramTfidf):
    """Word n-grams over a view with content words masked: function words stay, numbers become ``<num>``, words
    the system's own turns use ``<sys>`` (with ``system_share``), words the knowledge base uses ``<kb>``, others
    ``<w>``.

    The system's words are learnt at :meth:`fit` from the training dialogs: the words found in at least
    ``system_share`` of their distinct system turns. They are what the system talks about from its database and
    its booking (address, postcode, price range, stars, leaves at, reference), so "what is the <sys> <sys>" is
    told apart from "is it <kb>" (a question only the knowledge answers). MultiWOZ-style dialogs span several
    domains, so the words of a domain the knowledge-seeking turns never cover are learnt too. 0 turns it off."""

    kind = "act_ngrams"

    def __init__(
        self,
        view: str = "last_user",
        ngram_range: Sequence[int] = (1, 3),
        min_df: int = 2,
        weight: float = 1.0,
        system_share: float = 0.0,
    ) -> None:
        super().__init__(view, "word", ngram_range, min_df=min_df)
        self.weight = weight
        self.system_share = system_share
        self.kb_words: frozenset[str] = frozenset()
        self.system_words: frozenset[str] = frozenset()

    def config(self) -> JSONDict:
        return {
            "view": self.view,
            "ngram_range": list(self.ngram_range),
            "min_df": self.min_df,
            "weight": self.weight,
            "system_share": self.system_share,
        }

    def fit(self, contexts: Sequence[Context]) -> ActNgrams:
        self.system_words = system_vocabulary(contexts, self.system_share) if self.system_share > 0 else frozenset()
        super().fit(contexts)
        return self

    def transform(self, contexts: Sequence[Context]) -> sparse.csr_matrix:
        return super().transform(contexts) * self.weight

    def set_knowledge(self, items: Sequence[KnowledgeText]) -> None:
        self.kb_words = frozenset(w for i in items for w in _tokens(item_text(i)) + _tokens(question_text(i)))

    def mask(self, text: str) -> list[str]:
        out = []
        for token in _tokens(text):
            if token in FUNCTION_WORDS:
                out.append(token)
            elif _NUMBER.search(token):
                out.append("<num>")
            elif token in self.system_words:
                out.append("<sys>")
            else:
                out.append("<kb>" if token in self.kb_words else "<w>")
        return out

    def terms(self, text: str) -> list[str]:
        units = ["<s>", *self.mask(text), "</s>"] if text.strip() else []
        low, high = self.ngram_range
        return [" ".join(units[i : i + n]) for n in range(low, high + 1) for i in range(len(units) - n + 1)]

    def state(self) -> tuple[JSONDict, dict[str, np.ndarray]]:
        data, arrays = super().state()
        return {**data, "kb_words": sorted(self.kb_words), "system_words": sorted(self.system_words)}, arrays

    def load_state(self, data: JSONObject, arrays: Mapping[str, np.ndarray]) -> None:
        super().load_state(data, arrays)
        self.kb_words = frozenset(texts(data.get("kb_words", []), "kb_words"))
        self.system_words = frozenset(texts(data.get("system_words", []), "system_words"))


def system_vocabulary(contexts: Sequence[Context], share: float) -> frozenset[str]:
    """The words found in at least ``share`` of the distinct system turns of ``contexts`` (a dialog's turns recur
    in each of its contexts, so each text counts once)."""
    turns = {t.text for c in contexts for t in c if t.speaker == Speaker.SYSTEM and t.text.strip()}
    df: Counter[str] = Counter()
    for text in turns:
        df.update(set(_tokens(text)))
    least = share * len(turns)
    return frozenset(w for w, n in df.items() if n >= least)


BLOCKS[KnowledgeCues.kind] = KnowledgeCues
BLOCKS[ActNgrams.kind] = ActNgrams
