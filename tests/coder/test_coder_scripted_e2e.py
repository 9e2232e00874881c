"""The scripted model drives the real agent on the sample project, end to end: every
part of the prompt lifecycle appears, with no network."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from coder_helpers import TIMEOUT, Recorder, coder_session, kinds, snapshot, text_of, thoughts_of

from acp2.client import deny_all
from acp2.coder import build_coder_agent
from acp2.coder.sample import copy_sample_project
from acp2.schema import Diff, StateUpdate

pytestmark = pytest.mark.anyio


async def unittest_passes(project: Path) -> bool:
    done = await anyio.run_process([sys.executable, "-m", "unittest"], cwd=project, check=False)
    return done.returncode == 0


async def test_the_scripted_agent_fixes_the_sample_project_showing_every_part_of_a_turn(
    tmp_path: Path,
) -> None:
    project = copy_sample_project(tmp_path / "sample")
    assert not await unittest_passes(project)
    agent = build_coder_agent("scripted", store=":memory:", python=sys.executable)
    policy = Recorder("allow_once")
    with anyio.fail_after(TIMEOUT):
        async with coder_session(agent, project, permissions=policy) as session:
            work = await session.prompt("Please fix the failing test.")
            assert await work.wait() == "end_turn"
            state = session.state
    assert await unittest_passes(project)
    seen = kinds(work.updates)
    for kind in (
        "agent_thought_chunk",
        "agent_message_chunk",
        "plan_update",
        "usage_update",
        "tool_call_update",
        "terminal_output_chunk",
        "terminal_update",
    ):
        assert kind in seen
    assert [s.state for s in work.updates if isinstance(s, StateUpdate)] == [
        "running",
        "requires_action",
        "running",
        "requires_action",
        "running",
        "idle",
    ]
    calls = list(state.tool_calls.values())
    assert [(c.kind, c.status) for c in calls] == [
        ("search", "completed"),
        ("read", "completed"),
        ("read", "completed"),
        ("edit", "completed"),
        ("execute", "completed"),
    ]
    assert isinstance(calls[3].content[0], Diff)
    assert [r.title for r in policy.requests] == [
        "Edit mathkit/series.py?",
        f"Run `{sys.executable} -m unittest -v`?",
    ]
    terminal = next(iter(state.terminals.values()))
    assert terminal.exit_status.exit_code == 0
    assert b"OK" in bytes(terminal.output)
    plan = next(iter(state.plans.values())).plan
    assert [e.status for e in plan.entries] == ["completed"] * 4
    assert "The tests pass (Ran 6 tests: OK)." in text_of(work.updates)
    assert "first value is skipped" in thoughts_of(work.updates)


async def test_when_the_user_says_no_the_sample_project_is_left_untouched(
    tmp_path: Path,
) -> None:
    project = copy_sample_project(tmp_path / "sample")
    before = snapshot(project)
    agent = build_coder_agent("scripted", store=":memory:", python=sys.executable)
    with anyio.fail_after(TIMEOUT):
        async with coder_session(agent, project, permissions=deny_all) as session:
            work = await session.prompt("Please fix the failing test.")
            assert await work.wait() == "end_turn"
            statuses = [c.status for c in session.state.tool_calls.values()]
    assert snapshot(project) == before
    assert statuses[-1] == "failed"
    assert "I left the file unchanged" in text_of(work.updates)
