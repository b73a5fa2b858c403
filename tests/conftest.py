"""Shared fixtures: the benchmark data folder (skipped with a reason where absent) and our own small fixtures."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

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


POSTGRES_ENV = "RAGDIAL_TEST_POSTGRES"
REQUIRE_POSTGRES_ENV = "RAGDIAL_REQUIRE_POSTGRES"
POSTGRES_HOWTO = (
    "start one with `scripts/postgres.sh start /tmp/ragdial-pg` and export RAGDIAL_TEST_POSTGRES=<the URI it prints>"
)


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """The URI of a PostgreSQL server for the tests (``$RAGDIAL_TEST_POSTGRES``; a role that may create databases).
    Skipped where none is reachable, except under ``RAGDIAL_REQUIRE_POSTGRES=1`` (CI), where that is a failure."""
    url = os.environ.get(POSTGRES_ENV, "")
    if url and not url.startswith(("postgresql://", "postgres://")):
        pytest.fail(f"{POSTGRES_ENV} must be a postgresql:// URI, not {url!r}", pytrace=False)
    reason = f"{POSTGRES_ENV} is not set" if not url else ""
    if url:
        try:
            import psycopg

            psycopg.connect(url, connect_timeout=5).close()
        except Exception as err:  # not installed, refused, wrong credentials
            reason = f"PostgreSQL at {url} is not reachable: {str(err).strip().splitlines()[0]}"
    if reason:
        if os.environ.get(REQUIRE_POSTGRES_ENV) == "1":
            pytest.fail(f"{reason} and {REQUIRE_POSTGRES_ENV}=1", pytrace=False)
        pytest.skip(f"{reason}; {POSTGRES_HOWTO}")
    return url


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A new, empty database on the test server for this one test (dropped afterwards)."""
    import psycopg

    name = f"ragdial_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield urlsplit(postgres_server)._replace(path=f"/{name}").geturl()
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
