"""Where the benchmark data is looked for: the same folder from any working directory; an empty value is unset."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragdial.paths import data_root, repository_root

REPO = Path(__file__).resolve().parents[1]


def test_default_is_beside_the_repository_whatever_the_working_directory(monkeypatch, tmp_path):
    monkeypatch.delenv("RAGDIAL_DATA", raising=False)
    assert repository_root() == REPO
    expected = REPO.parent / "shared" / "data"
    assert data_root() == expected
    monkeypatch.chdir(tmp_path)
    assert data_root() == expected


def test_empty_or_blank_value_means_the_default(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    for value in ("", "  "):
        monkeypatch.setenv("RAGDIAL_DATA", value)
        assert data_root() == REPO.parent / "shared" / "data"  # not the current directory


def test_a_value_is_used_as_given(monkeypatch, tmp_path):
    monkeypatch.setenv("RAGDIAL_DATA", str(tmp_path / "data"))
    assert data_root() == tmp_path / "data"
    monkeypatch.setenv("RAGDIAL_DATA", "~/bench")
    assert data_root() == Path.home() / "bench"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGDIAL_DATA", "relative/data")  # a relative value is relative to where the user is
    assert data_root().resolve() == tmp_path / "relative" / "data"


def test_unmarked_tests_do_not_see_the_shared_data():
    # conftest points RAGDIAL_DATA of every test without the shared_data marker at a folder that never exists
    assert not data_root().exists()
    assert "no-shared-data" in os.environ["RAGDIAL_DATA"]


def test_an_unmarked_test_asking_for_the_data_fails(tmp_path):
    (tmp_path / "test_unmarked.py").write_text(
        "def test_reads_data(shared_data):\n    assert shared_data\n", encoding="utf-8"
    )
    for helper in ("conftest.py", "task_dialogs.py"):  # the suite's conftest and the helper module it imports
        (tmp_path / helper).write_text((REPO / "tests" / helper).read_text(encoding="utf-8"))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "RAGDIAL_DATA": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    assert "reads the shared data but is not marked @pytest.mark.shared_data" in done.stdout


@pytest.mark.shared_data
def test_marked_tests_see_the_data_from_another_directory(shared_data, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert data_root() == shared_data
    assert shared_data.is_dir()
