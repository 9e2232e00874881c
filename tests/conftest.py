"""Shared pytest configuration: anyio on asyncio for every async test, and the session
working directories the helpers use (the agent runtime refuses a ``cwd`` that is not an
existing directory)."""

from __future__ import annotations

import os

import pytest

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
