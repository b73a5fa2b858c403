"""The demo conversation sets over the bundled KB: the locked evaluation set (demo_conversations.jsonl), the fresh
locked test sets (demo_conversations_test2.jsonl … _test5.jsonl) and the separately written training sets are well
formed and grounded in the demo KB."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ragdial.datasets.mobilecs2 import load_demo

DATA_DIR = Path(__file__).resolve().parents[1] / "benchmarks" / "data"
SET_FILE = DATA_DIR / "demo_conversations.jsonl"
TRAIN_FILE = DATA_DIR / "demo_conversations_train.jsonl"
NEAR_MISS_FILE = DATA_DIR / "demo_near_miss_train.jsonl"  # trains the policy head only (session 6, a third hand)
TEST2_FILE = DATA_DIR / "demo_conversations_test2.jsonl"  # fresh locked test set (session 7, a fourth hand)
TEST3_FILE = DATA_DIR / "demo_conversations_test3.jsonl"  # fresh locked test set (session 8, a fifth hand)
TEST4_FILE = DATA_DIR / "demo_conversations_test4.jsonl"  # fresh locked test set (session 9, a sixth hand)
TEST5_FILE = DATA_DIR / "demo_conversations_test5.jsonl"  # fresh locked test set (session 10, a seventh hand)
# per set: the file, the splits it may use, the id prefix before the language
SETS = {
    "locked": (SET_FILE, {"dev", "test"}, ""),
    "train": (TRAIN_FILE, {"train"}, "tr-"),
    "near_miss": (NEAR_MISS_FILE, {"near_miss"}, "nm-"),
    "test2": (TEST2_FILE, {"test2"}, "t2-"),
    "test3": (TEST3_FILE, {"test3"}, "t3-"),
    "test4": (TEST4_FILE, {"test4"}, "t4-"),
    "test5": (TEST5_FILE, {"test5"}, "t5-"),
}
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


def _load(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        assert line.strip(), f"{path}:{number}: empty line"
        rows.append(json.loads(line))
    return rows


@pytest.fixture(scope="module")
def conversations() -> list[dict[str, Any]]:
    return _load(SET_FILE)


@pytest.fixture(scope="module")
def train() -> list[dict[str, Any]]:
    return _load(TRAIN_FILE)


@pytest.fixture(scope="module", params=sorted(SETS))
def any_set(request: pytest.FixtureRequest) -> tuple[list[dict[str, Any]], set[str], str]:
    path, splits, prefix = SETS[request.param]
    return _load(path), splits, prefix


@pytest.fixture(scope="module")
def demo() -> dict[str, Any]:
    return {language: load_demo(language) for language in ("zh", "en")}


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def test_schema(any_set: tuple[list[dict[str, Any]], set[str], str]) -> None:
    conversations, splits, prefix = any_set
    for conv in conversations:
        where = f"conversation {conv.get('id')!r}"
        assert set(conv) == CONVERSATION_KEYS, where
        assert conv["language"] in {"zh", "en"}, where
        assert conv["split"] in splits, where
        assert conv["id"].startswith(prefix + conv["language"] + "-"), where
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


def test_gold_ids_exist_and_belong_to_the_profile(
    any_set: tuple[list[dict[str, Any]], set[str], str], demo: dict[str, Any]
) -> None:
    for conv in any_set[0]:
        dataset = demo[conv["language"]]
        assert conv["profile"] in {d.id for d in dataset.dialogs}, f"{conv['id']}: unknown profile {conv['profile']!r}"
        for index, turn in enumerate(conv["turns"]):
            for item_id in turn["gold"]:
                assert item_id in dataset.kb, f"{conv['id']} turn {index}: unknown gold id {item_id!r}"
                item = dataset.kb.get(item_id)
                assert item.is_global or item.scope == conv["profile"], (
                    f"{conv['id']} turn {index}: {item_id!r} is another user's account data"
                )


def test_must_contain_values_are_in_the_gold_items(
    any_set: tuple[list[dict[str, Any]], set[str], str], demo: dict[str, Any]
) -> None:
    for conv in any_set[0]:
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


def _normalised(text: str) -> str:
    return " ".join(text.casefold().split())


def test_train_set_counts_and_coverage(train: list[dict[str, Any]], demo: dict[str, Any]) -> None:
    turns = [turn for conv in train for turn in conv["turns"]]
    assert len(train) >= 100
    assert len(turns) >= 400
    ids = [conv["id"] for conv in train]
    assert len(ids) == len(set(ids)), "conversation ids repeat"
    by_language = Counter(conv["language"] for conv in train)
    assert 0.55 <= by_language["zh"] / len(train) <= 0.65, dict(by_language)
    for language in ("zh", "en"):
        kinds = Counter(t["kind"] for conv in train if conv["language"] == language for t in conv["turns"])
        assert all(kinds[kind] >= 10 for kind in KINDS), f"{language}: {dict(kinds)}"
        profiles = Counter(conv["profile"] for conv in train if conv["language"] == language)
        assert set(profiles) == {d.id for d in demo[language].dialogs}, f"{language}: not every demo profile is covered"
        assert max(profiles.values()) - min(profiles.values()) <= 1, f"{language}: {dict(profiles)}"


def test_train_action_turns_name_the_claims_a_reply_must_not_make(train: list[dict[str, Any]]) -> None:
    for conv in train:
        for index, turn in enumerate(conv["turns"]):
            if turn["kind"] == "account_action":
                assert turn["must_not_contain"], f"{conv['id']} turn {index}: action turn without forbidden claims"


@pytest.mark.parametrize("training", [TRAIN_FILE, NEAR_MISS_FILE], ids=["train", "near_miss"])
def test_training_sets_share_no_utterance_with_the_locked_set(
    training: Path, conversations: list[dict[str, Any]]
) -> None:
    locked = {_normalised(turn["user"]) for conv in conversations for turn in conv["turns"]}
    shared = [
        f"{conv['id']} turn {index}"
        for conv in _load(training)
        for index, turn in enumerate(conv["turns"])
        if _normalised(turn["user"]) in locked
    ]
    assert not shared, f"training utterances repeated from the locked set: {shared}"


def test_the_near_miss_set_pairs_questions_the_knowledge_does_not_answer_with_ones_it_does() -> None:
    near = _load(NEAR_MISS_FILE)
    kinds = Counter((conv["language"], turn["kind"] == "not_in_knowledge") for conv in near for turn in conv["turns"])
    for language in ("zh", "en"):
        assert kinds[(language, True)] >= 15 and kinds[(language, False)] >= 15, dict(kinds)


# the fresh locked test sets, each written by a hand that read none of the others' turns
FRESH_TESTS = {"test2": TEST2_FILE, "test3": TEST3_FILE, "test4": TEST4_FILE, "test5": TEST5_FILE}


@pytest.fixture(scope="module", params=sorted(FRESH_TESTS))
def fresh_test(request: pytest.FixtureRequest) -> tuple[str, list[dict[str, Any]]]:
    return request.param, _load(FRESH_TESTS[request.param])


def test_fresh_test_set_counts_and_coverage(fresh_test: tuple[str, list[dict[str, Any]]], demo: dict[str, Any]) -> None:
    name, rows = fresh_test
    ids = [conv["id"] for conv in rows]
    assert len(ids) == len(set(ids)), f"{name}: conversation ids repeat"
    assert Counter(conv["language"] for conv in rows) == {"zh": 15, "en": 15}, name
    assert 120 <= sum(len(conv["turns"]) for conv in rows) <= 150, name
    for language in ("zh", "en"):
        kinds = Counter(t["kind"] for conv in rows if conv["language"] == language for t in conv["turns"])
        assert set(kinds) == KINDS, f"{name}/{language}: {dict(kinds)}"
        assert kinds["follow_up"] >= 10 and kinds["personal_fact"] >= 10, f"{name}/{language}: {dict(kinds)}"
        profiles = {conv["profile"] for conv in rows if conv["language"] == language}
        assert profiles == {d.id for d in demo[language].dialogs}, f"{name}/{language}: not every profile is covered"


def test_fresh_test_action_turns_name_the_claims_a_reply_must_not_make(
    fresh_test: tuple[str, list[dict[str, Any]]],
) -> None:
    name, rows = fresh_test
    for conv in rows:
        for index, turn in enumerate(conv["turns"]):
            if turn["kind"] == "account_action":
                where = f"{name} {conv['id']} turn {index}"
                assert turn["must_not_contain"], f"{where}: action turn without forbidden claims"


def test_fresh_test_shares_no_utterance_with_the_other_sets(fresh_test: tuple[str, list[dict[str, Any]]]) -> None:
    name, rows = fresh_test
    paths = [SET_FILE, TRAIN_FILE, NEAR_MISS_FILE] + [path for other, path in FRESH_TESTS.items() if other != name]
    others = {_normalised(turn["user"]) for path in paths for conv in _load(path) for turn in conv["turns"]}
    shared = [
        f"{conv['id']} turn {index}"
        for conv in rows
        for index, turn in enumerate(conv["turns"])
        if _normalised(turn["user"]) in others
    ]
    assert not shared, f"{name} utterances repeated from another set: {shared}"
