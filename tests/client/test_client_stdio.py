"""End to end over real stdio: the client drives ``acp2 test-agent`` in a subprocess."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from acp2.client import allow_all, connect, deny_all
from acp2.schema import AgentMessageChunk
from acp2.schema.codec import decode_any
from helpers.timeouts import SCENARIO_TIMEOUT

pytestmark = pytest.mark.anyio


def agent_argv(*extra: str) -> list[str]:
    """argv for ``acp2 test-agent`` run with this interpreter."""
    return [sys.executable, "-m", "acp2.cli.main", "test-agent", *extra]


async def test_echo_over_stdio(tmp_path: Path) -> None:
    """The whole lifecycle over a subprocess: initialize, new, prompt, idle."""
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with connect(agent_argv(), cwd=tmp_path) as client:
            assert client.agent_info.name == "acp2-test-agent"
            session = await client.new_session()
            assert session.cwd == str(tmp_path)
            work = await session.prompt("echo over stdio")
            assert await work.wait() == "end_turn"
            assert work.text == "over stdio"


@pytest.mark.parametrize(
    ("policy", "status"), [(allow_all, "completed"), (deny_all, "failed")], ids=["allow", "deny"]
)
async def test_tools_over_stdio(tmp_path: Path, policy: object, status: str) -> None:
    """PR-06 over stdio: allow completes the tool, deny fails it."""
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with connect(agent_argv(), cwd=tmp_path, permissions=policy) as client:  # type: ignore[arg-type]
            session = await client.new_session()
            assert await (await session.prompt("tools")).wait() == "end_turn"
            (call,) = session.state.tool_calls.values()
            assert call.status == status


async def test_cancel_over_stdio_mid_turn_and_during_a_permission_wait(tmp_path: Path) -> None:
    """PL-16, PL-18 over stdio: both cancels end with idle/cancelled."""
    asked = anyio.Event()

    async def wait_forever(request: object) -> None:
        asked.set()
        await anyio.sleep_forever()

    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with connect(agent_argv(), cwd=tmp_path, permissions=wait_forever) as client:
            session = await client.new_session()
            work = await session.prompt("wait")
            async for update in work:
                if isinstance(update, AgentMessageChunk):
                    break
            assert await work.cancel() == "cancelled"
            work = await session.prompt("tools")
            await asked.wait()
            assert await work.cancel() == "cancelled"
            (call,) = session.state.tool_calls.values()
            assert call.status == "cancelled"


async def test_resume_with_replay_over_stdio_in_a_new_process(tmp_path: Path) -> None:
    """SS-12 across processes: history stored by one agent process is replayed by the next."""
    store = str(tmp_path / "history.sqlite")
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with connect(agent_argv("--store", store), cwd=tmp_path) as client:
            session = await client.new_session()
            await (await session.prompt("echo remembered")).wait()
            session_id = session.id
        async with connect(agent_argv("--store", store), cwd=tmp_path) as client:
            assert session_id in {info.session_id for info in await client.list_sessions()}
            resumed = await client.resume(session_id, replay=True)
            assert resumed.state.agent_text() == "remembered"
            assert await (await resumed.prompt("echo again")).wait() == "end_turn"


async def test_an_unknown_update_passes_through_stdio_byte_exact(tmp_path: Path) -> None:
    """EX-07 over stdio: the `_acp2/custom` update reaches the listener unchanged."""
    raws: list[bytes] = []
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with connect(agent_argv(), cwd=tmp_path) as client:
            session = await client.new_session(on_update=lambda u, raw: raws.append(raw))
            await (await session.prompt("ext")).wait()
    custom = [decode_any(r) for r in raws if b"_acp2/custom" in r]
    assert custom == [{"sessionUpdate": "_acp2/custom", "payload": {"n": 1, "text": "custom"}}]
