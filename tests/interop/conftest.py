"""Fixtures for the interop tests: the installed TypeScript SDK and Python SDKs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from helpers.timeouts import SCENARIO_TIMEOUT
from helpers.warm import warm_python

from . import node_env, py_env
from .peers import WARM

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


#: What the warm server of each SDK venv imports: what the peers in py/ import.
WARM_IMPORTS = {
    "v1": ("asyncio", "argparse", "json", "acp", "acp.connection"),
    "v2": ("asyncio", "argparse", "json", "acp", "acp.connection", "acp.experimental.v2"),
}


def _python_sdk(lock: str) -> Iterator[Path]:
    try:
        python = py_env.ensure_installed(lock)
    except py_env.PythonSdkUnavailable as exc:
        skip_or_fail(f"Python SDK {py_env.VERSIONS[lock]} unavailable: {exc}")
    # Its peers start from a warm interpreter (helpers/warm.py): the SDK's import alone
    # costs seconds of CPU, paid once here instead of by each of hundreds of peers. Its
    # first peers would start cold (and compete with it) if it were not waited for; if it
    # takes longer still, they do, which is slower but no different.
    with warm_python(python, WARM_IMPORTS[lock]) as warm:
        if warm is not None:
            warm.listening(SCENARIO_TIMEOUT)
            WARM[python] = warm
        try:
            yield python
        finally:
            WARM.pop(python, None)


@pytest.fixture(scope="session")
def py_sdk_v2() -> Iterator[Path]:
    """The ``python`` of a venv holding ``agent-client-protocol==1.0.0rc3`` (its
    ``acp.experimental.v2`` speaks ACP v2), installed from ``py/requirements-v2.txt``
    on first use (see ``py_env``); skips when that fails, unless ``ACP2_REQUIRE_INTEROP=1``.
    Peers started with ``peers.py_command`` run warm (``peers.WARM``).
    """
    yield from _python_sdk("v2")


@pytest.fixture(scope="session")
def py_sdk_v1() -> Iterator[Path]:
    """The ``python`` of a venv holding ``agent-client-protocol==0.12.1`` (ACP v1),
    installed from ``py/requirements-v1.txt``; skips as ``py_sdk_v2`` does, and runs
    its peers warm as ``py_sdk_v2`` does."""
    yield from _python_sdk("v1")
