"""Shared fixtures: the benchmark data folder (skipped with a reason where absent) and our own small fixtures.

Rule (checked here): a test that reads the shared benchmark data carries ``@pytest.mark.shared_data``. A test that
asks for the ``shared_data`` fixture (directly or through another fixture) without the marker fails, and every
unmarked test runs with ``RAGDIAL_DATA`` pointing at a folder that does not exist, so the code under test (and any
CLI it starts) sees what a user's fresh clone sees. ``pytest -m "not shared_data"`` is exactly the suite without
the data.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ragdial.paths import data_root

FIXTURES = Path(__file__).parent / "fixtures"
NO_DATA = Path(__file__).parent / "fixtures" / "no-shared-data-without-the-shared_data-marker"
"""Where an unmarked test's ``RAGDIAL_DATA`` points: a folder that never exists."""


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Fail, before it runs, a test that asks for the shared data (directly or through a fixture) unmarked."""
    if "shared_data" in getattr(item, "fixturenames", ()) and item.get_closest_marker("shared_data") is None:
        pytest.fail(f"{item.nodeid} reads the shared data but is not marked @pytest.mark.shared_data", pytrace=False)


@pytest.fixture(autouse=True)
def _hide_shared_data_from_unmarked_tests(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("shared_data") is None:
        monkeypatch.setenv("RAGDIAL_DATA", str(NO_DATA))


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
    """``$RAGDIAL_DATA`` (default ``../shared/data`` beside the repository); the test is skipped where it is
    absent. Only tests marked ``shared_data`` may use it (checked in :func:`pytest_runtest_setup`)."""
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


@pytest.fixture(scope="module")
def travel_db_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small generated travel database of ``task_dialogs``, one per test module (the task tests open scratch
    copies of it; the few that write to it directly only see their own module's writes). Imported here, not at the
    top: tests/test_paths.py runs this conftest alone in a folder without ``task_dialogs``."""
    from task_dialogs import small_travel_db

    return small_travel_db(tmp_path_factory.mktemp("travel-db"))
