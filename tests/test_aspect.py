"""The learnt aspect matcher (issue 20): a linear map fitted so that a turn's gold items outrank the other items of
its scope, its files, and the transfer reranker's aspect columns. Hand-made vectors and our own small KB (hash
encoder); fitting needs torch."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragdial.errors import RagdialError
from ragdial.retrieval.aspect import AspectAdapter
from ragdial.schema import Knowledge, SourceKind, Speaker, Turn

torch = pytest.importorskip("torch", reason="fitting the aspect matcher needs the torch extra")


def faq(item_id: str, question: str, answer: str, domain: str, entity: str | None = None) -> Knowledge:
    fields = {"domain": domain, "entity": entity, "title": question, "body": answer}
    return Knowledge(item_id, f"{question} {answer}", SourceKind.FAQ, fields)


KB = [
    faq("h:1", "Are pets allowed in the rooms?", "Small dogs are welcome for a fee.", "hotel", "Sunrise Lodge"),
    faq("h:2", "Is breakfast included?", "Breakfast is served from 7 to 10 and is included.", "hotel", "Sunrise Lodge"),
    faq("h:3", "Is there a gym?", "The gym on the ground floor is open all day.", "hotel", "Blue Harbor Inn"),
    faq("h:4", "Can I check in early?", "Early check-in from 11:00 costs 15 pounds.", "hotel", "Blue Harbor Inn"),
    faq("b:1", "Do you rent helmets with the bikes?", "Every rental comes with a free helmet.", "bike"),
    faq("b:2", "Can I return the bike to another shop?", "One-way returns cost 5 pounds.", "bike"),
    faq("b:3", "Are electric bikes available?", "Ten electric bikes can be reserved a day ahead.", "bike"),
]


def user(text: str) -> Turn:
    return Turn(Speaker.USER, text)


def _aspect_space(seed: int, turns: int) -> tuple[np.ndarray, np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """Items of 6 dims: dims 0-1 say the aspect (quiet / breakfast), dims 2-5 are wording shared by turn and item
    (large, so the plain cosine follows the wording). Each turn asks for one aspect; its pool holds one item of each
    aspect, the wrong one worded like the turn."""
    rng = np.random.default_rng(seed)
    items, queries, pools = [], [], []
    for turn in range(turns):
        aspect = turn % 2
        wording = rng.normal(size=4) * 3
        query = np.concatenate([np.eye(2)[aspect], wording])
        right = np.concatenate([np.eye(2)[aspect], rng.normal(size=4) * 3])
        wrong = np.concatenate([np.eye(2)[1 - aspect], wording + rng.normal(size=4) * 0.3])
        rows = np.array([len(items), len(items) + 1])
        items.extend([right, wrong])
        queries.append(query)
        pools.append((rows, np.array([True, False])))
    return np.array(queries, np.float32), np.array(items, np.float32), pools


def _top1(adapter: AspectAdapter, queries, items, pools) -> float:
    pairs = zip(queries, pools, strict=True)
    hits = [bool(gold[int(np.argmax(adapter.cosine(items[rows], q)))]) for q, (rows, gold) in pairs]
    return sum(hits) / len(hits)


def test_the_fitted_map_ranks_the_asked_aspect_above_the_wording_on_turns_it_never_saw():
    from ragdial.retrieval import aspect

    queries, items, pools = _aspect_space(0, 60)
    held_queries, held_items, held_pools = _aspect_space(1, 40)
    plain = AspectAdapter(np.eye(6, dtype=np.float32))
    assert _top1(plain, held_queries, held_items, held_pools) < 0.2  # the wording wins under the plain cosine
    fitted = aspect.fit(queries, items, pools, epochs=60, lr=0.05, reg=0.0, batch=16)
    assert fitted.matrix.shape == (6, 6)
    assert _top1(fitted, held_queries, held_items, held_pools) > 0.9
    # the identity pull: a strong reg keeps the map near the plain cosine
    held_back = aspect.fit(queries, items, pools, epochs=60, lr=0.05, reg=100.0, batch=16)
    assert np.abs(held_back.matrix - np.eye(6)).max() < np.abs(fitted.matrix - np.eye(6)).max()


def test_fit_skips_pools_without_gold_and_refuses_mismatched_inputs():
    from ragdial.retrieval import aspect

    queries, items, pools = _aspect_space(0, 4)
    empty = [(np.zeros(0, np.int64), np.zeros(0, bool)), (pools[0][0], np.zeros(2, bool))]
    assert np.array_equal(aspect.fit(queries[:2], items, empty).matrix, np.eye(6))  # nothing to learn from
    with pytest.raises(RagdialError, match="4 query vectors for 3 pools"):
        aspect.fit(queries, items, pools[:3])
    with pytest.raises(RagdialError, match="6 dims"):
        aspect.fit(queries[:, :5], items, pools)


def test_the_adapter_file_round_trips_and_a_bad_file_is_named(tmp_path):
    matrix = np.arange(9, dtype=np.float32).reshape(3, 3) + np.eye(3, dtype=np.float32)
    path = AspectAdapter(matrix).save(tmp_path / "aspect.npy")
    assert np.array_equal(AspectAdapter.load(path, dim=3).matrix, matrix)
    with pytest.raises(RagdialError, match=r"aspect\.npy.*square 4 x 4"):
        AspectAdapter.load(path, dim=4)
    (tmp_path / "bad.npy").write_text("not numpy")
    with pytest.raises(RagdialError, match=r"bad\.npy: not an aspect adapter"):
        AspectAdapter.load(tmp_path / "bad.npy")
    assert AspectAdapter(matrix).cosine(np.zeros((0, 3)), np.ones(3)).shape == (0,)


def test_the_transfer_reranker_adds_the_aspect_columns_and_keeps_its_matcher_when_saved(tmp_path):
    """``transfer.train(..., aspect=True)`` (hash encoder as the second encoder): pools are the items sharing the
    gold items' scope, the columns equal the adapter's cosine, the saved model keeps the matrix and predicts the
    same, and a matcher without a second encoder is refused."""
    from ragdial.retrieval import transfer
    from ragdial.retrieval.config import RetrieverConfig
    from ragdial.retrieval.hybrid import HybridRetriever
    from ragdial.schema import Example, KnowledgeBase
    from ragdial.text.encoders import get_encoder

    retriever = HybridRetriever(KnowledgeBase(KB), RetrieverConfig(fusion="rrf", encoder="hash"))
    questions = [("h:1", "Can my dog stay?"), ("h:4", "Could we arrive before noon?"), ("b:1", "Is a helmet included?")]
    examples = [
        Example(f"{i}-{n}", f"d{i}-{n}", 1, [user(f"{text}{'!' * n}")], True, [item_id])
        for n in range(4)
        for i, (item_id, text) in enumerate(questions)
    ]
    queries, pools = transfer.aspect_pools(retriever, examples, "hash")
    ids = [retriever.items[int(r)].id for r in pools[1][0]]
    assert ids == ["h:3", "h:4"] and list(pools[1][1]) == [False, True]  # Blue Harbor Inn's items, h:4 gold
    assert [retriever.items[int(r)].id for r in pools[2][0]] == ["b:1", "b:2", "b:3"]  # the bike domain's items
    assert np.allclose(queries[0], get_encoder("hash").encode_query("Can my dog stay?"), atol=1e-6)
    with pytest.raises(RagdialError, match="aux_encoder"):
        transfer.train(retriever, examples, rounds=5, folds=3, aspect=True)

    model = transfer.train(retriever, examples, rounds=5, folds=3, aux_encoder="hash", aspect=True, aspect_folds=2)
    assert model.aspect is not None and model.aspect.matrix.shape == (get_encoder("hash").dim,) * 2
    context = [user("Is a helmet included with the bike?")]
    scores = retriever.score(context)
    x = transfer.features(retriever, context, scores, "hash", model.aspect)
    names = transfer.feature_names("hash", aspect=True)
    assert x.shape == (len(scores.indices), len(names)) and names[-3:] == transfer.ASPECT_FEATURES
    vectors = transfer.aux_vectors(retriever, "hash")[scores.indices]
    expected = model.aspect.cosine(vectors, get_encoder("hash").encode_query(context[0].text))
    assert np.allclose(x[:, names.index("aspect_cos")], expected, atol=1e-5)
    assert x[:, names.index("aspect_log_rank")].min() == 0.0

    folder = model.save(tmp_path / "aspect")
    loaded = transfer.TransferReranker.load(folder)
    assert loaded.aspect is not None and np.allclose(loaded.aspect.matrix, model.aspect.matrix)
    assert np.allclose(loaded.predict(retriever, context, scores), model.predict(retriever, context, scores))
    meta = json.loads((folder / transfer.META_FILE).read_text())
    meta["aspect"] = None  # the features then list columns the model would not compute
    (folder / transfer.META_FILE).write_text(json.dumps(meta))
    with pytest.raises(RagdialError, match="features"):
        transfer.TransferReranker.load(folder)
