"""Candidate scope: a dialog sees its own local items and the global ones, never another dialog's, whether or not
an entity in focus narrows the candidates (the entity-scoped path filters differently from the plain one)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.schema import Knowledge, KnowledgeBase, SourceKind, Speaker, Turn

FIXTURE = Path(__file__).parent / "fixtures" / "retrieval" / "kb.jsonl"
LOCAL = [
    # dialog-8's own booking note about Sunrise Lodge (local and entity-tagged)
    Knowledge("d8:note", "Your booking at Sunrise Lodge includes free parking.", SourceKind.USER_PROFILE,
              {"entity": "Sunrise Lodge"}, scope="dialog-8"),
    # dialog-9's note about the same hotel, and one without an entity
    Knowledge("d9:note", "Your booking at Sunrise Lodge has a parking permit.", SourceKind.USER_PROFILE,
              {"entity": "Sunrise Lodge"}, scope="dialog-9"),
    Knowledge("d9:plan", "Your parking plan allows two cars.", SourceKind.USER_PROFILE, {}, scope="dialog-9"),
]  # fmt: skip


@pytest.fixture(scope="module", params=[True, False], ids=["entity_scope", "no_entity_scope"])
def retriever(request) -> HybridRetriever:
    items = [Knowledge.from_dict(json.loads(line)) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    config = RetrieverConfig(fusion="bm25", encoder=None, entity_scope=request.param)
    return HybridRetriever(KnowledgeBase([*items, *LOCAL]), config)


def candidate_ids(retriever: HybridRetriever, context: list[Turn], dialog_id: str | None) -> set[str]:
    indices, _ = retriever.candidates(context, dialog_id)
    return {retriever.items[int(i)].id for i in indices}


ABOUT_SUNRISE = [Turn(Speaker.USER, "Is there parking at Sunrise Lodge?")]
NO_ENTITY = [Turn(Speaker.USER, "Is there parking?")]
LOCAL_IDS = {"u7:profile", "d8:note", "d9:note", "d9:plan"}


@pytest.mark.parametrize("context", [ABOUT_SUNRISE, NO_ENTITY], ids=["entity_in_focus", "no_entity"])
def test_a_dialog_sees_only_its_own_local_items(retriever, context):
    for dialog, own in [("dialog-8", {"d8:note"}), ("dialog-9", {"d9:note", "d9:plan"}), ("dialog-7", {"u7:profile"})]:
        found = candidate_ids(retriever, context, dialog)
        assert found & LOCAL_IDS == own, dialog
        ranked = {r.item.id for r in retriever.retrieve(context, dialog, k=50).ranked}
        assert ranked & LOCAL_IDS <= own, dialog
    assert candidate_ids(retriever, context, None) & LOCAL_IDS == set()  # no dialog: no local items at all


def test_entity_scope_narrows_the_global_items_only(retriever):
    found = candidate_ids(retriever, ABOUT_SUNRISE, "dialog-8")
    if retriever.config.entity_scope:
        assert {"h1:faq:1", "h1:faq:2", "h1:review:1", "d:faq:1", "d8:note"} <= found
        assert not found & {"h2:faq:1", "h2:faq:2", "kg:1", "kg:3"}  # other entities are out of scope
    else:
        assert {"h1:faq:1", "h2:faq:1", "kg:1", "d8:note"} <= found
    # the dialog's own local note is ranked with the hotel's parking FAQ
    top = [r.item.id for r in retriever.retrieve(ABOUT_SUNRISE, "dialog-8", k=2).ranked]
    assert set(top) == {"d8:note", "h1:faq:1"}
