"""The locked demo evaluation set (benchmarks/data/demo_conversations.jsonl): well formed, grounded in the demo KB."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ragdial.datasets.mobilecs2 import load_demo

SET_FILE = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "demo_conversations.jsonl"
KINDS = {
    "personal_fact",
    "product",
    "faq_paraphrase",
    "follow_up",
    "comparison",
    "not_in_knowledge",
    "account_action",
    "small_talk",
}
NO_GOLD_KINDS = {"not_in_knowledge", "small_talk"}
CONVERSATION_KEYS = {"id", "language", "profile", "split", "turns"}
TURN_KEYS = {"user", "kind", "gold", "must_contain", "must_not_contain"}


@pytest.fixture(scope="module")
def conversations() -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(SET_FILE.read_text(encoding="utf-8").splitlines(), 1):
        assert line.strip(), f"{SET_FILE}:{number}: empty line"
        rows.append(json.loads(line))
    return rows


@pytest.fixture(scope="module")
def demo() -> dict[str, Any]:
    return {language: load_demo(language) for language in ("zh", "en")}


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def test_schema(conversations: list[dict[str, Any]]) -> None:
    for conv in conversations:
        where = f"conversation {conv.get('id')!r}"
        assert set(conv) == CONVERSATION_KEYS, where
        assert conv["language"] in {"zh", "en"}, where
        assert conv["split"] in {"dev", "test"}, where
        assert conv["id"].startswith(conv["language"] + "-"), where
        assert conv["turns"], where
        for index, turn in enumerate(conv["turns"]):
            at = f"{where} turn {index}"
            assert TURN_KEYS <= set(turn) <= TURN_KEYS | {"note"}, at
            assert isinstance(turn["user"], str) and turn["user"].strip(), at
            assert turn["kind"] in KINDS, at
            for key in ("gold", "must_contain", "must_not_contain"):
                assert _strings(turn[key]), f"{at}: {key}"
            if turn["kind"] in NO_GOLD_KINDS:
                assert not turn["gold"] and not turn["must_contain"], f"{at}: {turn['kind']} has gold or must_contain"
            if turn["kind"] in {"personal_fact", "product", "faq_paraphrase", "follow_up", "comparison"}:
                assert turn["gold"] and turn["must_contain"], f"{at}: answerable turn without gold or must_contain"
            assert not set(turn["must_contain"]) & set(turn["must_not_contain"]), at


def test_gold_ids_exist_and_belong_to_the_profile(conversations: list[dict[str, Any]], demo: dict[str, Any]) -> None:
    for conv in conversations:
        dataset = demo[conv["language"]]
        assert conv["profile"] in {d.id for d in dataset.dialogs}, f"{conv['id']}: unknown profile {conv['profile']!r}"
        for index, turn in enumerate(conv["turns"]):
            for item_id in turn["gold"]:
                assert item_id in dataset.kb, f"{conv['id']} turn {index}: unknown gold id {item_id!r}"
                item = dataset.kb.get(item_id)
                assert item.is_global or item.scope == conv["profile"], (
                    f"{conv['id']} turn {index}: {item_id!r} is another user's account data"
                )


def test_must_contain_values_are_in_the_gold_items(conversations: list[dict[str, Any]], demo: dict[str, Any]) -> None:
    for conv in conversations:
        kb = demo[conv["language"]].kb
        for index, turn in enumerate(conv["turns"]):
            texts = [kb.get(item_id).text for item_id in turn["gold"]]
            if not texts:
                continue
            for value in turn["must_contain"]:
                assert any(value in text for text in texts), f"{conv['id']} turn {index}: {value!r} not in gold items"


def test_counts_and_language_balance(conversations: list[dict[str, Any]], demo: dict[str, Any]) -> None:
    turns = [turn for conv in conversations for turn in conv["turns"]]
    assert len(conversations) >= 60
    assert len(turns) >= 200
    by_language = Counter(conv["language"] for conv in conversations)
    assert by_language["zh"] == by_language["en"]
    assert {turn["kind"] for turn in turns} == KINDS
    for language in ("zh", "en"):
        profiles = {conv["profile"] for conv in conversations if conv["language"] == language}
        assert profiles == {d.id for d in demo[language].dialogs}, f"{language}: not every demo profile is covered"


def test_splits_are_disjoint_and_balanced(conversations: list[dict[str, Any]]) -> None:
    ids = [conv["id"] for conv in conversations]
    assert len(ids) == len(set(ids)), "conversation ids repeat"
    dev = {conv["id"] for conv in conversations if conv["split"] == "dev"}
    test = {conv["id"] for conv in conversations if conv["split"] == "test"}
    assert dev and test and not dev & test
    for language in ("zh", "en"):
        sizes = Counter(conv["split"] for conv in conversations if conv["language"] == language)
        assert abs(sizes["dev"] - sizes["test"]) <= 2, f"{language}: {dict(sizes)}"
        for kind in KINDS:
            kinds = Counter(
                conv["split"]
                for conv in conversations
                if conv["language"] == language
                for t in conv["turns"]
                if t["kind"] == kind
            )
            assert kinds["dev"] and kinds["test"], f"{language}/{kind} missing from a split: {dict(kinds)}"
