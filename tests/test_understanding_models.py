"""Understanding classifiers on our own small fixtures: training, save/load, odd inputs, unseen labels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ragdial import datasets
from ragdial.errors import RagdialError
from ragdial.schema import Speaker, Turn
from ragdial.understanding import (
    ModelFormatError,
    TextClassifier,
    api_query_classifier,
    format_api_query,
    intent_classifier,
    parse_api_query,
    training_data,
    turn_detector,
)
from ragdial.understanding.features import NgramTfidf
from ragdial.understanding.views import MAX_CHARS, view_text


@pytest.fixture(scope="module")
def intents(fixtures: Path) -> tuple[list[str], list[str]]:
    data = json.loads((fixtures / "understanding" / "intents.json").read_text(encoding="utf-8"))
    texts = [t for label in data for t in data[label]]
    labels = [label for label in data for _ in data[label]]
    return texts, labels


@pytest.fixture(scope="module")
def intent_model(intents: tuple[list[str], list[str]]) -> TextClassifier:
    texts, labels = intents
    return intent_classifier(embedding=None).fit(texts, labels)


@pytest.fixture(scope="module")
def dstc(fixtures: Path):
    return datasets.load("dstc11", fixtures / "understanding" / "dstc", "val")


def test_intent_learns_the_fixture_and_generalises(intent_model: TextClassifier, intents) -> None:
    texts, labels = intents
    assert intent_model.predict(texts) == labels
    assert intent_model.classes == ["weather", "music", "flight", "chat"]
    assert intent_model.predict(["下周一武汉天气好吗", "播放一首周杰伦的歌曲", "订一张去成都的机票"]) == [
        "weather",
        "music",
        "flight",
    ]


def test_batch_and_one_at_a_time_agree(intent_model: TextClassifier, intents) -> None:
    texts, _ = intents
    batch = intent_model.predict(texts)
    assert [intent_model.predict_one(t) for t in texts] == batch
    assert intent_model.predict([]) == []


def test_save_load_round_trip(intent_model: TextClassifier, intents, tmp_path: Path) -> None:
    texts, _ = intents
    folder = intent_model.save(tmp_path / "intent")
    assert sorted(p.name for p in folder.iterdir()) == ["arrays.npz", "model.json"]
    with np.load(folder / "arrays.npz", allow_pickle=False) as npz:  # nothing pickled
        assert all(npz[name].dtype != object for name in npz.files)
    loaded = TextClassifier.load(folder)
    probe = [*texts, "", "完全无关的一句话", "x" * 50_000]
    assert loaded.predict(probe) == intent_model.predict(probe)
    assert np.allclose(loaded.probabilities(probe), intent_model.probabilities(probe), atol=1e-6)
    intent_model.save(folder)  # saving over an existing model replaces it whole
    assert TextClassifier.load(folder).classes == intent_model.classes


def test_empty_and_very_long_inputs(intent_model: TextClassifier) -> None:
    empty = intent_model.probabilities([""])[0]
    assert np.isclose(empty.sum(), 1.0)
    # an empty utterance has no features: the class with the largest bias, the same every time
    assert intent_model.predict_one("") == intent_model.classes[int(np.argmax(intent_model.head.bias))]
    long_weather = "x" * 100_000 + "明天上海会下雨吗"
    assert intent_model.predict_one(long_weather) == "weather"  # the end of a long text is kept
    assert view_text([Turn(Speaker.USER, long_weather)], "last_user").endswith("下雨吗")
    assert len(view_text([Turn(Speaker.USER, long_weather)], "last_user")) == MAX_CHARS
    assert intent_model.predict_one([]) in intent_model.classes  # an empty context


def test_unseen_labels(intents) -> None:
    texts, labels = intents
    model = intent_classifier(embedding=None).fit(texts, labels, classes=[*dict.fromkeys(labels), "alarm"])
    assert model.classes[-1] == "alarm"
    # a class named but absent from training is never predicted, and every prediction is a known class
    predictions = model.predict([*texts, "明早七点叫我起床"])
    assert "alarm" not in predictions
    assert set(predictions) <= set(labels)
    with pytest.raises(RagdialError, match="at least two classes"):
        intent_classifier(embedding=None).fit(texts[:3], ["weather"] * 3)


def test_detector_on_dstc_fixture(dstc, tmp_path: Path) -> None:
    contexts, targets = training_data("detector", dstc)
    assert sum(targets) == 12 and len(targets) == 24
    model = turn_detector([k.text for k in dstc.kb]).fit(contexts, targets)
    assert model.predict(contexts) == targets
    assert model.classes == [False, True]
    probe = [
        [Turn(Speaker.USER, "Hi."), Turn(Speaker.SYSTEM, "How can I help?"), Turn(Speaker.USER, "Is there a gym?")],
        [Turn(Speaker.USER, "Please book a room for two nights.")],
    ]
    assert model.predict(probe) == [True, False]
    loaded = TextClassifier.load(model.save(tmp_path / "detector"))
    assert loaded.predict(probe) == [True, False]
    assert np.allclose(loaded.probabilities(contexts), model.probabilities(contexts), atol=1e-6)
    loaded.set_knowledge([])  # no knowledge: the match features are zero, prediction still works
    assert len(loaded.predict(probe)) == 2


def test_knowledge_match_features_follow_the_knowledge(dstc) -> None:
    model = turn_detector([k.text for k in dstc.kb])
    block = model.blocks[-1]
    contexts, _ = training_data("detector", dstc)
    block.fit(contexts)
    on_topic = block.transform([[Turn(Speaker.USER, "Does the Riverside Lodge have a pool?")]]).toarray()[0]
    off_topic = block.transform([[Turn(Speaker.USER, "Goodbye.")]]).toarray()[0]
    assert on_topic[0] > 0.3 and off_topic.sum() == 0


def test_api_query_is_multi_label() -> None:
    assert parse_api_query("查询用户已办理的业务，取消") == ["查询用户已办理的业务", "取消"]
    assert parse_api_query("") == [] and parse_api_query(None) == []
    assert format_api_query(["查询用户已办理的业务", "取消"]) == "查询用户已办理的业务，取消"
    data = [
        ("我现在办了哪些套餐", ["查询用户已办理的业务"]),
        ("帮我看看我开通了什么业务", ["查询用户已办理的业务"]),
        ("五十元流量包是什么内容", ["查询特定业务信息"]),
        ("介绍一下那个视频会员业务", ["查询特定业务信息"]),
        ("把我开通的彩铃退掉", ["查询用户已办理的业务", "取消"]),
        ("我开的那个流量包帮我取消", ["查询用户已办理的业务", "取消"]),
        ("怎么修改服务密码", ["[QA]"]),
        ("话费怎么交", ["[QA]"]),
        ("好的谢谢", []),
        ("嗯嗯明白了", []),
    ]
    texts, targets = [t for t, _ in data], [y for _, y in data]
    model = api_query_classifier().fit(texts, targets)
    assert model.classes == ["查询用户已办理的业务", "查询特定业务信息", "取消", "[QA]", ""]  # "": no look-up
    assert model.predict(texts) == targets
    assert model.predict_one("") == []  # nothing to go on: no look-up
    assert model.predict_one("zzz") == []
    with pytest.raises(RagdialError, match="reserved"):
        api_query_classifier().fit(texts, [*targets[:-1], [""]])


def test_api_query_on_the_mobilecs2_fixture(fixtures: Path, tmp_path: Path) -> None:
    dataset = datasets.load("mobilecs2", fixtures / "mobilecs2" / "zh" / "dev_final_processed.json")
    contexts, targets = training_data("api_query", dataset)
    assert ["查询用户已办理的业务", "取消"] in targets and [] in targets
    model = api_query_classifier().fit(contexts, targets)
    assert model.predict(contexts) == targets  # the training turns are learnt (no real benchmark: see docs)
    loaded = TextClassifier.load(model.save(tmp_path / "api"))
    assert loaded.predict(contexts) == targets
    assert format_api_query(loaded.predict_one(contexts[14])) == "查询用户已办理的业务，取消"


def test_api_query_routing_features_and_thresholds(fixtures: Path, tmp_path: Path) -> None:
    """Routing features (which source the turn matches) and per-label thresholds survive a save/load; the
    thresholds are tuned per label, rare labels keep 0.5."""
    from ragdial.understanding.features import SourceMatch

    dataset = datasets.load("mobilecs2", fixtures / "mobilecs2" / "official" / "zh" / "train_final_processed.json")
    contexts, targets = training_data("api_query", dataset)
    model = api_query_classifier(knowledge=list(dataset.kb), tune_thresholds=True).fit(contexts, targets)
    match = next(b for b in model.blocks if isinstance(b, SourceMatch))
    rows = match.transform([[Turn(Speaker.USER, "剩余定向流量还有多少")], [Turn(Speaker.USER, "嗯")]]).toarray()
    assert rows.shape == (2, 12) and rows[0, [0, 3, 6]].min() > 0  # every source has a word of it
    best = int(rows[0, [0, 3, 6]].argmax())
    assert rows[0, 9 + best] == 1.0 and rows[0, 9:].sum() == 1.0  # one-hot of the best-matching source
    assert rows[1].sum() == 0  # no known word: no match, no source
    thresholds = dict(zip(model.classes, model.head.thresholds, strict=True))
    assert thresholds["验证"] == 0.5  # one positive: too rare to tune
    assert all(0.05 <= t <= 0.95 for t in thresholds.values())
    loaded = TextClassifier.load(model.save(tmp_path / "routed"))
    assert loaded.head.thresholds == model.head.thresholds
    assert loaded.predict(contexts) == model.predict(contexts)


def test_broken_model_folders(tmp_path: Path, intent_model: TextClassifier) -> None:
    with pytest.raises(ModelFormatError, match=r"model\.json: missing"):
        TextClassifier.load(tmp_path)
    folder = intent_model.save(tmp_path / "m")
    (folder / "model.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelFormatError, match="not valid JSON"):
        TextClassifier.load(folder)
    folder = intent_model.save(tmp_path / "m")
    np.savez(folder / "arrays.npz", other=np.zeros(2))
    with pytest.raises(ModelFormatError, match="inconsistent"):
        TextClassifier.load(folder)
    (folder / "arrays.npz").write_bytes(b"not a zip")
    with pytest.raises(ModelFormatError, match="cannot read arrays"):
        TextClassifier.load(folder)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda doc: doc["blocks"][0]["state"].update(terms="abc"), r"terms: expected a list, found str"),
        (lambda doc: doc["blocks"][0]["state"].update(terms=[1, 2]), r"terms: expected texts, found int"),
        (lambda doc: doc["blocks"][1].update(kind=3), r"blocks\[1\]\.kind: expected a text"),
        (lambda doc: doc["head"].update(config=[]), r"head\.config: expected an object, found list"),
        (lambda doc: doc["head"]["state"].update(classes=["a", None]), r"classes: expected texts or bools"),
        (lambda doc: doc.update(task=["intent"]), r"task: expected a text, found list"),
    ],
)
def test_a_saved_model_of_the_wrong_shape_names_the_field(tmp_path: Path, intent_model: TextClassifier, change, named):
    folder = intent_model.save(tmp_path / "m")
    document = json.loads((folder / "model.json").read_text(encoding="utf-8"))
    change(document)
    (folder / "model.json").write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ModelFormatError, match=r"inconsistent model \(TypeError: " + named):
        TextClassifier.load(folder)


def test_ngram_tfidf_matches_sklearn() -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = ["明天上海会下雨吗", "今天北京气温多少度", "下雨 下雨"]
    ours = NgramTfidf("last_user", "char", (1, 2)).fit(texts)
    theirs = TfidfVectorizer(analyzer="char", ngram_range=(1, 2), sublinear_tf=True, lowercase=True).fit(texts)
    assert sorted(ours.vocabulary) == sorted(theirs.vocabulary_)
    order = [theirs.vocabulary_[t] for t in sorted(ours.vocabulary, key=ours.vocabulary.__getitem__)]
    ref = theirs.transform(texts).toarray()[:, order]
    assert np.allclose(ours.transform([[Turn(Speaker.USER, t)] for t in texts]).toarray(), ref, atol=1e-6)


def test_intent_with_several_weighted_embeddings_round_trips(intents, tmp_path: Path) -> None:
    texts, labels = intents
    model = intent_classifier(embedding="hash+hash", embedding_weight=3.0).fit(texts, labels)
    embeddings = [b for b in model.blocks if b.kind == "embedding"]
    assert [(b.encoder, b.weight) for b in embeddings] == [("hash", 3.0), ("hash", 3.0)]
    assert model.head.class_weight == "balanced"
    width = sum(b.dim for b in model.blocks)
    assert model.features(texts[:2]).shape == (2, width)
    # the weight scales the block: its rows have norm 3 (unit vectors times the weight)
    block = embeddings[0].transform([[Turn(Speaker.USER, texts[0])]]).toarray()
    assert np.isclose(np.linalg.norm(block), 3.0, atol=1e-5)
    loaded = TextClassifier.load(model.save(tmp_path / "intent"))
    assert [(b.kind, b.config()) for b in loaded.blocks] == [(b.kind, b.config()) for b in model.blocks]
    assert loaded.head.config() == model.head.config()
    probe = [*texts, "", "x" * 50_000]
    assert loaded.predict(probe) == model.predict(probe)
    assert np.allclose(loaded.probabilities(probe), model.probabilities(probe), atol=1e-6)
