"""Retrieval's intermediate values on the real DSTC11 track 5 val data (shared data): the BM25 top-k by MaxScore
equals ranking every item on the whole knowledge base (10,882 items, long postings), and, for the first 300
knowledge-seeking turns, how often the tracked entities hold the gold item's entity, how many candidates entity
scoping leaves and the lexical R@1/R@5, pinned exactly. The official-score tests check only end results, which no
surviving mutant of ``ragdial.retrieval`` changed (docs/testing.md, session 7); these numbers do move."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import shared_path
from ragdial import datasets
from ragdial.retrieval.analyzer import Analyzer
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.fusion import top_k
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.retrieval.lexical import LexicalIndex

pytestmark = pytest.mark.shared_data


@pytest.fixture(scope="module")
def val(shared_data):
    return datasets.load("dstc11", shared_path(shared_data, "dstc11_track5"), "val")


def _seeking(dataset, count: int):
    return [e for e in dataset.examples if e.needs_knowledge and e.knowledge_ids][:count]


def test_bm25_top_k_by_maxscore_is_exact_on_the_real_knowledge_base(val):
    items = list(val.kb)
    index = LexicalIndex.build([item.text for item in items], Analyzer(language="en"))
    assert len(items) == 10882
    hits1 = hits5 = 0
    for example in _seeking(val, 200):
        text = example.context[-1].text
        docs, scores = index.top(index.query_terms([(text, 1.0)]), 10)
        full = index.scores(text)
        expected = [i for i in top_k(full, 10) if full[i] > 0]
        np.testing.assert_allclose(scores, full[expected], rtol=1e-5, err_msg=example.id)
        ids = [items[int(d)].id for d in docs]
        hits1 += bool(ids) and ids[0] in example.knowledge_ids
        hits5 += any(i in example.knowledge_ids for i in ids[:5])
    assert (hits1, hits5) == (6, 22)  # the last turn alone over the whole base: entity scoping is what helps


def test_entity_scoping_and_lexical_ranking_on_300_val_turns(val):
    retriever = HybridRetriever(val.kb, RetrieverConfig(encoder=None, fusion="bm25"))
    seeking = _seeking(val, 300)
    in_focus = candidates = hits1 = hits5 = 0
    for example in seeking:
        scores = retriever.score(example.context, example.dialog_id)
        entities = {val.kb.get(k).fields.get("entity") for k in example.knowledge_ids}
        in_focus += bool(entities & set(scores.focus))
        candidates += len(scores.indices)
        ids = [hit.id for hit in retriever.retrieve(example.context, example.dialog_id, k=5).ranked]
        hits1 += bool(ids) and ids[0] in example.knowledge_ids
        hits5 += any(i in example.knowledge_ids for i in ids)
    assert len(seeking) == 300
    assert (in_focus, candidates, hits1, hits5) == (295, 49984, 155, 237)
