"""A saved index served from disk: BM25 written chunk by chunk (the same arrays as ``bm25s``), the items read by
offset, the per-item columns and the entity tracker saved, and the same rankings as the retriever built in memory.

The knowledge is our fixture (tests/fixtures/retrieval/kb.jsonl) plus local items and seeded filler written here;
it checks that the parts fit and give what the in-memory path gives, not retrieval quality.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from ragdial.errors import RagdialError
from ragdial.retrieval.analyzer import Analyzer
from ragdial.retrieval.base import KnowledgeFilter
from ragdial.retrieval.bm25_writer import BM25Writer
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.entities import EntityTracker
from ragdial.retrieval.hybrid import HybridRetriever
from ragdial.retrieval.index import load_index, save_index, write_index
from ragdial.retrieval.lexical import LexicalIndex
from ragdial.retrieval.store import OFFSETS, ItemStore
from ragdial.schema import Knowledge, KnowledgeBase, SourceKind, Speaker, Turn, UnknownKnowledgeError

FIXTURE = Path(__file__).parent / "fixtures" / "retrieval" / "kb.jsonl"
WORDS = ["quiet", "room", "garden", "view", "late", "checkout", "breakfast", "shuttle", "parking", "wifi", "sauna"]


def knowledge() -> list[Knowledge]:
    items = [Knowledge.from_dict(json.loads(line)) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    rng = random.Random(3)
    for i in range(400):  # filler about made-up places, some without an entity, some reviews
        words = " ".join(rng.choices(WORDS, k=rng.randint(3, 12)))
        fields = {"entity": f"Corner Place {i % 37}"} if i % 5 else {}
        source = SourceKind.REVIEW if i % 3 == 0 else SourceKind.FAQ
        items.append(Knowledge(f"filler:{i}", f"{words} at corner place {i % 37}", source, fields))
    items.append(Knowledge("blank:1", "", SourceKind.FAQ))
    for dialog in ("d1", "d2"):  # a user's own items, seen only in their dialog
        items.append(
            Knowledge(
                f"{dialog}:plan",
                f"Your plan {dialog} has 20 GB of data and free parking",
                SourceKind.USER_PROFILE,
                scope=dialog,
            )
        )
    return items


CONTEXTS = [
    [Turn(Speaker.USER, "is parking available at sunrise lodge?")],
    [Turn(Speaker.USER, "what does the breakfast cost")],
    [
        Turn(Speaker.USER, "sunrise lodge please"),
        Turn(Speaker.SYSTEM, "sure"),
        Turn(Speaker.USER, "do they allow pets"),
    ],
    [Turn(Speaker.USER, "is there a sauna at corner place 12")],
    [Turn(Speaker.USER, "how much data does my plan have")],
]


def answers(retriever: HybridRetriever) -> list[list[tuple[str, float]]]:
    out = []
    for context in CONTEXTS:
        for scope, filter in ((None, None), ("d1", None), (None, KnowledgeFilter(sources=(SourceKind.REVIEW,)))):
            ranked = retriever.retrieve(context, scope, k=8, filter=filter).ranked
            out.append([(r.item.id, round(r.score, 6)) for r in ranked])
    return out


def test_bm25_written_in_chunks_is_what_bm25s_writes_to_the_bit(tmp_path):
    analyzer = Analyzer(language="en")
    texts = [item.text for item in knowledge()]
    import bm25s
    from bm25s.tokenization import Tokenized

    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(token, len(vocab)) for token in analyzer(text)] for text in texts]
    reference_model = bm25s.BM25(method="lucene")  # bm25s given the same token ids, all in memory
    reference_model.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
    reference_model.save(str(tmp_path / "bm25s"))
    model = LexicalIndex.build(texts, analyzer)  # bm25s from the texts' tokens (its own vocabulary order)
    for chunk in (1, 7, 10_000):
        writer = BM25Writer(tmp_path / f"chunked{chunk}", chunk=chunk)
        for text in texts:
            writer.add(analyzer(text))
        assert writer.finish() == len(texts)
        for reference in (tmp_path / "bm25s").iterdir():
            written = tmp_path / f"chunked{chunk}" / reference.name
            if reference.suffix == ".npy":
                a, b = np.load(reference), np.load(written)
                assert a.dtype == b.dtype and np.array_equal(a, b), reference.name
            else:
                assert json.loads(reference.read_text()) == json.loads(written.read_text()), reference.name
        assert not (tmp_path / f"chunked{chunk}.parts").exists()  # the part files are gone
    loaded = LexicalIndex.load(tmp_path / "chunked7", analyzer, len(texts))
    for query in ("parking sunrise lodge", "breakfast", "nothing matches this"):
        assert np.array_equal(loaded.scores(query), model.scores(query))
    assert BM25Writer(tmp_path / "none").finish() == 0 and not (tmp_path / "none").exists()


def test_a_saved_index_reads_no_item_at_start_and_ranks_as_in_memory(tmp_path, monkeypatch):
    items = knowledge()
    config = RetrieverConfig(encoder="hash")
    built = HybridRetriever(KnowledgeBase(items), config)
    expected = answers(built)
    assert any(ids for ids in expected) and any(i == "d1:plan" for ids in expected for i, _ in ids)
    save_index(built, tmp_path / "saved")
    write_index(iter(items), tmp_path / "streamed", config)
    for name in ("saved", "streamed"):
        parsed: list[object] = []
        with monkeypatch.context() as patch:
            patch.setattr(Knowledge, "from_dict", parsed.append)
            loaded = load_index(tmp_path / name)
        assert parsed == []  # no item was read to load it
        assert isinstance(loaded.items, ItemStore) and isinstance(loaded.kb, ItemStore)
        assert loaded.tracker.to_dict() == built.tracker.to_dict()
        assert answers(loaded) == expected, name
        assert loaded.kb.get("h1:faq:2") == items[1] and "d2:plan" in loaded.kb and "nope" not in loaded.kb
    # an index written before the item store (no offsets, columns or tracker saved) still loads, into memory
    for extra in (OFFSETS, "columns.json", "entities.json"):
        (tmp_path / "saved" / extra).unlink()
    old = load_index(tmp_path / "saved")
    assert isinstance(old.kb, KnowledgeBase) and answers(old) == expected


def test_the_item_store_reads_items_by_position_and_id(tmp_path):
    items = knowledge()
    write_index(items, tmp_path / "idx", RetrieverConfig(encoder=None, fusion="bm25"))
    store = ItemStore(tmp_path / "idx")
    assert len(store) == len(items) and list(store) == items
    assert store[0] == items[0] and store[-1] == items[-1] and store[3:6] == items[3:6]
    assert store.get("filler:7") == items[18] and store.position("filler:7") == 18
    with pytest.raises(IndexError):
        store[len(items)]
    with pytest.raises(UnknownKnowledgeError, match="nope"):
        store.get("nope")
    with open(tmp_path / "idx" / "items.jsonl", "a", encoding="utf-8") as handle:
        handle.write("{}\n")  # items.jsonl changed after the offsets were written
    with pytest.raises(RagdialError, match=r"items\.offsets\.npy does not match"):
        ItemStore(tmp_path / "idx")


def test_the_entity_tracker_saved_finds_what_it_found(tmp_path):
    items = knowledge()
    tracker = EntityTracker(items)
    tracker.save(tmp_path / "entities.json")
    again = EntityTracker.load(tmp_path / "entities.json")
    for text in ("parking at sunrise lodge?", "sunrize lodge pets", "corner place 12 or corner place 3", "sunrise"):
        assert again.find(text) == tracker.find(text)
    assert tracker.find("sunrize lodge pets") == ["Sunrise Lodge"]  # the typing error is forgiven in both
    assert len(again) == len(tracker) == len({i.fields["entity"] for i in items if i.fields.get("entity")})


def test_a_saved_tracker_keeps_chinese_names_found_by_sound(tmp_path):
    names = ["紫金山酒店", "玄武湖公园", "鸡鸣寺"]
    items = [
        Knowledge(f"zh:{i}", f"{name}的开放时间是早上八点。", SourceKind.FAQ, {"entity": name})
        for i, name in enumerate(names)
    ]
    tracker = EntityTracker(items, pinyin=True)
    tracker.save(tmp_path / "entities.json")
    again = EntityTracker.load(tmp_path / "entities.json")
    for text in ("紫金山酒店几点开门", "请问紫金删酒店在哪", "玄无湖公园和鸡鸣寺", "没有名字"):
        assert again.find(text) == tracker.find(text)
    assert again.find("请问紫金删酒店在哪") == ["紫金山酒店"]  # a homophone typo, found by its pinyin


def test_rows_of_a_mapped_matrix_are_read_as_from_memory(tmp_path):
    from ragdial.retrieval.dense import read_rows

    matrix = np.random.default_rng(0).normal(size=(1000, 8)).astype(np.float32)
    np.save(tmp_path / "v.npy", matrix)
    mapped = np.load(tmp_path / "v.npy", mmap_mode="r")
    for source in (matrix, mapped, mapped[10:]):  # a file read for the whole mapped file, indexing otherwise
        assert np.array_equal(read_rows(source, 0, 300), source[:300])
        assert np.array_equal(read_rows(source, 980, 2000), source[980:])
