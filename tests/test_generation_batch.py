"""Batch generation on the shared data into official files (DSTC11 labels.json), knowledge copied verbatim."""

from __future__ import annotations

import pytest

from conftest import shared_path
from ragdial import datasets
from ragdial.challenges import DSTC11, Prediction
from ragdial.datasets import dstc
from ragdial.generation.batch import generate_all
from ragdial.generation.knowledge_view import content
from ragdial.generation.template import TemplateGenerator

pytestmark = pytest.mark.shared_data


def test_dstc11_labels_with_template_responses(shared_data, tmp_path):
    root = shared_path(shared_data, "dstc11_track5")
    dataset = datasets.load("dstc11", root, "val")
    train, evaluate = dataset.examples[:1500], dataset.examples[1500:1540]
    generator = TemplateGenerator.train([e for e in train if e.needs_knowledge], dataset.kb, "en")
    assert generator.model.closers  # learned from the data
    done = generate_all(generator, dataset, evaluate)
    predictions = {e.id: Prediction.of_example(e) for e in done}
    out = DSTC11.write_track(DSTC11.track("response"), tmp_path / "labels.json", dataset, done, predictions)
    labels = dstc.read_labels(out, dataset.kb)
    assert len(labels) == len(evaluate)
    for example, label in zip(evaluate, labels, strict=True):
        assert label["target"] == example.needs_knowledge
        if example.needs_knowledge:
            first = dataset.kb.get(example.knowledge_ids[0])
            words = content(first).rstrip(".").split()
            assert " ".join(words[1:]) in label["response"]  # the top knowledge, verbatim (first word may lower)
        else:
            assert "response" not in label
