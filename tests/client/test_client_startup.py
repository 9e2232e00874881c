"""``connect`` before ``initialize`` succeeded: the agent cannot start, exits at once, or
prints on stdout. Real subprocesses; each error is a typed exception callers can catch
by its familiar base class too."""

from __future__ import annotations

import sys

import anyio
import pytest

from acp2.client import (
    AgentClosed,
    AgentExited,
    AgentStartError,
    AgentStrayOutput,
    connect,
)
from acp2.client.startup import STRAY_GRACE
from acp2.errors import Acp2Error, ConnectionClosed
from helpers.timeouts import PROCESS_TIMEOUT

pytestmark = pytest.mark.anyio

PY = sys.executable


async def test_a_command_not_on_path_is_agent_not_started_an_oserror() -> None:
    with anyio.fail_after(PROCESS_TIMEOUT):
        with pytest.raises(AgentStartError, match="command not found: acp2-no-such") as info:
            async with connect(["acp2-no-such"]):
                pytest.fail("connected")  # pragma: no cover
    assert isinstance(info.value, OSError)
    assert isinstance(info.value, Acp2Error)
    assert isinstance(info.value.__cause__, FileNotFoundError)


async def test_an_agent_exiting_at_once_is_agent_exited_with_its_status() -> None:
    agent = ["sh", "-c", "echo 'no API key' >&2; exit 4"]
    with anyio.fail_after(PROCESS_TIMEOUT):
        with pytest.raises(AgentExited) as info:
            async with connect(agent):
                pytest.fail("connected")  # pragma: no cover
    assert isinstance(info.value, AgentClosed)
    assert isinstance(info.value, ConnectionClosed)
    assert info.value.returncode == 4
    assert "exited with status 4 before answering initialize" in str(info.value)
    assert "no API key" in str(info.value)


async def test_a_stray_line_then_silence_is_agent_stray_output_within_the_grace() -> None:
    agent = [PY, "-c", "import time; print('hello', flush=True); time.sleep(30)"]
    with anyio.fail_after(STRAY_GRACE + 15):
        with pytest.raises(AgentStrayOutput) as info:
            async with connect(agent, initialize_timeout=60):
                pytest.fail("connected")  # pragma: no cover
    assert isinstance(info.value, TimeoutError)
    assert info.value.line == "'hello'"
    assert "stdout must carry only ACP messages" in str(info.value)


async def test_a_stray_line_then_exit_names_both_in_agent_exited() -> None:
    agent = [PY, "-c", "print('debug: starting')"]
    with anyio.fail_after(PROCESS_TIMEOUT):
        with pytest.raises(AgentExited, match="not JSON on stdout: 'debug: starting'"):
            async with connect(agent):
                pytest.fail("connected")  # pragma: no cover


async def test_a_banner_before_the_handshake_is_tolerated() -> None:
    agent = ["sh", "-c", f"echo 'agent v1'; exec {PY} -m acp2 test-agent"]
    with anyio.fail_after(PROCESS_TIMEOUT):
        async with connect(agent) as client:
            session = await client.new_session()
            work = await session.prompt("echo fine")
            assert await work.wait() == "end_turn"
            assert work.text == "fine"


async def test_an_agent_dying_after_initialize_is_still_a_plain_agent_closed() -> None:
    """AgentExited is only for the start: later the familiar AgentClosed is raised."""
    with anyio.fail_after(PROCESS_TIMEOUT):
        async with connect([PY, "-m", "acp2", "test-agent"]) as client:
            session = await client.new_session()
            await client.aclose()
            with pytest.raises(AgentClosed) as info:
                await session.prompt("echo x")
    assert not isinstance(info.value, AgentExited)
