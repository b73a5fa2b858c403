"""Retrieval building blocks: analyzer, entity tracking, query construction, fusion, encoders, BM25 index."""

from __future__ import annotations

import numpy as np
import pytest

from ragdial.errors import RagdialError
from ragdial.retrieval import fusion
from ragdial.retrieval.analyzer import PINYIN_PREFIX, Analyzer
from ragdial.retrieval.config import RetrieverConfig
from ragdial.retrieval.entities import EntityTracker
from ragdial.retrieval.lexical import LexicalIndex
from ragdial.retrieval.query import query_texts
from ragdial.schema import Knowledge, SourceKind, Speaker, Turn
from ragdial.text.asr_noise import corrupt
from ragdial.text.encoders import HashEncoder, QueryCache, encode_cached, get_encoder


def item(entity: str, text: str = "x") -> Knowledge:
    return Knowledge(f"{entity}:{text}", text, SourceKind.FAQ, {"entity": entity})


def test_analyzer_english_stems_and_drops_stopwords():
    assert Analyzer()("The rooms were cleaned") == ["room", "clean"]


def test_analyzer_pinyin_tokens_survive_homophone_noise():
    analyzer = Analyzer(pinyin=True)
    clean = analyzer("门票多少钱")
    assert any(t.startswith(PINYIN_PREFIX) for t in clean)
    assert f"{PINYIN_PREFIX}men_piao" in analyzer("门漂多少钱")
    assert Analyzer(pinyin=False)("门票") == ["门票"]
    assert analyzer("") == []


def test_entity_tracker_prefers_longest_name_and_recent_turn():
    tracker = EntityTracker([item("Hotel Azure"), item("Hotel Azure Express"), item("Gold Fish"), item("故宫")])
    assert tracker.find("Is Hotel Azure Express near the station?") == ["Hotel Azure Express"]
    assert tracker.find("hotel azure or gold fish?") == ["Hotel Azure", "Gold Fish"]
    assert tracker.find("我想去故宫看看") == ["故宫"]
    context = [
        Turn(Speaker.USER, "tell me about Gold Fish"),
        Turn(Speaker.SYSTEM, "ok"),
        Turn(Speaker.USER, "parking?"),
    ]
    assert tracker.focus(context) == ["Gold Fish"]
    assert tracker.last_mention(context) == {"Gold Fish": 2}
    assert tracker.find("") == []
    assert EntityTracker([]).focus(context) == []


def test_entity_tracker_pinyin_finds_misheard_names():
    items = [item("梅花山庄"), item("故宫")]
    assert EntityTracker(items).find("梅花杉庄门票多少") == []
    assert EntityTracker(items, pinyin=True).find("梅花杉庄门票多少") == ["梅花山庄"]
    assert EntityTracker(items, pinyin=True).find("姑宫") == []  # two-character names stay exact


def test_query_texts_modes():
    context = [Turn(Speaker.USER, "a"), Turn(Speaker.SYSTEM, "b"), Turn(Speaker.USER, "c")]
    assert query_texts(context, RetrieverConfig(query="last_user", encoder=None)) == [("c", 1.0)]
    recent = query_texts(context, RetrieverConfig(query="recent", turns=3, decay=0.5, encoder=None))
    assert recent == [("c", 1.0), ("b", 0.5), ("a", 0.25)]
    carried = query_texts(context, RetrieverConfig(query="last_user", encoder=None), focus=["Gold Fish"])
    assert carried == [("c Gold Fish", 1.0)]
    scoped = [Turn(Speaker.USER, "is Gold Fish open late")]
    config = RetrieverConfig(query="last_user", encoder=None)
    assert query_texts(scoped, config, ["Gold Fish"], scoped=True) == [("is open late", 1.0)]
    assert query_texts([], config) == []


def test_config_validation_and_round_trip():
    with pytest.raises(RagdialError, match="fusion"):
        RetrieverConfig(fusion="magic")
    with pytest.raises(RagdialError, match="unknown retriever option"):
        RetrieverConfig.from_dict({"nope": 1})
    config = RetrieverConfig(encoder=None, fusion="rrf", analyzer=Analyzer(pinyin=True))
    assert config.fusion == "bm25"  # no encoder: lexical only
    assert [RetrieverConfig(encoder=None, fusion=f).fusion for f in ("dense", "rrf", "weighted")] == ["bm25"] * 3
    assert RetrieverConfig.from_dict(config.to_dict()) == config


def test_fusion():
    a = np.array([3.0, 2.0, 1.0])
    b = np.array([1.0, 2.0, 3.0])
    assert list(fusion.ranks(a)) == [1, 2, 3]
    fused = fusion.rrf([a, b], k=60)
    assert fused[0] == pytest.approx(fused[2])
    assert fused[1] == pytest.approx(2 / 62)
    assert list(fusion.weighted([a, b], [1.0, 0.0])) == [1.0, 0.5, 0.0]
    assert list(fusion.minmax(np.array([2.0, 2.0]))) == [0.0, 0.0]


def test_hash_encoder_normalised_and_cached(tmp_path):
    encoder = HashEncoder()
    vectors = encoder.encode(["parking at the hotel", "", "停车场"])
    assert vectors.dtype == np.float32 and vectors.shape == (3, encoder.dim)
    assert np.linalg.norm(vectors[0]) == pytest.approx(1.0, abs=1e-5)
    assert not vectors[1].any()  # empty text: zero vector
    first = encode_cached(encoder, ["a b", "c"], directory=tmp_path)
    assert len(list((tmp_path / "hash").glob("*.npy"))) == 1
    assert np.array_equal(encode_cached(encoder, ["a b", "c"], directory=tmp_path), first)
    cache = QueryCache(encoder, size=2)
    assert cache(["x", "y", "z"]).shape == (3, encoder.dim)
    assert cache([]).shape == (0, encoder.dim)
    cache.clear()
    assert QueryCache.shared(encoder) is QueryCache.shared(encoder)


def test_unknown_encoder():
    with pytest.raises(RagdialError, match="unknown encoder"):
        get_encoder("word2vec")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["use", "e5"])
def test_real_encoders_are_cross_lingual(name):
    encoder = get_encoder(name)
    vectors = encoder.encode(["Is there free parking?", "有免费停车场吗？", "The soup was too salty."])
    assert vectors.shape[1] == encoder.dim
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def test_lexical_index_round_trip(tmp_path):
    texts = ["free parking on site", "pets are not allowed", ""]
    index = LexicalIndex.build(texts, Analyzer())
    scores = index.scores("is parking free")
    assert scores.argmax() == 0 and scores[2] == 0
    index.save(tmp_path / "bm25")
    loaded = LexicalIndex.load(tmp_path / "bm25", Analyzer(), len(texts))
    assert np.allclose(loaded.scores("is parking free"), scores)
    assert not index.scores("zzz unknown").any()
    assert LexicalIndex.build([], Analyzer()).scores("x").shape == (0,)


def test_pinyin_index_matches_noisy_query():
    texts = ["梅花山 门票 免费", "梅花山 地址 南京"]
    noisy = corrupt("门票多少钱", 0.0)
    plain = LexicalIndex.build(texts, Analyzer())
    with_pinyin = LexicalIndex.build(texts, Analyzer(pinyin=True))
    assert with_pinyin.scores(noisy).argmax() == 0
    assert not plain.scores("门漂").any()
    assert with_pinyin.scores("门漂").argmax() == 0
