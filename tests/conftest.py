"""Shared pytest configuration: anyio on asyncio for every async test, and the session
working directories the helpers use (the agent runtime refuses a ``cwd`` that is not an
existing directory)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

# Imported here so that a bad ACP2_TEST_TIMEOUT_SCALE stops the run at start-up.
from helpers.timeouts import SCALE, SCALE_ENV, TIMEOUT

#: The ``cwd`` of the sessions the test helpers create (tests/*/..._helpers.py, harness).
SESSION_DIRS = ("/tmp/acp2-agent-tests", "/tmp/acp2-client-tests", "/tmp/acp2-ui-tests")


@pytest.fixture
def anyio_backend() -> str:
    """Run anyio tests on asyncio, the backend acp2 targets."""
    return "asyncio"


@pytest.fixture(autouse=True, scope="session")
def session_dirs() -> None:
    """Create the helpers' session directories once per test run."""
    for path in SESSION_DIRS:
        os.makedirs(path, exist_ok=True)


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
