"""Fixtures for the interop tests: the installed TypeScript SDK."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

from . import node_env

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
