"""Understanding parts pinned on tiny hand-written inputs where whole-model tests cannot tell a change: the recipes
the task factories build, the knowledge-match block (window, stemming, a turn of stop words only), the binary and
multi-label heads' arithmetic, item names, the api_query decision's confidence, the errors that name what is missing,
a follow-up after two user turns in a row, held-out calibration when one half of the KB has no question, and the
knowledge cues (their own encoder for any number of turns, the system-question flag, a question without "?",
idf-weighted coverage, no knowledge set), a Chinese source match, the KB threshold's ceiling, an unknown solver."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from ragdial.components import BuildContext, ConfigError
from ragdial.errors import RagdialError
from ragdial.schema import Dataset, Knowledge, KnowledgeBase, SourceKind, Speaker, Turn
from ragdial.understanding.detectors import KnowledgeSeekingDetector, ZeroShotDetector, decision_for_api_query
from ragdial.understanding.features import KnowledgeMatch, NgramTfidf
from ragdial.understanding.kb_calibration import META_KEY, MIN_QUESTIONS, held_out_scores, kb_threshold
from ragdial.understanding.knowledge_cues import ActNgrams, KnowledgeCues, item_names
from ragdial.understanding.linear import LinearHead, label_set
from ragdial.understanding.model import TextClassifier
from ragdial.understanding.policy import Rewrite, classify_turn, rewrite_turn
from ragdial.understanding.registry import api_query, knowledge_seeking
from ragdial.understanding.tasks import intent_classifier, new_classifier, turn_detector, zero_shot_detector


def user(text: str) -> Turn:
    return Turn(Speaker.USER, text)


def system(text: str) -> Turn:
    return Turn(Speaker.SYSTEM, text)


def recipe(model: TextClassifier) -> list[tuple[str, dict]]:
    return [(block.kind, block.config()) for block in model.blocks]


def ngrams(model: TextClassifier) -> list[tuple[str, str, tuple[int, int]]]:
    return [(b.view, b.analyzer, tuple(b.config()["ngram_range"])) for b in model.blocks if b.kind == "ngram_tfidf"]


def test_the_intent_recipe_is_the_cross_validated_one():
    model = intent_classifier()  # nothing is loaded until fit
    assert model.task == "intent"
    assert ngrams(model) == [("last_user", "char", (1, 3)), ("last_user", "word", (1, 3))]
    embeddings = [config for kind, config in recipe(model) if kind == "embedding"]
    assert [(c["encoder"], c["weight"]) for c in embeddings] == [("use", 2.0), ("e5", 2.0)]
    assert (model.head.mode, model.head.c, model.head.class_weight) == ("multiclass", 30.0, "balanced")


def test_the_detector_recipe():
    model = turn_detector(embedding=None)
    assert model.task == "detector"
    assert ngrams(model) == [
        ("last_user", "word", (1, 2)),
        ("last_user", "char", (2, 4)),
        ("history", "word", (1, 2)),
    ]
    assert [b.config()["min_df"] for b in model.blocks] == [1, 2, 2]
    assert model.blocks[2].config()["window"] == 2  # the two turns before the last user turn


def test_the_zero_shot_recipe():
    model = zero_shot_detector(encoder="hash")
    assert model.task == "detector"
    assert (model.head.mode, model.head.c, model.head.threshold) == ("binary", 4.0, 0.5)
    masked = [b for b in model.blocks if isinstance(b, ActNgrams)]
    assert [b.system_share for b in masked] == [0.002]  # the <sys> mask is on by default
    # the defaults follow the training KB's language: a Chinese KB keeps C 1 and no <sys> mask
    chinese = zero_shot_detector([Knowledge("k1", "白云寺 门票 20元", SourceKind.KG_TRIPLE, {})], encoder="hash")
    assert chinese.head.c == 1.0 and [b.system_share for b in chinese.blocks if isinstance(b, ActNgrams)] == [0.0]
    english = zero_shot_detector(["Pets are allowed for a small fee."], encoder="hash", c=2.0)
    assert english.head.c == 2.0 and [b.system_share for b in english.blocks if isinstance(b, ActNgrams)] == [0.002]


def test_new_classifier_passes_the_embedding_and_the_knowledge_on():
    kb = KnowledgeBase([Knowledge("f1", "Pets are allowed for a small fee.", SourceKind.FAQ, {})])
    dataset = Dataset("dstc9", "val", "en", kb, [], [])
    intent = new_classifier("intent", dataset, embedding=None)
    assert [kind for kind, _ in recipe(intent)] == ["ngram_tfidf", "ngram_tfidf"]  # no embedding asked for
    detector = new_classifier("detector", dataset, embedding=None)
    match = [b for b in detector.blocks if isinstance(b, KnowledgeMatch)]
    assert len(match) == 1 and match[0].texts == ["Pets are allowed for a small fee."]
    without = new_classifier("detector", dataset, embedding=None, use_knowledge=False)
    assert not any(isinstance(b, KnowledgeMatch) for b in without.blocks)


def test_knowledge_match_reads_its_window_of_history():
    block = KnowledgeMatch("history", window=1)
    block.set_knowledge(["Guests may park for free."])
    old = [user("Where can I park?"), system("In the garage."), user("Thanks.")]
    assert block._raw([old]).tolist() == [[0.0, 0.0, 0.0]]  # "park" is two turns back: outside a window of 1
    wide = KnowledgeMatch("history", window=2)
    wide.set_knowledge(["Guests may park for free."])
    assert wide._raw([old])[0, 2] == pytest.approx(1 / 2)  # park, garage (stems): park is in the KB


def test_knowledge_match_compares_stems_and_survives_a_turn_of_stop_words():
    block = KnowledgeMatch("last_user")
    block.set_knowledge(["Guests may park for free."])
    # stemmed: "parking" -> park (known), "prices" -> price (unknown): half of the turn's words are in the KB
    assert block._raw([[user("parking prices")]])[0, 2] == pytest.approx(1 / 2)
    assert block._raw([[user("the and of")], [user("")]]).tolist() == [[0.0] * 3, [0.0] * 3]


def test_item_names_are_entities_and_domains_of_three_characters_or_more():
    items = [
        Knowledge("a", "x", SourceKind.FAQ, {"entity": " Sunrise Lodge ", "domain": "hotel"}),
        Knowledge("b", "x", SourceKind.FAQ, {"entity": "Al", "domain": "bike"}),
        "a plain text item",
    ]
    assert item_names(items) == ["sunrise lodge", "hotel", "bike"]


def test_knowledge_cue_values_are_float32_in_names_order():
    cues = KnowledgeCues("hash")
    question = "Is breakfast included?"
    cues.set_knowledge([Knowledge("f", f"{question} Yes.", SourceKind.FAQ, {"title": question})])
    values = cues.values([[user("Is breakfast included?")]])
    assert values.dtype == np.float32 and values.shape == (1, len(KnowledgeCues.NAMES))


def test_binary_head_probabilities_are_logistic_regressions():
    from sklearn.linear_model import LogisticRegression

    x = sparse.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0], [0.2, 0.9], [0.9, 0.3], [0.5, 0.5]]))
    y = [False, True, False, True, True]
    head = LinearHead("binary", "logistic", c=5.0).fit(x, y, [False, True])
    expected = LogisticRegression(C=5.0, max_iter=3000).fit(x, y).predict_proba(x)[:, 1]
    assert np.allclose(head.probabilities(x)[:, 0], expected, atol=1e-5)


def test_an_svm_head_fits_and_separates():
    x = sparse.csr_matrix(np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]]))
    head = LinearHead("multiclass", "svm", c=0.05).fit(x, ["a", "a", "b", "b"], ["a", "b"])
    assert head.predict(x) == ["a", "a", "b", "b"]
    from sklearn.svm import LinearSVC

    svm = LinearSVC(C=0.05).fit(x, ["a", "a", "b", "b"])  # the head's C is the SVM's (margins "b" over "a")
    assert np.allclose(head.weights[1] - head.weights[0], svm.coef_[0], atol=1e-5)


def test_no_label_wins_only_when_it_is_the_most_confident_choice():
    head = LinearHead("multilabel", empty_label="")
    head.classes = ["A", ""]
    head.bias = np.zeros(2, dtype=np.float32)
    one = sparse.csr_matrix(np.array([[1.0]]))
    head.weights = np.array([[1.0], [2.0]], dtype=np.float32)  # both over 0.5, "no label" more confident
    assert head.predict(one) == [[]]
    head.weights = np.array([[2.0], [1.0]], dtype=np.float32)  # both over 0.5, A more confident
    assert head.predict(one) == [["A"]]


def test_fit_without_examples_says_so():
    with pytest.raises(RagdialError, match=r"^no training examples$"):
        turn_detector(embedding=None).fit([], [])


def test_the_api_query_decision_carries_the_confidence():
    assert decision_for_api_query(["[QA]"], 0.8).confidence == 0.8
    assert decision_for_api_query([], 0.3).confidence == 0.3


def test_a_detector_without_a_model_names_itself_and_the_command():
    ctx = BuildContext(Dataset("dstc9", "val", "en", KnowledgeBase([]), [], []), "en")
    with pytest.raises(ConfigError, match=r"detector 'knowledge_seeking' needs 'model'.*`ragdial train detector`"):
        knowledge_seeking(ctx, None)
    with pytest.raises(ConfigError, match=r"detector 'api_query' needs 'model'.*`ragdial train api-query`"):
        api_query(ctx, None)


def test_a_follow_up_after_two_user_turns_in_a_row_carries_the_name():
    names = ["夜间流量包"]
    context = (user("我想了解夜间流量包"), user("那这个多少钱？"))
    intent = classify_turn(context[-1].text, [context[0].text])
    result = rewrite_turn(context, intent, lambda _id: None, names)
    assert (result.text, result.carried) == ("夜间流量包 那这个多少钱？", ("夜间流量包",))


def test_detector_configs_name_their_model_and_threshold():
    seeking = KnowledgeSeekingDetector(turn_detector(embedding=None), 0.3, "models/det")
    assert seeking.to_config() == {"name": "knowledge_seeking", "model": "models/det", "threshold": 0.3}
    zero = ZeroShotDetector(zero_shot_detector(encoder="hash"), 0.4, "models/zs")
    assert (zero.to_config()["model"], zero.to_config()["threshold"]) == ("models/zs", 0.4)


def test_a_rewrite_as_the_service_reports_it():
    rewrite = Rewrite("多少钱？", "夜间流量包 多少钱？", ("夜间流量包",))
    assert rewrite.to_dict() == {"original": "多少钱？", "query": "夜间流量包 多少钱？", "carried": ["夜间流量包"]}


def test_a_saved_ngram_block_with_mismatched_idf_is_refused():
    block = NgramTfidf(analyzer="word", ngram_range=(1, 1))
    with pytest.raises(ValueError, match=r"^2 terms but 1 idf values$"):
        block.load_state({"terms": ["a", "b"]}, {"idf": np.ones(1, dtype=np.float32)})


def test_a_single_label_where_a_list_is_expected_is_named():
    with pytest.raises(TypeError, match=r"^expected a list of labels, found int 3$"):
        label_set(3)


class Constant:
    """Stands in for a classifier: every question scores 0.5."""

    def __init__(self, quantiles: list[float]) -> None:
        self.meta = {META_KEY: {"quantiles": quantiles}}

    def set_knowledge(self, items):
        self.items = list(items)

    def probabilities(self, contexts):
        return np.full((len(contexts), 1), 0.5)


def test_calibration_edges():
    items = [Knowledge(f"q{i}", "x", SourceKind.FAQ, {"title": f"Question number {i}?"}) for i in range(MIN_QUESTIONS)]
    # a threshold at the top of the training scores rejects every training question: no share to match
    assert kb_threshold(Constant([0.2, 0.5, 0.8]), items, 0.8) is None
    assert kb_threshold(Constant([0.2, 0.5, 0.8]), items, 0.5) == 0.5  # every question of the new KB scores 0.5
    untitled = [Knowledge("t", "Film director Someone", SourceKind.KG_TRIPLE, {})]
    assert held_out_scores(Constant([0.0]), untitled).shape == (0,)  # no question: no score


def test_the_question_cross_features_use_the_best_items_coverage():
    cues = KnowledgeCues("hash")
    cues.set_knowledge(
        [
            Knowledge(
                "b", "Is breakfast included? Yes, from seven.", SourceKind.FAQ, {"title": "Is breakfast included?"}
            ),
            Knowledge("p", "The pool opens at nine.", SourceKind.FAQ, {}),
        ]
    )
    (row,) = cues.values([[user("Is breakfast included at the pool?")]])
    value = dict(zip(KnowledgeCues.NAMES, row.tolist(), strict=True))
    question = max(value["user_qmark"], value["user_clause_question"])
    assert question == 1.0 and 0 < value["best_item_coverage"] < value["kb_vocabulary_coverage"] == 1.0
    assert value["question_x_coverage"] == pytest.approx(value["best_item_coverage"])
    assert cues._matcher is not None and cues._matcher.coverage("the and of") == (0.0, 0.0)  # no content word


def test_questions_all_in_the_second_half_are_scored_against_the_first():
    # the KB is halved by item id (crc32 % 2): "d" falls in half 0 and has no question, "a" and "b" in half 1
    class Recording(Constant):
        def probabilities(self, contexts):
            self.matched = [item.id for item in self.items]
            return super().probabilities(contexts)

    items = [
        Knowledge("d", "Parking is free.", SourceKind.FAQ, {}),
        Knowledge("a", "Breakfast from seven.", SourceKind.FAQ, {"title": "When is breakfast?"}),
        Knowledge("b", "Pets are welcome.", SourceKind.FAQ, {"title": "Can I bring my dog?"}),
    ]
    classifier = Recording([0.0])
    assert held_out_scores(classifier, items).tolist() == [0.5, 0.5]  # both questions scored, none skipped
    assert classifier.matched == ["d"]  # asked against the other half only
    assert [item.id for item in classifier.items] == ["d", "a", "b"]  # and left matched against the whole KB


def test_knowledge_cues_match_with_their_own_encoder():
    from ragdial.text.encoders import get_encoder

    question = "Is breakfast included?"
    cues = KnowledgeCues("hash")
    cues.set_knowledge([Knowledge("f", f"{question} Yes, from seven.", SourceKind.FAQ, {"title": question})])
    turn = "breakfast at seven?"
    (row,) = cues.values([[system("Hello, how can I help?"), user(turn)]])
    value = dict(zip(KnowledgeCues.NAMES, row.tolist(), strict=True))
    encoder = get_encoder("hash")
    expected = float(encoder.encode([turn], is_query=True)[0] @ encoder.encode([question])[0])
    assert value["question_cos_max"] == pytest.approx(expected, abs=1e-5) and 0 < expected < 0.99


@pytest.mark.parametrize(
    ("said", "asks"), [("Anything else?", 1.0), ("还需要别的吗？", 1.0), ("Your table is booked.", 0.0)]
)
def test_a_question_mark_in_the_system_turn_is_a_system_question(said, asks):
    cues = KnowledgeCues("hash")
    cues.set_knowledge([])
    (row,) = cues.values([[system(said), user("no thanks")]])
    assert dict(zip(KnowledgeCues.NAMES, row.tolist(), strict=True))["system_qmark"] == asks


def test_a_chinese_source_match_reads_an_english_product_name_as_the_knowledge_does():
    # configured for Chinese, every text is cut the Chinese way: "packages" in the turn meets "packages" in the
    # product name (detected one by one, the English product name would be stemmed to "packag" and never meet it)
    from ragdial.understanding.features import SourceMatch

    items = [
        Knowledge("p", "Data packages for travellers", SourceKind.PRODUCT),
        Knowledge("f", "流量包怎么退订", SourceKind.FAQ),
    ]
    contexts = [[user("流量包 packages")], [user("packages")]]
    block = SourceMatch(language="zh")
    block.set_knowledge(items)
    rows = block.fit(contexts).transform(contexts).toarray()
    assert rows[0, 0] == 1.0 and rows[0, 3] == 1.0  # both the product and the FAQ match the mixed turn


def test_the_kb_threshold_stays_below_one():
    class Certain(Constant):  # every question of the new KB scores 1
        def probabilities(self, contexts):
            return np.full((len(contexts), 1), 1.0)

    items = [Knowledge(f"q{i}", "x", SourceKind.FAQ, {"title": f"Question number {i}?"}) for i in range(MIN_QUESTIONS)]
    assert kb_threshold(Certain([0.2, 0.5, 0.8]), items, 0.5) == 0.99


def test_knowledge_cues_before_any_knowledge_is_set():
    cues = KnowledgeCues("hash")  # no set_knowledge: matched against no item
    (row,) = cues.values([[system("Anything else?"), user("What time is breakfast")]])
    value = dict(zip(KnowledgeCues.NAMES, row.tolist(), strict=True))
    assert value["question_cos_max"] == 0.0 and value["system_qmark"] == 1.0


def test_a_question_without_a_question_mark_weighs_the_cross_features():
    # "what time ..." starts a clause with a question word: a question although no "?" is typed
    question = "What time is breakfast?"
    cues = KnowledgeCues("hash")
    cues.set_knowledge([Knowledge("b", f"{question} From seven.", SourceKind.FAQ, {"title": question})])
    (row,) = cues.values([[user("what time is breakfast")]])
    value = dict(zip(KnowledgeCues.NAMES, row.tolist(), strict=True))
    assert (value["user_qmark"], value["user_clause_question"], value["user_number_statement"]) == (0.0, 1.0, 0.0)
    assert value["question_x_cos"] == pytest.approx(value["question_cos_max"]) and value["question_x_cos"] > 0.5


def test_the_kb_vocabulary_coverage_weighs_words_by_idf():
    from ragdial.understanding.knowledge_cues import KnowledgeMatcher

    matcher = KnowledgeMatcher(["breakfast buffet", "breakfast pool"], "hash")
    # "breakfast" is in both items: idf log(1 + 2/2); "zebra" in none: the largest idf, log(1 + 2)
    covered, in_kb = matcher.coverage("breakfast zebra")
    assert in_kb == pytest.approx(np.log(2) / (np.log(2) + np.log(3)))
    assert covered == pytest.approx(in_kb)  # the best item has "breakfast" too


def test_many_turns_are_encoded_with_the_matchers_own_encoder():
    from ragdial.text.encoders import get_encoder
    from ragdial.understanding.knowledge_cues import KnowledgeMatcher

    matcher = KnowledgeMatcher(["breakfast buffet"], "hash")
    texts = [f"is breakfast served at {hour}" for hour in range(70)]  # 64 or more: through the encoding cache
    assert np.allclose(matcher.encode(texts), get_encoder("hash").encode(texts, is_query=True), atol=1e-6)


def test_an_unknown_solver_is_named():
    with pytest.raises(ValueError, match=r"^solver must be one of .*, not 'adam'$"):
        LinearHead("binary", "adam")
