"""Feature blocks: n-gram TF-IDF, sentence embeddings and knowledge-base match scores over one view of a context.

Every block is fitted on training contexts, turns contexts into a sparse matrix (rows L2-normalised or scaled to
about [0, 1]), and is saved as plain data: a JSON-serialisable ``config``/``state`` and named numpy arrays. Nothing
is pickled.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from ragdial.jsontypes import JSONDict, JSONObject
from ragdial.schema import Knowledge, Turn
from ragdial.text.tokenize import words
from ragdial.understanding.saved import mapping, number, texts
from ragdial.understanding.views import view_text

Context = Sequence[Turn]


class FeatureBlock:
    """One group of features over one view of the context."""

    kind: ClassVar[str]

    def fit(self, contexts: Sequence[Context]) -> FeatureBlock:
        return self

    def transform(self, contexts: Sequence[Context]) -> sparse.csr_matrix:
        raise NotImplementedError

    @property
    def dim(self) -> int:
        raise NotImplementedError

    def config(self) -> JSONDict:
        """Constructor arguments (JSON)."""
        raise NotImplementedError

    def state(self) -> tuple[JSONDict, dict[str, np.ndarray]]:
        """What fitting learned: JSON data and numpy arrays."""
        return {}, {}

    def load_state(self, data: JSONObject, arrays: Mapping[str, np.ndarray]) -> None:
        """Restore what :meth:`state` returned."""


class NgramTfidf(FeatureBlock):
    """Character or word n-gram TF-IDF (smooth idf, optional sublinear tf, L2-normalised rows)."""

    kind = "ngram_tfidf"

    def __init__(
        self,
        view: str = "last_user",
        analyzer: str = "char",
        ngram_range: Sequence[int] = (1, 3),
        min_df: int = 1,
        max_features: int | None = None,
        sublinear_tf: bool = True,
        window: int = 3,
        language: str | None = None,
    ) -> None:
        if analyzer not in ("char", "word"):
            raise ValueError(f"analyzer must be 'char' or 'word', not {analyzer!r}")
        self.view, self.analyzer, self.window, self.language = view, analyzer, window, language
        self.ngram_range = (int(ngram_range[0]), int(ngram_range[1]))
        self.min_df, self.max_features, self.sublinear_tf = min_df, max_features, sublinear_tf
        self.vocabulary: dict[str, int] = {}
        self.idf = np.zeros(0, dtype=np.float32)

    def config(self) -> JSONDict:
        return {
            "view": self.view,
            "analyzer": self.analyzer,
            "ngram_range": list(self.ngram_range),
            "min_df": self.min_df,
            "max_features": self.max_features,
            "sublinear_tf": self.sublinear_tf,
            "window": self.window,
            "language": self.language,
        }

    def terms(self, text: str) -> list[str]:
        """The n-grams of one text (characters of the lower-cased, space-collapsed text, or words)."""
        if self.analyzer == "char":
            units = list(" ".join(text.lower().split()))
            joiner = ""
        else:
            units = words(text, self.language) if text.strip() else []
            joiner = " "
        low, high = self.ngram_range
        grams: list[str] = []
        for n in range(low, high + 1):
            grams.extend(joiner.join(units[i : i + n]) for i in range(len(units) - n + 1))
        return grams

    def _texts(self, contexts: Sequence[Context]) -> list[str]:
        return [view_text(c, self.view, self.window) for c in contexts]

    def fit(self, contexts: Sequence[Context]) -> NgramTfidf:
        texts = self._texts(contexts)
        df: Counter[str] = Counter()
        for text in texts:
            df.update(set(self.terms(text)))
        kept = [(t, n) for t, n in df.items() if n >= self.min_df]
        if self.max_features is not None:
            kept = sorted(kept, key=lambda tn: (-tn[1], tn[0]))[: self.max_features]
        kept.sort()
        self.vocabulary = {t: i for i, (t, _) in enumerate(kept)}
        n_docs = len(texts)
        self.idf = np.array([math.log((1 + n_docs) / (1 + n)) + 1.0 for _, n in kept], dtype=np.float32)
        return self

    @property
    def dim(self) -> int:
        return len(self.vocabulary)

    def transform(self, contexts: Sequence[Context]) -> sparse.csr_matrix:
        rows, cols, vals = [], [], []
        for row, text in enumerate(self._texts(contexts)):
            counts = Counter(i for i in (self.vocabulary.get(t) for t in self.terms(text)) if i is not None)
            if not counts:
                continue
            idx = np.fromiter(counts.keys(), dtype=np.int64)
            tf = np.fromiter(counts.values(), dtype=np.float32)
            if self.sublinear_tf:
                tf = (1.0 + np.log(tf)).astype(np.float32, copy=False)
            weights = tf * self.idf[idx]
            weights /= np.linalg.norm(weights)
            rows.append(np.full(len(idx), row))
            cols.append(idx)
            vals.append(weights)
        shape = (len(contexts), self.dim)
        if not rows:
            return sparse.csr_matrix(shape, dtype=np.float32)
        return sparse.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=shape, dtype=np.float32
        )

    def state(self) -> tuple[JSONDict, dict[str, np.ndarray]]:
        terms = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
        return {"terms": terms}, {"idf": self.idf}

    def load_state(self, data: JSONObject, arrays: Mapping[str, np.ndarray]) -> None:
        self.vocabulary = {t: i for i, t in enumerate(texts(data["terms"], "terms"))}
        self.idf = arrays["idf"].astype(np.float32)
        if len(self.idf) != len(self.vocabulary):
            raise ValueError(f"{len(self.vocabulary)} terms but {len(self.idf)} idf values")


def encode(name: str, texts: list[str]) -> np.ndarray:
    """Unit vectors (zero rows for empty texts) from the ``ragdial.text.encoders`` encoder ``name``."""
    from ragdial.text.encoders import get_encoder

    return get_encoder(name).encode(texts)


class SentenceEmbedding(FeatureBlock):
    """A sentence embedding of the view, times ``weight`` (unit vectors; an empty text gives a zero row)."""

    kind = "embedding"

    def __init__(self, view: str = "last_user", encoder: str = "use", weight: float = 1.0, window: int = 3) -> None:
        self.view, self.encoder, self.weight, self.window = view, encoder, weight, window
        self._dim = 0

    def config(self) -> JSONDict:
        return {"view": self.view, "encoder": self.encoder, "weight": self.weight, "window": self.window}

    def fit(self, contexts: Sequence[Context]) -> SentenceEmbedding:
        self._dim = int(encode(self.encoder, ["a"]).shape[1])
        return self

    @property
    def dim(self) -> int:
        return self._dim

    def transform(self, contexts: Sequence[Context]) -> sparse.csr_matrix:
        if not contexts:
            return sparse.csr_matrix((0, self._dim), dtype=np.float32)
        vectors = encode(self.encoder, [view_text(c, self.view, self.window) for c in contexts])
        return sparse.csr_matrix(vectors * self.weight, dtype=np.float32)

    def state(self) -> tuple[JSONDict, dict[str, np.ndarray]]:
        return {"dim": self._dim}, {}

    def load_state(self, data: JSONObject, arrays: Mapping[str, np.ndarray]) -> None:
        self._dim = int(number(data["dim"], "dim"))


class KnowledgeMatch(FeatureBlock):
    """How well the best knowledge item matches the view: BM25 (bm25s over ``ragdial.text`` words) of the view
    against every item; features are log(1 + max), log(1 + mean of the top 3), and the share of the view's words
    found in the knowledge vocabulary, each divided by its largest value in training.

    The knowledge texts are part of the saved model; :meth:`set_knowledge` swaps in another knowledge base.
    """

    kind = "knowledge_match"
    N_FEATURES = 3

    def __init__(self, view: str = "last_user", window: int = 3, language: str | None = None) -> None:
        self.view, self.window, self.language = view, window, language
        self.texts: list[str] = []
        self.scale = np.ones(self.N_FEATURES, dtype=np.float32)
        self._index: Any = None  # Any: bm25s
        self._vocab: dict[str, int] = {}

    def config(self) -> JSONDict:
        return {"view": self.view, "window": self.window, "language": self.language}

    def _tokens(self, text: str) -> list[str]:
        return words(text, self.language, stem=True, drop_stopwords=True) if text.strip() else []

    def set_knowledge(self, texts: Sequence[str]) -> None:
        """Index these knowledge texts (an empty list gives zero features)."""
        import bm25s
        from bm25s.tokenization import Tokenized

        self.texts = list(texts)
        self._vocab = {}
        ids = [[self._vocab.setdefault(t, len(self._vocab)) for t in self._tokens(text)] for text in self.texts]
        self._index = None
        if self.texts and self._vocab:
            self._index = bm25s.BM25()
            self._index.index(Tokenized(ids=ids, vocab=self._vocab), show_progress=False)

    def _raw(self, contexts: Sequence[Context]) -> np.ndarray:
        out = np.zeros((len(contexts), self.N_FEATURES), dtype=np.float32)
        for row, context in enumerate(contexts):
            tokens = self._tokens(view_text(context, self.view, self.window))
            ids = [self._vocab[t] for t in tokens if t in self._vocab]
            if not ids or self._index is None:
                continue
            scores = self._index.get_scores_from_ids(ids)
            top = np.partition(scores, -3)[-3:] if len(scores) >= 3 else scores
            out[row] = (math.log1p(float(scores.max())), math.log1p(float(top.mean())), len(ids) / len(tokens))
        return out

    def fit(self, contexts: Sequence[Context]) -> KnowledgeMatch:
        if self._index is None and self.texts:
            self.set_knowledge(self.texts)
        raw = self._raw(contexts)
        peak = raw.max(axis=0) if len(raw) else np.ones(self.N_FEATURES)
        self.scale = np.where(peak > 0, peak, 1.0).astype(np.float32)
        return self

    @property
    def dim(self) -> int:
        return self.N_FEATURES

    def transform(self, contexts: Sequence[Context]) -> sparse.csr_matrix:
        return sparse.csr_matrix(self._raw(contexts) / self.scale, dtype=np.float32)

    def state(self) -> tuple[JSONDict, dict[str, np.ndarray]]:
        return {"texts": self.texts}, {"scale": self.scale}

    def load_state(self, data: JSONObject, arrays: Mapping[str, np.ndarray]) -> None:
        self.scale = arrays["scale"].astype(np.float32)
        self.set_knowledge(texts(data["texts"], "texts"))


class SourceMatch(FeatureBlock):
    """Which knowledge source the view matches best — routing features for api_query: one :class:`KnowledgeMatch`
    per source (products, FAQ, user-profile items, in :attr:`SOURCES` order; items of other sources are ignored),
    its three features each, plus a one-hot of the source whose scaled BM25 maximum is highest (none when nothing
    matches).

    :meth:`set_knowledge` takes ``Knowledge`` items (their ``source`` decides the group) or ``(source, text)`` pairs.
    """

    kind = "source_match"
    SOURCES = ("product", "faq", "user_profile")

    def __init__(self, view: str = "last_user", window: int = 3, language: str | None = None) -> None:
        self.view, self.window, self.language = view, window, language
        self.matches = {source: KnowledgeMatch(view, window, language) for source in self.SOURCES}

    def config(self) -> JSONDict:
        return {"view": self.view, "window": self.window, "language": self.language}

    def set_knowledge(self, items: Sequence[Knowledge | tuple[str, str]]) -> None:
        groups: dict[str, list[str]] = {source: [] for source in self.SOURCES}
        for item in items:
            source, text = item if isinstance(item, tuple) else (str(getattr(item, "source", "")), item.text)
            if source in groups:
                groups[source].append(text)
        for source, match in self.matches.items():
            match.set_knowledge(groups[source])

    def fit(self, contexts: Sequence[Context]) -> SourceMatch:
        for match in self.matches.values():
            match.fit(contexts)
        return self

    @property
    def dim(self) -> int:
        return len(self.SOURCES) * (KnowledgeMatch.N_FEATURES + 1)

    def transform(self, contexts: Sequence[Context]) -> sparse.csr_matrix:
        parts = [match.transform(contexts).toarray() for match in self.matches.values()]
        best = np.stack([part[:, 0] for part in parts], axis=1)  # each source's max, scaled by its training peak
        onehot = np.zeros_like(best)
        hit = best.max(axis=1) > 0
        onehot[np.flatnonzero(hit), best.argmax(axis=1)[hit]] = 1.0
        return sparse.csr_matrix(np.hstack([*parts, onehot]), dtype=np.float32)

    def state(self) -> tuple[JSONDict, dict[str, np.ndarray]]:
        data = {source: match.texts for source, match in self.matches.items()}
        arrays = {f"scale_{source}": match.scale for source, match in self.matches.items()}
        return {"texts": data}, arrays

    def load_state(self, data: JSONObject, arrays: Mapping[str, np.ndarray]) -> None:
        groups = mapping(data["texts"], "texts")
        for source, match in self.matches.items():
            match.load_state({"texts": groups.get(source, [])}, {"scale": arrays[f"scale_{source}"]})


BLOCKS: dict[str, type[FeatureBlock]] = {
    b.kind: b for b in (NgramTfidf, SentenceEmbedding, KnowledgeMatch, SourceMatch)
}


def make_block(kind: str, config: Mapping[str, object]) -> FeatureBlock:
    """A block from its kind and config (as saved; the block's constructor checks the arguments)."""
    try:
        make: Callable[..., FeatureBlock] = BLOCKS[kind]
    except KeyError:
        raise ValueError(f"unknown feature block {kind!r}; known: {', '.join(BLOCKS)}") from None
    return make(**config)
