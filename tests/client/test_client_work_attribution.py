"""Which work an update belongs to, against a real agent that writes each turn in one
burst (``tests/hostile/burst_agent.py``): an ``idle`` before a prompt's response on the
wire belongs to earlier work, one after it to the prompt's work."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from acp2.client import connect
from acp2.schema import StateUpdate, ToolCallUpdate
from helpers.timeouts import PROCESS_TIMEOUT as TIMEOUT

pytestmark = pytest.mark.anyio

AGENT = [sys.executable, str(Path(__file__).parents[1] / "hostile" / "burst_agent.py")]


async def test_a_held_prompt_answered_after_the_previous_idle_gets_its_own_idle() -> None:
    """The first work is still running when the second prompt is sent; the agent writes
    the first work's idle, then the second answer and turn, in one burst: each work ends
    with its own idle (PL-22)."""
    with anyio.fail_after(TIMEOUT):
        async with connect(AGENT) as client:
            session = await client.new_session("/tmp")
            first = await session.prompt("open")
            assert not first.done
            second = await session.prompt("burst")
            assert await first.wait() == "end_turn"
            assert await second.wait() == "end_turn"
            assert first.text == second.text == "hi"
            items = [u async for u in second]
            assert isinstance(items[0], StateUpdate)
            assert items[0].state == "running"
            assert sum(isinstance(u, StateUpdate) and u.state == "idle" for u in items) == 1
            assert session.state.completed == 2


async def test_an_idle_snapshot_of_background_work_before_the_answer_does_not_end_the_work() -> (
    None
):
    """A background tool call and the idle snapshot listing it arrive after the prompt was
    sent but before its answer: they are not the work's; its end is the turn's idle."""
    with anyio.fail_after(TIMEOUT):
        async with connect(AGENT) as client:
            session = await client.new_session("/tmp")
            work = await session.prompt("background")
            assert await work.wait() == "end_turn"
            items = [u async for u in work]
            assert not any(isinstance(u, ToolCallUpdate) for u in items)
            assert work.text == "hi"
            assert session.state.tool_calls["bg1"].status == "in_progress"
