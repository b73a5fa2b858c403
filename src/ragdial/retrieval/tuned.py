"""A fine-tuned sentence encoder rescoring a trained reranker's best candidates (issue 20).

Out of domain the transfer reranker ranks an entity's review sentences by the cosines of encoders used as shipped,
which match the asked aspect ("is it quiet", "generous portions") only loosely. :class:`TunedEncoder` is
all-MiniLM-L6-v2 (the ``torch`` extra's wheel) fine-tuned as a bi-encoder on the training turns: each (last user
turn, gold item text) pair against the other pairs of its batch and the wrapped reranker's best-ranked non-gold
candidates of the same turn (a softmax over cosines, the multiple-negatives ranking loss). It keeps the shipped
model's sentence space and moves it towards "this sentence answers this question"; no feature names a word or a
domain. (A cross-encoder fine-tuned from the same weights was tried first: trained on hotels it ranked restaurant
sentences far below the shipped cosines, R@1 0.40 against 0.69, see docs/benchmarks/zero_shot.md.)

:class:`TunedReranker` wraps any trained reranker: the wrapped reranker's ``top`` best candidates get
``(1 - weight) * p + weight * q`` (``p`` its probability, ``q`` the tuned encoders' mean cosine), the rest stay
below them in the wrapped order, and a cut selects. :func:`train` cross-fits: the training dialogs (grouped by
first turn) are split in ``halves``; for each half a reranker refit on the others (``refit``) and an encoder tuned
on the others score it, and the weight and the cut are chosen on those held-out scores (:func:`choose_mix`). At
run time the encoders of all halves score together (their mean cosine).

The weight never reaches 1 (:data:`WEIGHTS`): the held-out halves share every entity with the halves the encoders
learnt from (DSTC11 hotel: all 33 hotels in both), so there the tuned cosine alone looks best (held-out F1 0.850
against 0.830 at 0.75), yet its level is the training domain's: on a new domain a cut of the cosine alone loses
recall whatever its threshold (hotel -> restaurant, dev: F1 0.492 at the chosen cut, 0.514 at the best cut read
off the target's labels), while a share of the wrapped reranker's probability, whose features are normalised per
query and per knowledge base, keeps the cut in place (0.533 at 0.75, cut chosen on the held-out halves).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict
from ragdial.retrieval import saved_meta
from ragdial.retrieval.base import ScoredKnowledge
from ragdial.retrieval.rerank import RELATIVE_CUTS, best_threshold_f1, cut_by_score
from ragdial.schema import Example, Speaker, Turn

if TYPE_CHECKING:
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.retrieval.pool import CandidateScores, KnowledgePool
    from ragdial.retrieval.rerank import RerankerModel

META_FILE = "tuned.json"
BASE_DIR = "base"
FORMAT = "ragdial-tuned-reranker"
WEIGHTS = (0.0, 0.25, 0.5, 0.75)
"""The tuned cosine's weights tried; never 1, so a share of the wrapped probability always anchors the cut."""
BELOW = 2.0  # subtracted from the wrapped scores of the candidates not rescored: below every rescored one


def _last_user(context: Sequence[Turn]) -> str:
    return next((t.text for t in reversed(context) if t.speaker == Speaker.USER), "")


class TunedEncoder:
    """A sentence encoder (mean pooling, unit length) fine-tuned so that a question's cosine to the texts that
    answer it is high; :meth:`score` gives each text's cosine to a question (clipped to [0, 1])."""

    CACHE_SIZE = 50_000
    """Texts whose vectors are kept (a knowledge base's items recur in every turn's candidates; ~1.5 kB each)."""

    def __init__(self, model: Any, tokenizer: Any, max_length: int = 64) -> None:  # Any: transformers objects
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.max_length = max_length
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()  # the service may rerank in several threads

    @classmethod
    def initial(cls, folder: str | Path | None = None, config: Any = None) -> TunedEncoder:  # Any: transformers config
        """An encoder from all-MiniLM-L6-v2's weights (``folder``: another BERT-style model folder); with a
        ``transformers`` ``config`` instead, randomly initialised weights of that shape (small test models)."""
        from transformers import AutoModel, AutoTokenizer

        from ragdial.text.encoders import minilm_folder

        source = Path(folder) if folder is not None else minilm_folder()
        tokenizer = AutoTokenizer.from_pretrained(str(source))
        model = AutoModel.from_config(config) if config is not None else AutoModel.from_pretrained(str(source))
        return cls(model, tokenizer)

    def _encode(self, texts: Sequence[str]) -> Any:  # Any: torch tensor
        import torch

        batch = self.tokenizer(
            list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        )
        hidden = self.model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=-1)

    def fit(
        self,
        pairs: Sequence[tuple[str, str]],
        labels: Sequence[float],
        epochs: int = 1,
        batch_size: int = 16,
        learning_rate: float = 5e-5,
        seed: int = 0,
        scale: float = 20.0,
    ) -> TunedEncoder:
        """Fine-tune on labelled (question, text) pairs: every positive pair is one row of a batch, its question's
        first unused negative text its hard negative; a row's other candidates are the batch's texts except those
        answering its own question (softmax over ``scale`` x cosine). Warm-up then linear decay; the word embeddings
        stay as they are."""
        import torch

        with self._lock:
            self._vectors.clear()  # the weights change
        if len(pairs) != len(labels) or not any(labels):
            raise RagdialError(f"tuning needs labelled pairs with a positive (got {len(pairs)}, {len(labels)} labels)")
        positives: dict[str, list[str]] = {}
        negatives: dict[str, list[str]] = {}
        for (question, text), label in zip(pairs, labels, strict=True):
            (positives if label > 0.5 else negatives).setdefault(question, []).append(text)
        rows: list[tuple[str, str, str | None]] = []
        for question, texts in positives.items():
            wrong = negatives.get(question, [])
            rows.extend((question, text, wrong[i % len(wrong)] if wrong else None) for i, text in enumerate(texts))
        torch.manual_seed(seed)
        self.model.get_input_embeddings().weight.requires_grad_(False)
        trainable = [p for p in self.model.parameters() if p.requires_grad]
        optimizer = torch.optim.AdamW(trainable, lr=learning_rate, weight_decay=0.01)
        steps = epochs * ((len(rows) + batch_size - 1) // batch_size)
        warm = max(1, steps // 10)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda s: min(1.0, (s + 1) / warm) * max(0.0, 1.0 - s / steps)
        )
        rng = random.Random(seed)
        self.model.train()
        for _ in range(epochs):
            rng.shuffle(rows)
            for start in range(0, len(rows), batch_size):
                chunk = rows[start : start + batch_size]
                questions = [r[0] for r in chunk]
                texts = [r[1] for r in chunk] + [r[2] for r in chunk if r[2] is not None]
                logits = scale * self._encode(questions) @ self._encode(texts).T
                answers = {q: set(positives[q]) for q in questions}
                blocked = torch.tensor(
                    [[j != i and t in answers[q] for j, t in enumerate(texts)] for i, q in enumerate(questions)]
                )
                logits = logits.masked_fill(blocked, float("-inf"))
                loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(chunk)))
                loss.backward()
                optimizer.step()
                schedule.step()
                optimizer.zero_grad()
        self.model.eval()
        with self._lock:
            self._vectors.clear()
        return self

    def vectors(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Unit vectors of ``texts`` (one row each), each text encoded once and kept (up to ``CACHE_SIZE``):
        a knowledge base's items recur in every turn's candidates."""
        import torch

        if not texts:
            return np.zeros((0, 0), np.float32)
        with self._lock, torch.inference_mode():
            missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
            if len(self._vectors) + len(missing) > self.CACHE_SIZE:
                self._vectors.clear()
            for start in range(0, len(missing), batch_size):
                chunk = missing[start : start + batch_size]
                for text, vector in zip(chunk, self._encode(chunk).numpy().astype(np.float32), strict=True):
                    self._vectors[text] = vector
            return np.stack([self._vectors[t] for t in texts])

    def score(self, question: str, texts: Sequence[str]) -> np.ndarray:
        """Each text's cosine to ``question``, clipped to [0, 1] (texts' vectors kept, see :meth:`vectors`)."""
        import torch

        if not texts:
            return np.zeros(0, np.float32)
        with torch.inference_mode():
            query = self._encode([question])[0].numpy().astype(np.float32)
        cosines = self.vectors(texts) @ query
        return np.clip(cosines, 0.0, 1.0).astype(np.float32).reshape(len(texts))

    def save(self, directory: str | Path) -> Path:
        directory = Path(directory)
        self.model.save_pretrained(str(directory))
        self.tokenizer.save_pretrained(str(directory))
        return directory

    @classmethod
    def load(cls, directory: str | Path) -> TunedEncoder:
        from transformers import AutoModel, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(str(directory))
            model = AutoModel.from_pretrained(str(directory))
        except (OSError, ValueError) as error:
            raise RagdialError(f"{directory}: not a saved tuned encoder ({error})") from None
        return cls(model, tokenizer)


@dataclass
class TunedReranker:
    """A trained reranker whose ``top`` best candidates are rescored with fine-tuned encoders."""

    base: RerankerModel
    scorers: list[TunedEncoder]
    weight: float = 0.5
    top: int = 20
    threshold: float = 0.5
    relative: float = 0.0
    max_select: int = 10
    info: JSONDict = field(default_factory=dict)

    def tuned_scores(self, question: str, texts: Sequence[str]) -> np.ndarray:
        """The tuned encoders' mean cosine of each text to ``question``."""
        return np.mean([s.score(question, texts) for s in self.scorers], axis=0) if texts else np.zeros(0)

    def predict(self, retriever: KnowledgePool, context: Sequence[Turn], scores: CandidateScores) -> np.ndarray:
        """The wrapped scores, the ``top`` best of them replaced by the mix with the tuned encoders' cosine
        and the rest moved below them (same order)."""
        final = np.asarray(self.base.predict(retriever, context, scores), dtype=np.float32).copy()
        question = _last_user(context)
        if not len(final) or not question.strip():
            return final
        rows = np.argsort(-final, kind="stable")[: self.top]
        texts = [retriever.items[int(scores.indices[r])].text or "" for r in rows]
        mixed = (1.0 - self.weight) * np.clip(final[rows], 0.0, 1.0) + self.weight * self.tuned_scores(question, texts)
        final -= BELOW
        final[rows] = mixed
        return final

    def cut(self, ranked: Sequence[ScoredKnowledge], k: int | None = None) -> list[ScoredKnowledge]:
        """The rescored items reaching ``threshold`` and ``relative`` x the best (at least one)."""
        return cut_by_score(ranked, self.threshold, self.relative, min(self.max_select, k or self.max_select))

    def save(self, directory: str | Path) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.base.save(directory / BASE_DIR)
        for index, scorer in enumerate(self.scorers):
            scorer.save(directory / f"scorer{index}")
        meta = {
            "format": FORMAT,
            "scorers": len(self.scorers),
            "weight": self.weight,
            "top": self.top,
            "threshold": self.threshold,
            "relative": self.relative,
            "max_select": self.max_select,
            "info": self.info,
        }
        saved_meta.write_meta(directory / META_FILE, meta)
        return directory

    @classmethod
    def load(cls, directory: str | Path) -> TunedReranker:
        from ragdial.retrieval.rerank import load_reranker

        directory = Path(directory)
        meta_path = directory / META_FILE
        meta = saved_meta.read_meta(meta_path, "tuned reranker file", FORMAT)
        scorer_count = saved_meta.count(meta, "scorers", meta_path, minimum=1)
        weight, threshold, relative = (
            saved_meta.number(meta, key, meta_path) for key in ("weight", "threshold", "relative")
        )
        top, max_select = (saved_meta.count(meta, k, meta_path, minimum=1) for k in ("top", "max_select"))
        scorers = [TunedEncoder.load(directory / f"scorer{i}") for i in range(scorer_count)]
        base = load_reranker(directory / BASE_DIR)
        return cls(base, scorers, weight, top, threshold, relative, max_select, saved_meta.info(meta, meta_path))


def _ranked(
    retriever: HybridRetriever, model: RerankerModel, example: Example, top: int
) -> tuple[list[str], list[str], np.ndarray]:
    """(ids, texts, probabilities) of ``model``'s ``top`` best candidates for ``example``."""
    scores = retriever.score(example.context, example.dialog_id)
    if not len(scores.indices):
        return [], [], np.zeros(0, np.float32)
    predicted = np.asarray(model.predict(retriever, example.context, scores), dtype=np.float32)
    rows = np.argsort(-predicted, kind="stable")[:top]
    items = [retriever.items[int(scores.indices[r])] for r in rows]
    return [i.id for i in items], [i.text or "" for i in items], np.clip(predicted[rows], 0.0, 1.0)


def training_pairs(
    retriever: HybridRetriever, model: RerankerModel, examples: Sequence[Example], top: int, negatives: int
) -> tuple[list[tuple[str, str]], list[float]]:
    """Every gold item of each turn (label 1) and the ``negatives`` best non-gold candidates of ``model`` among its
    ``top`` (label 0), each paired with the last user turn."""
    pairs: list[tuple[str, str]] = []
    labels: list[float] = []
    for example in examples:
        question = _last_user(example.context)
        gold = set(example.knowledge_ids)
        ids, texts, _ = _ranked(retriever, model, example, top)
        wrong = [t for i, t in zip(ids, texts, strict=True) if i not in gold][:negatives]
        for item_id in dict.fromkeys(example.knowledge_ids):
            if item_id in retriever.kb:
                pairs.append((question, retriever.kb.get(item_id).text or ""))
                labels.append(1.0)
        pairs.extend((question, t) for t in wrong)
        labels.extend(0.0 for _ in wrong)
    return pairs, labels


def choose_mix(
    probs: Sequence[np.ndarray],
    cosines: Sequence[np.ndarray],
    ids: Sequence[Sequence[str]],
    golds: Sequence[Sequence[str]],
    max_select: int = 10,
    weights: Sequence[float] = WEIGHTS,
) -> tuple[float, float, float, float]:
    """(held-out F1, weight, threshold, relative): the weight of ``weights`` and the cut (``best_threshold_f1``)
    whose mix ``(1 - weight) * p + weight * q`` of each query's wrapped probabilities ``probs`` and tuned cosines
    ``cosines`` has the best micro selection F1 (ties: the smaller weight)."""
    best: tuple[float, float, float, float] = (-1.0, 0.0, 0.5, 0.0)
    for weight in sorted(weights):
        mixed = [(1.0 - weight) * p + weight * q for p, q in zip(probs, cosines, strict=True)]
        threshold, relative, f1 = best_threshold_f1(mixed, ids, golds, max_select, RELATIVE_CUTS)
        if f1 > best[0] + 1e-9:
            best = (f1, weight, threshold, relative)
    return best


def train(
    retriever: HybridRetriever,
    examples: Sequence[Example],
    base: RerankerModel,
    refit: Callable[[Sequence[Example]], RerankerModel],
    top: int = 20,
    negatives: int = 6,
    halves: int = 2,
    epochs: int = 1,
    learning_rate: float = 5e-5,
    max_select: int = 10,
    seed: int = 0,
    new_scorer: Callable[[], TunedEncoder] = TunedEncoder.initial,
    weights: Sequence[float] = WEIGHTS,
) -> TunedReranker:
    """Wrap ``base`` with encoders fine-tuned on ``examples`` (knowledge-seeking with gold), cross-fitted over
    ``halves`` dialog-group parts (see the module docstring); ``new_scorer`` makes the untrained scorer, ``weights``
    are the tuned cosine's weights tried."""
    seeking = [e for e in examples if e.needs_knowledge and e.knowledge_ids]
    names = sorted({e.context[0].text if e.context else e.dialog_id for e in seeking})
    if len(names) < halves:
        raise RagdialError(f"tuning needs at least {halves} dialog groups with gold knowledge")
    random.Random(seed).shuffle(names)
    part_of = {name: i % halves for i, name in enumerate(names)}
    part = [part_of[e.context[0].text if e.context else e.dialog_id] for e in seeking]
    scorers: list[TunedEncoder] = []
    held_probs: list[np.ndarray] = []
    held_cross: list[np.ndarray] = []
    held_ids: list[list[str]] = []
    held_golds: list[list[str]] = []
    pair_count = 0
    for half in range(halves):
        inside = [e for e, p in zip(seeking, part, strict=True) if p != half]
        held = [e for e, p in zip(seeking, part, strict=True) if p == half]
        pairs, labels = training_pairs(retriever, base, inside, top, negatives)
        pair_count += len(pairs)
        scorer = new_scorer().fit(pairs, labels, epochs, learning_rate=learning_rate, seed=seed + half)
        scorers.append(scorer)
        model = refit(inside)
        for example in held:
            ids, texts, probs = _ranked(retriever, model, example, top)
            if not ids:
                continue
            held_ids.append(ids)
            held_probs.append(probs)
            held_cross.append(scorer.score(_last_user(example.context), texts))
            held_golds.append(list(example.knowledge_ids))
    f1, weight, threshold, relative = choose_mix(held_probs, held_cross, held_ids, held_golds, max_select, weights)
    info: JSONDict = {
        "queries": len(held_ids),
        "pairs": pair_count,
        "halves": halves,
        "negatives": negatives,
        "epochs": epochs,
        "held_out_f1": round(f1, 4),
    }
    return TunedReranker(base, scorers, weight, top, threshold, relative, max_select, info)
