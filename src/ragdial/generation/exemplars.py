"""In-context exemplars: the training examples nearest to a dialog, found with BM25 over the last user turn."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import bm25s

from ragdial.generation.base import Exemplar
from ragdial.schema import Example, KnowledgeBase, Turn
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
