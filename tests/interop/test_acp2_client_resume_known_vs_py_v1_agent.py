"""Resuming into a held state against a peer that replays chunk by chunk (RFD
session-replay-complete): the official Python SDK 0.12.1 v1 agent.

Its ``session/load`` replays the conversation as message chunks and sends no
``replay_complete``, so the ``session/load`` response is the replay boundary. Resuming
with ``known=`` the state the client already holds rebuilds those messages instead of
appending them a second time.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from acp2.client import connect
from acp2.state import MessageState

from .test_acp2_client_vs_py_v1_agent import TIMEOUT, v1_agent, valid_v1_wire

pytestmark = pytest.mark.interop


@pytest.mark.anyio
async def test_resuming_a_v1_session_into_the_held_state_doubles_no_chunked_message(
    py_sdk_v1: Path, tmp_path: Path
) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(v1_agent(py_sdk_v1, log), cwd=tmp_path) as client:
            first = await client.new_session()
            assert await (await first.prompt("echo first")).wait() == "end_turn"
            before = [e.text for e in first.state.timeline if isinstance(e, MessageState)]
            resumed = await client.resume(first.id, replay=True, known=first.state)
            after = [e.text for e in resumed.state.timeline if isinstance(e, MessageState)]
            assert after == before
            assert not resumed.replaying
            work = await resumed.prompt("echo second")
            assert await work.wait() == "end_turn"
            assert work.text == "second"
    valid_v1_wire(log)
