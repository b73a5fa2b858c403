"""Understanding details from the survivors of the fresh seed-30 sample (docs/testing.md, session 9), on small
hand-written inputs: a saved knowledge-cue block keeps its knowledge, a saved embedding block's bad dimension is
named, and saving a model over an earlier one leaves no backup folder behind."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragdial.schema import Knowledge, SourceKind, Speaker, Turn
from ragdial.understanding import ModelFormatError, TextClassifier, intent_classifier
from ragdial.understanding.knowledge_cues import KnowledgeCues

TEXTS = ["what's the weather in paris", "will it rain tomorrow", "play some jazz", "put on a song by adele"]
LABELS = ["weather", "weather", "music", "music"]


def test_a_knowledge_cue_block_read_back_from_its_state_matches_the_same_knowledge():
    cues = KnowledgeCues("hash")
    question = "Is breakfast included?"
    cues.set_knowledge([Knowledge("b", f"{question} Yes, from seven.", SourceKind.FAQ, {"title": question})])
    data, arrays = cues.state()
    again = KnowledgeCues("hash")
    again.load_state(json.loads(json.dumps(data)), arrays)  # as written to and read from model.json
    contexts = [[Turn(Speaker.USER, "Is breakfast included?")], [Turn(Speaker.USER, "hello there")]]
    before, after = cues.values(contexts), again.values(contexts)
    best = KnowledgeCues.NAMES.index("question_cos_max")
    assert before[0, best] == pytest.approx(1.0, abs=1e-5)  # the KB's question word for word
    assert np.allclose(after, before)


def test_a_saved_embedding_block_with_a_dimension_that_is_not_a_number_is_named(tmp_path):
    folder = intent_classifier(embedding="hash").fit(TEXTS, LABELS).save(tmp_path / "m")
    document = json.loads((folder / "model.json").read_text(encoding="utf-8"))
    (block,) = [b for b in document["blocks"] if b["kind"] == "embedding"]
    block["state"]["dim"] = [256]
    (folder / "model.json").write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ModelFormatError, match=r"inconsistent model \(TypeError: dim: expected a number, found list"):
        TextClassifier.load(folder)


def test_saving_over_an_earlier_model_leaves_only_the_new_one(tmp_path):
    first = intent_classifier(embedding=None).fit(TEXTS, LABELS)
    second = intent_classifier(embedding=None).fit(TEXTS[::-1], LABELS[::-1])
    first.save(tmp_path / "m")
    second.save(tmp_path / "m")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]  # no backup or staging folder left beside it
    assert TextClassifier.load(tmp_path / "m").predict(["will it rain in paris"]) == ["weather"]
