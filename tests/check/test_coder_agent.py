"""``acp2 check`` against the built-in coding agent (``acp2 agent --model scripted``).

The prompts are the ones an agent author would use for an LLM agent: a short question, a
long task to cancel, and a task that needs permission (the checker answers with reject).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from check_support import check, checker_errors, failing

from acp2.coder.sample import copy_sample_project

pytestmark = pytest.mark.anyio

CODER = [sys.executable, "-m", "acp2", "agent", "--model", "scripted"]


async def test_the_coding_agent_is_conformant_under_the_seed_revision(tmp_path: Path) -> None:
    project = tmp_path / "project"
    copy_sample_project(project)
    report = await check(
        CODER,
        cwd=str(project),
        timeout=10.0,
        prompt="Say hello in one short sentence.",
        cancel_prompt="fix the failing test",
        permission_prompt="fix the failing test",
    )
    assert checker_errors(report) == []
    assert report.verdict == "CONFORMANT", failing(report)
