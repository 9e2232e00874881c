"""acp2's client against the official Python SDK 0.12.1 v1 agent's sessions (issue 26,
fault 3): the agent advertises ``loadSession`` and nothing of ``sessionCapabilities``,
and its SDK answers the v1 methods it does not implement with ``null``. The bridge sends
it none of them: resume goes through ``session/load`` (the replay withheld), close is
local, list is refused here with a clear ``-32601``."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from acp2.client import connect
from acp2.errors import MethodNotFound
from helpers.timeouts import SCENARIO_TIMEOUT as TIMEOUT

from .test_acp2_client_vs_py_v1_agent import v1_agent, valid_v1_wire

pytestmark = pytest.mark.interop


@pytest.mark.anyio
async def test_resume_close_and_list_of_a_python_sdk_v1_agent_never_send_it_a_method_it_lacks(
    py_sdk_v1: Path, tmp_path: Path
) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(v1_agent(py_sdk_v1, log), cwd=tmp_path) as client:
            first = await client.new_session()
            assert await (await first.prompt("echo first")).wait() == "end_turn"
            await first.close()  # local: the agent has no session/close
            with pytest.raises(MethodNotFound, match=r"does not advertise sessionCapabilities"):
                await client.list_sessions()
            resumed = await client.resume(first.id)
            assert not resumed.state.messages  # the load's replay was withheld
            work = await resumed.prompt("echo second")
            assert await work.wait() == "end_turn"
            assert work.text == "second"
    frames = valid_v1_wire(log)
    sent = [f.method for f in frames if f.sender == "client" and f.kind == "request"]
    assert sent == ["initialize", "session/new", "session/prompt", "session/load", "session/prompt"]
