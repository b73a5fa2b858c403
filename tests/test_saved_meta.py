"""The metadata file of a saved reranker: every way it can be wrong is one error naming the file and the field."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ragdial.errors import RagdialError
from ragdial.retrieval import saved_meta


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_written_meta_reads_back_with_its_values(tmp_path):
    path = tmp_path / "m.json"
    saved_meta.write_meta(path, {"format": "f1", "threshold": 0.25, "depth": 7, "info": {"rows": 3}})
    meta = saved_meta.read_meta(path, "test file", "f1")
    assert saved_meta.number(meta, "threshold", path) == 0.25
    assert saved_meta.count(meta, "depth", path, minimum=1) == 7
    assert saved_meta.info(meta, path) == {"rows": 3}
    assert saved_meta.number(meta, "relative", path, default=0.5) == 0.5
    assert saved_meta.count(meta, "max_select", path, default=10) == 10
    assert not list(tmp_path.glob(".m.json.*")), "no temporary file left beside it"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", r"m\.json: not a test file \("),
        ("[1, 2]", r"m\.json: not a test file \(a JSON object is expected, got list\)"),
        ('{"format": "other"}', r"m\.json: field 'format' must be 'f1', got 'other'"),
    ],
)
def test_an_unreadable_or_foreign_file_is_named(tmp_path, content, message):
    path = tmp_path / "m.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(RagdialError, match=message):
        saved_meta.read_meta(path, "test file", "f1")


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(RagdialError, match=r"absent\.json: not a test file"):
        saved_meta.read_meta(tmp_path / "absent.json", "test file")


@pytest.mark.parametrize(
    ("meta", "call", "message"),
    [
        (
            {"threshold": "high"},
            lambda m, p: saved_meta.number(m, "threshold", p),
            "'threshold' must be a number, got 'high'",
        ),
        (
            {"threshold": True},
            lambda m, p: saved_meta.number(m, "threshold", p),
            "'threshold' must be a number, got True",
        ),
        ({}, lambda m, p: saved_meta.number(m, "threshold", p), "'threshold' must be a number, got None"),
        ({"depth": 2.5}, lambda m, p: saved_meta.count(m, "depth", p), "'depth' must be a whole number >= 0, got 2.5"),
        (
            {"depth": 0},
            lambda m, p: saved_meta.count(m, "depth", p, minimum=1),
            "'depth' must be a whole number >= 1, got 0",
        ),
        ({"info": [1]}, lambda m, p: saved_meta.info(m, p), "'info' must be a JSON object, got list"),
        ({"features": ["a"]}, lambda m, p: saved_meta.check_features(m, p, ["a", "b"]), "'features' differs"),
    ],
)
def test_a_bad_field_is_named(tmp_path, meta, call, message):
    path = _write(tmp_path / "m.json", meta)
    with pytest.raises(RagdialError, match=r"m\.json: field " + message.replace("(", r"\(").replace(".", r"\.")):
        call(saved_meta.read_meta(path, "test file"), path)


def test_matching_features_pass(tmp_path):
    path = _write(tmp_path / "m.json", {"features": ["a", "b"]})
    saved_meta.check_features(saved_meta.read_meta(path, "test file"), path, ["a", "b"])


@dataclass
class _Model:
    threshold: float = 0.4
    relative: float = 0.8
    max_select: int = 3
    depth: int = 20
    info: dict[str, int] = field(default_factory=lambda: {"folds": 2})


def test_a_cut_saved_reads_back_whole(tmp_path):
    path = tmp_path / "m.json"
    saved_meta.write_meta(path, {"format": "f", **saved_meta.cut_fields(_Model())})
    meta = saved_meta.read_meta(path, "test file", "f")
    assert saved_meta.read_cut(meta, path) == saved_meta.Cut(threshold=0.4, relative=0.8, max_select=3, depth=20)
    assert saved_meta.info(meta, path) == {"folds": 2}


def test_an_old_file_without_relative_takes_the_default_only_when_given(tmp_path):
    path = _write(tmp_path / "m.json", {"threshold": 0.5, "max_select": 2, "depth": 9})
    meta = saved_meta.read_meta(path, "test file")
    assert saved_meta.read_cut(meta, path, relative=0.0).relative == 0.0
    with pytest.raises(RagdialError, match=r"m\.json: field 'relative' must be a number, got None"):
        saved_meta.read_cut(meta, path)
