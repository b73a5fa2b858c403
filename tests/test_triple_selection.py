"""The KdConv triple reranker (issue 20): the attribute matcher carries question words to attribute names of a
domain it never saw, the knowledge-base columns, and train / save / load. Small triples and dialogs of our own; the
hash encoder keeps the tests fast."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragdial.datasets import kdconv
from ragdial.errors import RagdialError
from ragdial.retrieval import triples
from ragdial.retrieval.triples import AttributeMatcher, KbStats, triple_features, units
from ragdial.schema import Example, KnowledgeBase, Speaker, Turn


def user(text: str) -> Turn:
    return Turn(Speaker.USER, text)


def system(text: str, *ids: str) -> Turn:
    return Turn(Speaker.SYSTEM, text, list(ids))


# (question, attribute the reply used, attributes it did not) in a "film" domain of our own
FILM_PAIRS = [
    ("这部片子哪年上映的？", "上映时间", ["导演", "制片地区", "主演"]),
    ("是哪一年上映的呀？", "上映时间", ["导演", "主演"]),
    ("导演是谁呢？", "导演", ["上映时间", "制片地区"]),
    ("谁导演的这部电影？", "导演", ["主演", "上映时间"]),
    ("在哪里拍的，哪个地区制片的？", "制片地区", ["导演", "上映时间"]),
    ("是哪个地区出品的？", "制片地区", ["主演", "上映时间"]),
    ("主演有谁？", "主演", ["导演", "制片地区"]),
    ("都有谁主演啊？", "主演", ["上映时间", "导演"]),
    ("他是哪年出生的？", "出生日期", ["国籍", "职业"]),
    ("她出生在哪里？", "出生地", ["出生日期", "职业"]),
]


def matcher_rows(pairs):
    questions, attributes, labels = [], [], []
    for question, gold, others in pairs:
        for attribute in [gold, *others]:
            questions.append(question)
            attributes.append(attribute)
            labels.append(attribute == gold)
    return questions, attributes, labels


def test_units_are_characters_and_bigrams_without_punctuation():
    assert units("哪年？") == {"哪", "年", "哪年"}
    assert units("A b!") == {"a", "b", "ab"}
    assert units("，。") == set()


def test_attribute_matcher_carries_question_words_to_attribute_names_of_a_new_domain(tmp_path):
    matcher = AttributeMatcher.fit(*matcher_rows(FILM_PAIRS), c=10.0)
    # a music domain: none of these attribute names was seen, but "哪年" went with "时间", "哪里" with "地"
    music = ["发行时间", "发行地区", "歌手"]
    when = matcher.score("这张专辑是哪年发行的？", music)
    where = matcher.score("这张专辑在哪里发行的？", music)
    assert int(np.argmax(when)) == 0
    assert int(np.argmax(where)) == 1
    assert matcher.score("好的", []).shape == (0,)
    matcher.save(tmp_path / "m.npz")
    loaded = AttributeMatcher.load(tmp_path / "m.npz")
    assert np.allclose(loaded.score("这张专辑是哪年发行的？", music), when)


def test_attribute_matcher_needs_both_labels():
    with pytest.raises(Exception, match="both used and unused"):
        AttributeMatcher.fit(["导演是谁？"], ["导演"], [True])


def test_triple_features_read_the_matcher_and_the_kb():
    items = [
        kdconv.triple("山城", "Information", "山城是一部2001年的电影。讲述了一个小镇的故事。"),
        kdconv.triple("山城", "主演", "林一"),
        kdconv.triple("山城", "主演", "王二"),
        kdconv.triple("山城", "上映时间", "2001年"),
        kdconv.triple("林一", "职业", "演员"),
        kdconv.triple("林一", "主演", "不存在的片"),
    ]
    stats = KbStats(KnowledgeBase(items))
    assert stats.share == {"Information": 0.5, "主演": 1.0, "上映时间": 0.5, "职业": 0.5}
    matched = np.array([0.0, 2.0, 2.0, -1.0, 0.5, 2.0], dtype=np.float32)
    rows = triple_features(stats, items, matched)
    col = {name: rows[:, i] for i, name in enumerate(triples.TRIPLE_FEATURES)}
    assert list(col["attribute_matcher"]) == list(matched)
    assert list(col["attribute_matcher_gap"]) == [2.0, 0.0, 0.0, 3.0, 1.5, 0.0]
    assert list(col["attribute_kb_share"]) == [0.5, 1.0, 1.0, 0.5, 0.5, 1.0]
    assert col["entity_attribute_log_values"][1] == pytest.approx(np.log(2))  # 山城 has two 主演
    assert col["entity_attribute_log_values"][5] == 0.0  # 林一 has one
    assert triple_features(stats, [], np.zeros(0)).shape == (0, len(triples.TRIPLE_FEATURES))


@pytest.mark.parametrize("encoder", [None, "e5"])
def test_triple_reranker_trains_on_two_domains_saves_and_loads(tmp_path, encoder):
    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.hybrid import HybridRetriever

    film = [
        kdconv.triple("山城", "上映时间", "2001年"),
        kdconv.triple("山城", "导演", "林一"),
        kdconv.triple("山城", "制片地区", "中国"),
        kdconv.triple("海港", "上映时间", "1998年"),
        kdconv.triple("海港", "导演", "王二"),
        kdconv.triple("海港", "制片地区", "日本"),
    ]
    music = [
        kdconv.triple("晴天集", "发行时间", "2003年"),
        kdconv.triple("晴天集", "歌手", "张三"),
        kdconv.triple("晴天集", "发行地区", "台湾"),
        kdconv.triple("雨夜集", "发行时间", "2010年"),
        kdconv.triple("雨夜集", "歌手", "李四"),
        kdconv.triple("雨夜集", "发行地区", "香港"),
    ]
    kb = KnowledgeBase(film + music)
    retriever = HybridRetriever(kb, RetrieverConfig(fusion="rrf", encoder="hash", carry_turns=100))
    asks = {
        "上映时间": "{e}是哪年上映的？",
        "导演": "{e}的导演是谁？",
        "制片地区": "{e}是哪里制片的？",
        "发行时间": "{e}是哪年发行的？",
        "歌手": "{e}是谁唱的？",
        "发行地区": "{e}在哪里发行的？",
    }
    examples = []
    for n in range(3):
        for item in film + music:
            entity, attribute = item.fields["entity"], item.fields["attribute"]
            text = asks[attribute].format(e=entity) + "！" * n
            domain = "film" if item in film else "music"
            dialog = f"{domain}:{entity}:{attribute}:{n}"
            examples.append(Example(dialog, dialog, 1, [user(text)], True, [item.id]))
    model = triples.train(
        retriever, examples, group_of=lambda e: e.id.split(":")[0], rounds=10, folds=3, encoder=encoder
    )
    assert (model.info["groups"], model.info["grouped_by"]) == (2, "caller") and 0.0 < model.threshold < 1.0
    context = [user("晴天集是哪年发行的？")]
    scores = retriever.score(context)
    predicted = model.predict(retriever, context, scores)
    best = retriever.items[int(scores.indices[int(np.argmax(predicted))])]
    assert best.fields["attribute"] == "发行时间"
    from ragdial.retrieval.rerank import load_reranker

    loaded = load_reranker(model.save(tmp_path / "triples"))
    assert isinstance(loaded, triples.TripleReranker)
    assert (loaded.threshold, loaded.relative, loaded.depth) == (model.threshold, model.relative, model.depth)
    assert np.allclose(loaded.predict(retriever, context, scores), predicted)
    meta_path = tmp_path / "triples" / triples.META_FILE
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    assert (loaded.encoder, meta["encoder"]) == (encoder, encoder)
    assert meta["features"] == triples.feature_names(encoder)
    assert (meta["features"][-len(triples.ENCODER_FEATURES) :] == triples.ENCODER_FEATURES) == bool(encoder)
    with pytest.raises(Exception, match="not a triple reranker"):
        triples.TripleReranker.load(tmp_path)
    meta_path.write_text(json.dumps({**meta, "encoder": 5}), encoding="utf-8")
    with pytest.raises(RagdialError, match="field 'encoder' must be an encoder name"):
        triples.TripleReranker.load(tmp_path / "triples")
    meta_path.write_text(json.dumps({**meta, "encoder": "no-such-encoder"}), encoding="utf-8")
    with pytest.raises(RagdialError, match="field 'encoder' must be an encoder name"):
        triples.TripleReranker.load(tmp_path / "triples")
    meta_path.write_text(json.dumps({**meta, "encoder": None if encoder else "e5"}), encoding="utf-8")
    with pytest.raises(RagdialError, match="field 'features' differs"):
        triples.TripleReranker.load(tmp_path / "triples")


def test_encoder_columns_point_at_the_asked_attribute():
    """Under e5 the asked attribute's triple and name are the closest to the question (gap 0, rank 1); a turn
    without text gives zeros."""
    items = [
        kdconv.triple("晴天集", "发行时间", "2003年"),
        kdconv.triple("晴天集", "歌手", "张三"),
        kdconv.triple("晴天集", "发行地区", "台湾"),
        kdconv.triple("山城", "导演", "林一"),
    ]
    col = {name: i for i, name in enumerate(triples.ENCODER_FEATURES)}
    for question, asked in (("晴天集是哪年发行的？", 0), ("晴天集是谁唱的？", 1), ("山城的导演是谁？", 3)):
        rows = triples.encoder_features("e5", question, items)
        assert rows.shape == (4, len(triples.ENCODER_FEATURES))
        assert int(np.argmax(rows[:, col["encoder_triple_cos"]])) == asked
        assert rows[asked, col["encoder_triple_gap"]] == 0.0 and rows[asked, col["encoder_triple_log_rank"]] == 0.0
        assert (rows[:, col["encoder_triple_gap"]] >= 0).all()
    assert not triples.encoder_features("e5", "  ", items).any()
    assert triples.encoder_features("e5", "谁唱的？", []).shape == (0, len(triples.ENCODER_FEATURES))
