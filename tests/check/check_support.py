"""Shared helpers for the ``acp2 check`` tests: agent commands and a bounded check run."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from acp2.check import CheckOptions, Report, run_check

AGENTS = Path(__file__).parent / "agents"
REFERENCE = [sys.executable, str(AGENTS / "reference_agent.py")]
TEST_AGENT = [
    sys.executable,
    "-c",
    "from acp2.testing.scenarios import build_test_agent; build_test_agent().run()",
]
#: The scenario prompts both the test agent and the reference agent understand.
PROMPTS = {"prompt": "echo hello", "cancel_prompt": "wait", "permission_prompt": "permission"}


def options(argv: Sequence[str], **overrides: Any) -> CheckOptions:
    """Check options for the test agents: short waits, six agent processes at once (the
    machine-derived default is tested in test_timing), scenario prompts."""
    fields: dict[str, Any] = {"timeout": 3.0, "grace": 0.3, "jobs": 6, **PROMPTS, **overrides}
    return CheckOptions(argv=list(argv), **fields)


async def check(argv: Sequence[str], **overrides: Any) -> Report:
    """Run a whole check, bounded by one minute."""
    with anyio.fail_after(60):
        return await run_check(options(argv, **overrides))


def failing(report: Report) -> set[str]:
    """The keys of the rows that decide a NOT CONFORMANT verdict."""
    return {row.requirement.key for row in report.blocking()}


def checker_errors(report: Report) -> list[str]:
    """Reasons that reveal a bug in the checker itself (must always be empty)."""
    return [r.reason for r in report.rows.values() if "the checker failed" in r.reason]
