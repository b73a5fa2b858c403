"""The three understanding tasks as configurations of :class:`TextClassifier`, and their training data.

- ``intent``: one label per utterance (SMP2017-ECDT task 1: chit-chat vs 30 domains).
- ``detector``: does the next system turn need knowledge (DSTC9/11 task 1; KdConv/Huawei: does it use a triple)?
- ``api_query``: which look-ups the agent makes at a turn (MobileCS2): none, ``[QA]``, user/product/other
  information, handle, cancel, verify; several joined by ``，``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragdial.errors import RagdialError
from ragdial.schema import Dataset, Knowledge, Turn
from ragdial.text.tokenize import detect_language
from ragdial.understanding.features import (
    FeatureBlock,
    KnowledgeMatch,
    NgramTfidf,
    SentenceEmbedding,
    SourceMatch,
)
from ragdial.understanding.knowledge_cues import ActNgrams, KnowledgeCues
from ragdial.understanding.linear import LabelPrediction, LinearHead, Target
from ragdial.understanding.model import TextClassifier

TASKS = ("intent", "detector", "api_query")
API_QUERY_SEPARATOR = "，"
_API_SPLIT = re.compile(r"\s*[，,]\s*")


def parse_api_query(value: str | None) -> list[str]:
    """The labels of an ``api_query`` string (``""`` or None: no look-up, an empty list)."""
    return [part for part in _API_SPLIT.split((value or "").strip()) if part]


def format_api_query(labels: Sequence[str]) -> str:
    """Labels back into the MobileCS2 ``api_query`` string."""
    return API_QUERY_SEPARATOR.join(labels)


def embedding_blocks(embedding: str | None, weight: float = 1.0) -> list[FeatureBlock]:
    """One sentence-embedding block of the last user turn per encoder in ``embedding`` (names joined by ``+``)."""
    names = [name.strip() for name in (embedding or "").split("+") if name.strip()]
    return [SentenceEmbedding("last_user", name, weight=weight) for name in names]


def intent_classifier(
    embedding: str | None = "use+e5",
    c: float = 30.0,
    embedding_weight: float = 2.0,
    class_weight: str | None = "balanced",
    max_word_n: int = 3,
) -> TextClassifier:
    """Character 1-3-grams + word 1-``max_word_n``-grams (+ sentence embeddings) of the utterance, multinomial
    logistic.

    ``embedding`` names one encoder or several joined by ``+`` (one block each, every vector times
    ``embedding_weight``); None: n-grams only. The defaults (word 1-3-grams, USE + multilingual-e5-small, weight 2,
    class-balanced weights, C=30) are what 5-fold cross-validation on SMP2017-ECDT `train` picked
    (docs/benchmarks/understanding.md).
    """
    blocks: list[FeatureBlock] = [
        NgramTfidf("last_user", "char", (1, 3)),
        NgramTfidf("last_user", "word", (1, max_word_n)),
    ]
    blocks.extend(embedding_blocks(embedding, embedding_weight))
    head = LinearHead("multiclass", "logistic", c=c, class_weight=class_weight)
    return TextClassifier("intent", blocks, head)


def turn_detector(
    knowledge: Sequence[str] | None = None,
    embedding: str | None = "use",
    c: float = 10.0,
    window: int = 2,
    threshold: float = 0.5,
) -> TextClassifier:
    """Word 1-2-grams and character 2-4-grams of the last user turn, word n-grams of the turns before it, a
    sentence embedding of the last user turn, and (when ``knowledge`` texts are given) how well the best knowledge
    item matches the last user turn. A turn is knowledge-seeking when P(seeking) >= ``threshold``."""
    blocks: list[FeatureBlock] = [
        NgramTfidf("last_user", "word", (1, 2)),
        NgramTfidf("last_user", "char", (2, 4), min_df=2),
        NgramTfidf("history", "word", (1, 2), min_df=2, window=window),
    ]
    blocks.extend(embedding_blocks(embedding))
    if knowledge is not None:
        match = KnowledgeMatch("last_user")
        match.set_knowledge(knowledge)
        blocks.append(match)
    return TextClassifier("detector", blocks, LinearHead("binary", "logistic", c=c, threshold=threshold))


ZERO_SHOT_DEFAULTS = {"en": (4.0, 0.002), "zh": (1.0, 0.0)}
"""The zero-shot detector's (C, system_share) per training-KB language."""


def _item_text(item: str | Knowledge) -> str:
    return item if isinstance(item, str) else item.text


def zero_shot_detector(
    knowledge: Sequence[str | Knowledge] = (),
    encoder: str = "use",
    c: float | None = None,
    threshold: float = 0.5,
    ngrams: bool = True,
    embedding: str | None = None,
    ngram_weight: float = 1.0,
    ngram_views: Sequence[str] = ("last_user",),
    system_share: float | None = None,
) -> TextClassifier:
    """A knowledge-conditioned detector that carries to domains never trained on: how well the turn matches the
    knowledge base and dialog-act cues (:class:`KnowledgeCues`), plus masked word n-grams of the last user and
    system turns (:class:`ActNgrams`, content words masked as ``<sys>`` when the training dialogs' system turns use
    them, in at least ``system_share`` of them); no feature reads a content word (unless ``embedding`` adds a
    sentence embedding of the last user turn). Call ``set_knowledge`` with the
    deployment KB before predicting on another domain.

    Unset ``c`` / ``system_share`` follow the training KB's language (:data:`ZERO_SHOT_DEFAULTS`, as measured in
    docs/benchmarks/zero_shot.md): English 4 / 0.002, chosen on DSTC11 leave-one-domain-out (val), whose
    MultiWOZ-style system turns talk about a database; Chinese 1 / 0 (no ``<sys>`` mask), which detected better on
    KdConv cross-domain."""
    language = detect_language(" ".join(_item_text(i) for i in list(knowledge)[:200])) if knowledge else "en"
    default_c, default_share = ZERO_SHOT_DEFAULTS[language]
    c = default_c if c is None else c
    system_share = default_share if system_share is None else system_share
    cues = KnowledgeCues(encoder)
    cues.set_knowledge(knowledge)
    blocks: list[FeatureBlock] = [cues]
    if ngrams:
        for view in ngram_views:
            masked = ActNgrams(view, weight=ngram_weight, system_share=system_share)
            masked.set_knowledge(knowledge)
            blocks.append(masked)
    blocks.extend(embedding_blocks(embedding))
    return TextClassifier("detector", blocks, LinearHead("binary", "logistic", c=c, threshold=threshold))


def api_query_classifier(
    c: float = 10.0,
    knowledge: Sequence[Knowledge] | None = None,
    class_weight: str | None = "balanced",
    tune_thresholds: bool = False,
) -> TextClassifier:
    """Character 1-3-grams and word 1-2-grams of the last user turn and words of the turns before it; one
    logistic model per look-up label, class-balanced (rare labels such as 查询用户已办理的业务 are not drowned by
    "no look-up"); "no look-up" wins only when it is the most confident choice. With ``knowledge`` (a KB's items),
    routing features: how well the last user turn matches the products, the FAQ and the user-profile items
    (:class:`SourceMatch`). ``tune_thresholds`` picks one threshold per label by out-of-fold F1 (off by default:
    on our small fixtures it over-predicts; see docs/benchmarks.md). ``class_weight=None`` and no knowledge is the
    earlier model."""
    blocks: list[FeatureBlock] = [
        NgramTfidf("last_user", "char", (1, 3)),
        NgramTfidf("last_user", "word", (1, 2)),
        NgramTfidf("history", "word", (1, 1), window=2),
    ]
    if knowledge is not None:
        match = SourceMatch("last_user")
        match.set_knowledge(list(knowledge))
        blocks.append(match)
    head = LinearHead(
        "multilabel", "logistic", c=c, class_weight=class_weight, empty_label="", tune_thresholds=tune_thresholds
    )
    return TextClassifier("api_query", blocks, head)


def training_data(task: str, dataset: Dataset) -> tuple[list[list[Turn]], list[Target]]:
    """(contexts, targets) of the labelled examples of ``dataset`` for ``task``."""
    if task not in TASKS:
        raise RagdialError(f"unknown task {task!r}; known: {', '.join(TASKS)}")
    contexts: list[list[Turn]] = []
    targets: list[Target] = []
    for example in dataset.examples:
        target: Target | None
        if task == "intent":
            target = example.intent
        elif task == "detector":
            target = example.needs_knowledge
        else:
            target = None if example.api_query is None else parse_api_query(example.api_query)
        if target is None:
            continue
        contexts.append(example.context)
        targets.append(target)
    if not contexts:
        raise RagdialError(f"{dataset.source_path or dataset.format}: no examples labelled for task {task!r}")
    return contexts, targets


def new_classifier(
    task: str,
    dataset: Dataset,
    embedding: str | None = "default",
    use_knowledge: bool = True,
    threshold: float = 0.5,
) -> TextClassifier:
    """The default classifier for ``task``; the detector matches against ``dataset``'s knowledge base and fires at
    P(seeking) >= ``threshold``. ``embedding`` ``"default"``: the task's own default (intent: ``use+e5``,
    detector: ``use``)."""
    if task == "intent":
        return intent_classifier() if embedding == "default" else intent_classifier(embedding)
    if embedding == "default":
        embedding = "use"
    if task == "detector":
        knowledge = [item.text for item in dataset.kb] if use_knowledge and len(dataset.kb) else None
        return turn_detector(knowledge, embedding, threshold=threshold)
    if task == "api_query":
        return api_query_classifier(knowledge=list(dataset.kb) if use_knowledge and len(dataset.kb) else None)
    raise RagdialError(f"unknown task {task!r}; known: {', '.join(TASKS)}")


def api_query_labels(prediction: LabelPrediction) -> list[str]:
    """The labels of an ``api_query`` model's prediction (a list of labels)."""
    if not isinstance(prediction, list):
        raise TypeError(f"not an api_query prediction (a list of labels): {prediction!r}")
    return [str(label) for label in prediction]


def display(task: str, prediction: LabelPrediction) -> str:
    """A prediction as text: the label, ``true``/``false``, or the ``api_query`` string."""
    if task == "detector":
        return "true" if prediction else "false"
    if task == "api_query":
        return format_api_query(api_query_labels(prediction))
    return str(prediction)
