"""Shared pytest configuration: anyio on asyncio for every async test, and the session
working directories the helpers use (the agent runtime refuses a ``cwd`` that is not an
existing directory)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.postgres import Cluster, find_binaries
from helpers.schedule import FILE_SECONDS, deal
from helpers.stores import Backend, sqlite_backend

# Imported here so that a bad ACP2_TEST_TIMEOUT_SCALE stops the run at start-up.
from helpers.timeouts import SCALE, SCALE_ENV, TIMEOUT

#: The ``cwd`` of the sessions the test helpers create (tests/*/..._helpers.py, harness).
SESSION_DIRS = ("/tmp/acp2-agent-tests", "/tmp/acp2-client-tests", "/tmp/acp2-ui-tests")


@pytest.fixture
def anyio_backend() -> str:
    """Run anyio tests on asyncio, the backend acp2 targets."""
    return "asyncio"


#: The event loops acp2 runs on (README), as anyio backends: the standard one and uvloop.
EVENT_LOOPS: dict[str, Any] = {"asyncio": "asyncio", "uvloop": ("asyncio", {"use_uvloop": True})}

#: The suites (directories under tests/) whose async tests run once on every loop of
#: EVENT_LOOPS; the others run on the standard loop only. Add a suite here to run it
#: under uvloop too.
ALL_LOOPS_SUITES = frozenset({"rpc", "e2e"})


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``anyio_backend`` over EVENT_LOOPS in the suites of ALL_LOOPS_SUITES."""
    if "anyio_backend" not in metafunc.fixturenames:
        return
    path = metafunc.definition.path.relative_to(Path(__file__).parent)
    if path.parts[0] in ALL_LOOPS_SUITES:
        metafunc.parametrize("anyio_backend", list(EVENT_LOOPS.values()), ids=list(EVENT_LOOPS))


@pytest.fixture(autouse=True, scope="session")
def session_dirs() -> None:
    """Create the helpers' session directories once per test run."""
    for path in SESSION_DIRS:
        os.makedirs(path, exist_ok=True)


TESTS_DIR = Path(__file__).parent


def _test_file(item: pytest.Item) -> str:
    try:
        return item.path.relative_to(TESTS_DIR).as_posix()
    except ValueError:  # a test collected from outside tests/
        return str(item.path)


@pytest.hookimpl(trylast=True)  # after deselection, so the blocks are the ones xdist sends
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker, order the tests so every worker starts with its share of the
    slow files (helpers/schedule.py). Every worker computes the same order, as xdist
    requires; a run without workers keeps file order."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        items[:] = deal(items, int(workerinput["workercount"]), _test_file, FILE_SECONDS)


def pytest_report_header() -> str:
    """Say in the header how long a single test wait may take in this run."""
    return f"test wait bound: TIMEOUT = {TIMEOUT:g} s ({SCALE_ENV}={SCALE:g})"


#: Set by ``.ci/run``: a test that skips (a missing node, bubblewrap, re2 ...) fails
#: instead, since CI installs everything the suite needs.
NO_SKIPS_ENV = "ACP2_NO_SKIPS"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under ``ACP2_NO_SKIPS=1`` a skipped test is reported as failed, with its reason."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and os.environ.get(NO_SKIPS_ENV) == "1":
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped, but {NO_SKIPS_ENV}=1 forbids skipping: {reason}"


# -- PostgreSQL (the scale-out store): one throwaway cluster per worker ---------------------


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Cluster]:
    """A PostgreSQL cluster of this test process (one per xdist worker), in a temporary
    folder, stopped at the end. Skips (a failure under ACP2_NO_SKIPS=1, as in CI) when
    PostgreSQL or psycopg is not installed."""
    binaries = find_binaries()
    if binaries is None:
        pytest.skip(
            "PostgreSQL is not installed (no initdb/pg_ctl/postgres on PATH or in"
            " /usr/lib/postgresql/*/bin; scripts/ensure-system-packages.sh installs it)"
        )
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed: pip install -e '.[postgres]'")
    cluster = Cluster(binaries)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def postgres_url(postgres_cluster: Cluster) -> str:
    """The URL of a new, empty database of its own for this test."""
    return postgres_cluster.create_database()


@pytest.fixture(params=["sqlite", "postgres"])
def store_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """Each store backend in turn, on a new database (tests/helpers/stores.py)."""
    if request.param == "sqlite":
        return sqlite_backend(tmp_path)
    return Backend("postgres", request.getfixturevalue("postgres_url"))
