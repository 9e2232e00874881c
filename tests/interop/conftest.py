"""Fixtures for the interop tests: the installed TypeScript SDK and Python SDKs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

from . import node_env, py_env

REQUIRE_ENV = "ACP2_REQUIRE_INTEROP"


def skip_or_fail(reason: str) -> NoReturn:
    """Skip with ``reason``, or fail when ``ACP2_REQUIRE_INTEROP=1`` (CI must not skip)."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1 forbids skipping)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def ts_sdk() -> Path:
    """The folder holding ``node_modules`` with the pinned TypeScript SDK.

    Installs it on first use (see ``node_env``); skips when node/npm is missing or
    the install fails, unless ``ACP2_REQUIRE_INTEROP=1``.
    """
    try:
        folder = node_env.ensure_installed()
    except node_env.NodeUnavailable as exc:
        skip_or_fail(f"interop peers unavailable: {exc}")
    return folder


def _python_sdk(lock: str) -> Path:
    try:
        return py_env.ensure_installed(lock)
    except py_env.PythonSdkUnavailable as exc:
        skip_or_fail(f"Python SDK {py_env.VERSIONS[lock]} unavailable: {exc}")


@pytest.fixture(scope="session")
def py_sdk_v2() -> Path:
    """The ``python`` of a venv holding ``agent-client-protocol==1.0.0rc3`` (its
    ``acp.experimental.v2`` speaks ACP v2), installed from ``py/requirements-v2.txt``
    on first use (see ``py_env``); skips when that fails, unless ``ACP2_REQUIRE_INTEROP=1``.
    """
    return _python_sdk("v2")


@pytest.fixture(scope="session")
def py_sdk_v1() -> Path:
    """The ``python`` of a venv holding ``agent-client-protocol==0.12.1`` (ACP v1),
    installed from ``py/requirements-v1.txt``; skips as ``py_sdk_v2`` does."""
    return _python_sdk("v1")
