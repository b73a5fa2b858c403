"""Parts of the trained detectors on tiny hand-written inputs: n-gram vocabulary limits, masked act n-grams, the
number cue, the classify-turn length rule, the multilabel head's constant classes, the saved model's metadata and a
detector's model path."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ragdial.schema import Speaker, Turn
from ragdial.understanding.detectors import ApiQueryDetector
from ragdial.understanding.features import NgramTfidf
from ragdial.understanding.knowledge_cues import ActNgrams, act_cues
from ragdial.understanding.linear import CONSTANT_BIAS, LinearHead
from ragdial.understanding.model import TextClassifier
from ragdial.understanding.policy import classify_turn


def said(text: str) -> list[Turn]:
    return [Turn(Speaker.USER, text)]


def test_max_features_keeps_the_most_frequent_terms():
    block = NgramTfidf(analyzer="word", ngram_range=(1, 1), max_features=2)
    block.fit([said("a b c"), said("a b d"), said("a e f")])
    assert block.vocabulary == {"a": 0, "b": 1}  # df 3 and 2; c, d, e, f have 1
    assert np.allclose(block.idf, [1.0, np.log(4 / 3) + 1.0])  # smooth idf: log((1 + n) / (1 + df)) + 1


def test_act_ngrams_mask_content_words_and_mark_the_turn_boundaries():
    block = ActNgrams(ngram_range=(1, 2))
    assert block.terms("book 2 rooms") == [
        "<s>",
        "book",
        "<num>",
        "<w>",
        "</s>",
        "<s> book",
        "book <num>",
        "<num> <w>",
        "<w> </s>",
    ]
    assert block.terms("  ") == []
    # min_df 2 by default: n-grams of one turn only are dropped
    block.fit([said("book a room"), said("book a table"), said("hello there")])
    assert sorted(block.vocabulary) == ["</s>", "<s>", "<s> book", "<w>", "<w> </s>", "a", "a <w>", "book", "book a"]


def test_the_number_cue_is_a_number_in_a_statement_only():
    number = 3  # index of the "number, not a question" cue
    assert act_cues(said("I need 2 rooms"))[number] == 1.0
    assert act_cues(said("what time is 2 ok?"))[number] == 0.0
    assert act_cues(said("2 rooms?"))[number] == 0.0
    assert act_cues(said("thanks a lot"))[number] == 0.0


def test_a_follow_up_cue_counts_only_in_a_turn_of_forty_characters_or_fewer():
    # the route is the answer model's now (tests/test_grounded_path.py); the cue left is the follow-up flag
    assert classify_turn("那个" + "好" * 38, ["怎么查话费"]).follow_up  # 40 characters
    assert not classify_turn("那个" + "好" * 39, ["怎么查话费"]).follow_up  # 41


def test_a_label_on_every_row_is_always_predicted_and_one_on_none_never():
    features = sparse.csr_matrix(np.array([[1, 0], [1, 1], [1, 0], [1, 1], [1, 0], [1, 1]], dtype=float))
    targets = [["a", "b"], ["a"], ["a", "b"], ["a"], ["a", "b"], ["a"]]
    head = LinearHead("multilabel").fit(features, targets, ["a", "b", "c"])
    assert head.bias[0] == CONSTANT_BIAS and head.bias[2] == -CONSTANT_BIAS
    assert not head.weights[0].any() and not head.weights[2].any()
    assert head.predict(features) == targets


def test_save_and_load_keep_the_metadata(tmp_path):
    model = TextClassifier("intent", [NgramTfidf()], LinearHead(), {"dataset": "hand-written"})
    model.fit(["查话费", "查余额", "办套餐", "改套餐"], ["query", "query", "change", "change"])
    loaded = TextClassifier.load(model.save(tmp_path / "m"))
    assert loaded.meta == {"dataset": "hand-written", "train_size": 4}
    assert loaded.predict(["查话费", "改套餐"]) == ["query", "change"]


def test_a_detector_reports_where_its_model_came_from():
    assert ApiQueryDetector(object(), model="models/api").to_config() == {"name": "api_query", "model": "models/api"}
