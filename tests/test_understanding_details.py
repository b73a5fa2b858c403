"""Understanding details no other test pins, on small hand-written inputs: the message for an unknown feature
block, the sentence embedding's default weight, a multilabel head's rows after one without evidence, and a saved
model's version and metadata errors. Written from the survivors of the session-6 understanding mutation sample
(docs/testing.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import sparse

from ragdial.schema import Speaker, Turn
from ragdial.understanding.features import BLOCKS, NgramTfidf, SentenceEmbedding, make_block
from ragdial.understanding.linear import LinearHead
from ragdial.understanding.model import ModelFormatError, TextClassifier


def test_an_unknown_feature_block_names_the_known_ones():
    with pytest.raises(ValueError, match=f"unknown feature block 'bogus'; known: {', '.join(BLOCKS)}$"):
        make_block("bogus", {})


def test_the_sentence_embedding_weighs_one_by_default():
    assert SentenceEmbedding().config() == {"view": "last_user", "encoder": "use", "weight": 1.0, "window": 3}


def test_a_multilabel_head_labels_every_row_after_one_without_evidence():
    head = LinearHead("multilabel")
    head.classes = ["A", "B"]
    head.weights = np.array([[2.0, -2.0], [-2.0, 2.0]], dtype=np.float32)
    head.bias = np.zeros(2, dtype=np.float32)
    rows = sparse.csr_matrix(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))  # the first row has no feature
    assert head.predict(rows) == [[], ["A"], ["B"]]


@pytest.fixture
def saved(tmp_path):
    model = TextClassifier("intent", [NgramTfidf(analyzer="word", ngram_range=(1, 1))], LinearHead("multiclass"))
    texts = ["book a hotel", "hotel room please", "check my balance", "balance left"]
    model.fit([[Turn(Speaker.USER, t)] for t in texts], ["hotel", "hotel", "balance", "balance"])
    model.save(tmp_path / "model")
    return tmp_path / "model"


def _edit(folder, **changes):
    path = folder / "model.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document.update(changes)
    path.write_text(json.dumps(document), encoding="utf-8")


def test_a_saved_model_of_another_version_names_the_version(saved):
    _edit(saved, version=99)
    with pytest.raises(ModelFormatError, match=r"unsupported version 99$"):
        TextClassifier.load(saved)


def test_saved_metadata_that_is_not_an_object_is_named(saved):
    _edit(saved, meta=[1, 2])
    with pytest.raises(ModelFormatError, match="meta: expected an object, found list"):
        TextClassifier.load(saved)
