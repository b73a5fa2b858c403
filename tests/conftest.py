"""Shared fixtures: the benchmark data folder (skipped with a reason where absent) and our own small fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragdial.paths import data_root

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every cache the project writes (joined model, embeddings, NLTK WordNet, travel database) goes into this
    session's temporary folder, for this process and the servers it starts: no test reads a cache a developer
    (or an earlier run) left behind."""
    root = tmp_path_factory.mktemp("ragdial-cache")
    os.environ["RAGDIAL_CACHE"] = str(root)
    return root


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``$RAGDIAL_DATA`` (default ``../shared/data``); the test is skipped where it is absent."""
    root = data_root()
    if not root.is_dir():
        pytest.skip(f"benchmark data not found at {root} (set RAGDIAL_DATA)")
    return root


def shared_path(root: Path, relative: str) -> Path:
    """A path inside the shared data; skips the test when that folder is missing."""
    path = root / relative
    if not path.exists():
        pytest.skip(f"{path} not present")
    return path


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return FIXTURES
