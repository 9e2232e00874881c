"""Shared helpers for the ``acp2 check`` tests: agent commands and a bounded check run."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from acp2.check import CheckOptions, Report, run_check
from acp2.check.preflight import preflight
from acp2.check.timing import STARTUP_FACTOR
from helpers.timeouts import RUN_TIMEOUT, SCENARIO_TIMEOUT

AGENTS = Path(__file__).parent / "agents"
REFERENCE = [sys.executable, str(AGENTS / "reference_agent.py")]
TEST_AGENT = [
    sys.executable,
    "-c",
    "from acp2.testing.scenarios import build_test_agent; build_test_agent().run()",
]
#: The per-wait bound of the tests' checks on an idle machine, in seconds.
SHORT_WAIT = 3.0
#: The longest per-wait bound the tests' checks scale up to on a loaded machine.
LONGEST_WAIT = 15.0
#: The scenario prompts both the test agent and the reference agent understand.
PROMPTS = {"prompt": "echo hello", "cancel_prompt": "wait", "permission_prompt": "permission"}


def options(argv: Sequence[str], **overrides: Any) -> CheckOptions:
    """Check options for the test agents: short waits, six agent processes at once (the
    machine-derived default is tested in test_timing), scenario prompts, and the seed's
    revision (``aug``) that the row ids of these tests name (the CLI defaults to the
    Preview)."""
    fields: dict[str, Any] = {
        "draft": "aug",
        "timeout": SHORT_WAIT,
        "grace": 0.3,
        "jobs": 6,
        **PROMPTS,
        **overrides,
    }
    return CheckOptions(argv=list(argv), **fields)


async def check(argv: Sequence[str], **overrides: Any) -> Report:
    """Run a whole check, bounded by twenty of its waits. Without an explicit
    ``timeout`` the waits are :data:`SHORT_WAIT`, longer when the agent starts slowly now
    (see :func:`scaled_wait`): a fixed 3 s made "initialize got no answer" flake under
    load, while a real failure fails whatever the wait."""
    chosen = options(argv, **overrides)
    if "timeout" not in overrides:
        chosen = dataclasses.replace(chosen, timeout=await scaled_wait(chosen))
    with anyio.fail_after(20 * (chosen.timeout or LONGEST_WAIT) + SCENARIO_TIMEOUT):
        return await run_check(chosen)


async def scaled_wait(chosen: CheckOptions) -> float:
    """:data:`SHORT_WAIT`, or ``STARTUP_FACTOR`` times the agent's start-up measured now
    (as ``acp2 check`` measures it) when that is longer, at most :data:`LONGEST_WAIT`.
    An agent that cannot be measured gets :data:`SHORT_WAIT`; the check says why."""
    with anyio.fail_after(RUN_TIMEOUT):
        first = await preflight(dataclasses.replace(chosen, timeout=LONGEST_WAIT))
    if first.problem is not None:
        return SHORT_WAIT
    return min(LONGEST_WAIT, max(SHORT_WAIT, round(STARTUP_FACTOR * first.startup, 1)))


def failing(report: Report) -> set[str]:
    """The keys of the rows that decide a NOT CONFORMANT verdict."""
    return {row.requirement.key for row in report.blocking()}


def checker_errors(report: Report) -> list[str]:
    """Reasons that reveal a bug in the checker itself (must always be empty)."""
    return [r.reason for r in report.rows.values() if "the checker failed" in r.reason]
