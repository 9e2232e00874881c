"""The slow tier: real v1 agents (Gemini CLI, fast-agent) installed from lockfiles.

Every test here carries the ``real_agents`` marker (``pytestmark``) and is deselected
unless the run asks for it: ``-m real_agents`` (any ``-m`` expression naming the marker)
or ``ACP2_REAL_AGENTS=1``. ``bash scripts/test.sh -m real_agents tests/real_agents`` runs
the tier. An agent that cannot be installed here skips its tests with the reason, or
fails them when ``ACP2_REQUIRE_REAL_AGENTS=1``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

from . import install

MARKER = "real_agents"
RUN_ENV = "ACP2_REAL_AGENTS"
REQUIRE_ENV = "ACP2_REQUIRE_REAL_AGENTS"
HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the tests of this folder unless the run asks for them (each module
    also sets ``pytestmark = pytest.mark.real_agents``, so ``-m`` selects them)."""
    mine = [item for item in items if HERE in Path(str(item.path)).resolve().parents]
    asked = MARKER in (config.option.markexpr or "") or os.environ.get(RUN_ENV) == "1"
    if asked or not mine:
        return
    chosen = set(mine)
    config.hook.pytest_deselected(items=mine)
    items[:] = [item for item in items if item not in chosen]


def skip_or_fail(reason: str) -> NoReturn:
    """Skip with ``reason``, or fail under ``ACP2_REQUIRE_REAL_AGENTS=1``."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1 forbids skipping)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def gemini_js() -> Path:
    """The installed Gemini CLI 0.61.0 ``gemini.js`` (``npm ci`` on first use)."""
    try:
        return install.gemini_cli()
    except install.AgentUnavailable as exc:
        skip_or_fail(f"Gemini CLI unavailable: {exc}")


@pytest.fixture(scope="session")
def fast_agent_cmd() -> list[str]:
    """The argv of the installed fast-agent 0.10.48 (its venv made on first use)."""
    try:
        return install.fast_agent()
    except install.AgentUnavailable as exc:
        skip_or_fail(f"fast-agent unavailable: {exc}")


@pytest.fixture(scope="session")
def v2_adapters() -> Path:
    """The folder of the installed ACP v2 adapters (codex-acp 2.6.0, claude-agent-acp
    0.101.0; ``npm ci`` on first use)."""
    try:
        return install.v2_adapters()
    except install.AgentUnavailable as exc:
        skip_or_fail(f"the v2 adapters are unavailable: {exc}")


@pytest.fixture(scope="session")
def claude_v1_js() -> Path:
    """The installed claude-agent-acp 0.23.1 (ACP v1) ``dist/index.js`` (``npm ci`` on
    first use)."""
    try:
        return install.claude_v1_agent()
    except install.AgentUnavailable as exc:
        skip_or_fail(f"claude-agent-acp 0.23.1 unavailable: {exc}")
