"""In-context exemplars: the training examples nearest to a dialog, found with BM25 over the last user turn.

``Exemplars`` (an index and how many to show) is what the knowledge branch of every ``DialogSystem`` and batch
generation (``ragdial generate batch --exemplars-from``) attach to a ``GenerationRequest``; a system config names it
as ``exemplars: {name: dataset, format: F, path: P, split: S, k: 2}`` (``EXEMPLARS``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import bm25s

from ragdial.components import BuildContext, Registry
from ragdial.generation.base import Exemplar
from ragdial.schema import Dataset, Example, KnowledgeBase, Turn
from ragdial.text.tokenize import words


class ExemplarIndex:
    """BM25 (bm25s) over training examples' last user turns; returns their context tail, knowledge and reply."""

    def __init__(self, examples: Iterable[Example], kb: KnowledgeBase, language: str, context_turns: int = 2) -> None:
        self.language = language
        self.context_turns = context_turns
        self.examples = [e for e in examples if e.response and e.context]
        self.kb = kb
        corpus = [self._tokens(e.last_user_text) or ["<empty>"] for e in self.examples]
        self._bm25 = bm25s.BM25()
        if corpus:
            self._bm25.index(corpus, show_progress=False)

    def _tokens(self, text: str) -> list[str]:
        return words(text, self.language, stem=self.language == "en", drop_stopwords=self.language == "en")

    def nearest(self, context: Sequence[Turn], k: int = 2, exclude_dialog: str | None = None) -> list[Exemplar]:
        """The ``k`` nearest exemplars to ``context`` (never from dialog ``exclude_dialog``)."""
        query = next((t.text for t in reversed(context) if t.speaker.value == "user"), "")
        tokens = self._tokens(query)
        if not self.examples or not tokens or k <= 0:
            return []
        wanted = min(len(self.examples), k * 4)
        ids, scores = self._bm25.retrieve([tokens], k=wanted, show_progress=False, n_threads=1)
        chosen = []
        for index, score in zip(ids[0], scores[0], strict=True):
            example = self.examples[int(index)]
            if score <= 0 or example.dialog_id == exclude_dialog:
                continue
            knowledge = [self.kb.get(i) for i in example.knowledge_ids if i in self.kb]
            chosen.append(Exemplar(example.context[-self.context_turns :], knowledge, example.response or ""))
            if len(chosen) == k:
                break
        return chosen


@dataclass(frozen=True)
class Exemplars:
    """The exemplars a request gets: the ``k`` nearest of ``index`` to its dialog (never from the dialog itself)."""

    index: ExemplarIndex
    k: int = 2

    @classmethod
    def of(cls, dataset: Dataset, k: int = 2, context_turns: int = 2) -> Exemplars:
        """Exemplars from the labelled examples (with replies) of ``dataset``."""
        return cls(ExemplarIndex(dataset.examples, dataset.kb, dataset.language, context_turns), k)

    def for_context(self, context: Sequence[Turn], dialog_id: str | None = None) -> list[Exemplar]:
        return self.index.nearest(context, self.k, exclude_dialog=dialog_id)

    def warm_up(self) -> None:
        return None

    def close(self) -> None:
        return None

    def to_config(self) -> dict[str, object]:
        return {"name": f"{type(self).__module__}:{type(self).__name__}", "k": self.k}


EXEMPLARS: Registry[Exemplars] = Registry("exemplar source")


def dataset_exemplars(
    ctx: BuildContext, format: str, path: str, split: str | None = None, k: int = 2, context_turns: int = 2
) -> Exemplars:
    """Exemplars from a labelled dataset file ragdial reads (``ragdial.datasets.load``), e.g. a training split."""
    from ragdial import datasets

    return Exemplars.of(datasets.load(format, path, split), k, context_turns)


EXEMPLARS.register("dataset", dataset_exemplars, "a labelled dataset: {name: dataset, format: F, path: P, k: 2}")
