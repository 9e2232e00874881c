"""Attack: FIFOs and sockets in the workspace (issue 10, §3). Before, ``edit_file`` on a
FIFO blocked in ``open`` until someone opened the other end, freezing the agent. Now only
regular files are read or edited; the open never blocks (``O_NONBLOCK``) and the
descriptor is checked with ``fstat``."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import anyio
import pytest

from acp2.client import allow_all
from hostile.coder_attack_helpers import (
    TIMEOUT,
    agent_for,
    coder_session,
    serve,
    text_reply,
    told_to_model,
    tool_reply,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs"),
]


async def test_every_file_tool_refuses_a_fifo_at_once_and_the_turn_goes_on(
    tmp_path: Path,
) -> None:
    os.mkfifo(tmp_path / "pipe")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock"))
        calls = [
            ("f1", "read_file", {"path": "pipe"}),
            ("f2", "edit_file", {"path": "pipe", "old_string": "a", "new_string": "b"}),
            ("f3", "write_file", {"path": "pipe", "content": "x"}),
            ("f4", "search", {"pattern": "x"}),
            ("f5", "read_file", {"path": "sock"}),
        ]
        with serve() as fake, anyio.fail_after(TIMEOUT):
            fake.add(tool_reply(calls), text_reply("ok"))
            async with coder_session(agent_for(fake), tmp_path, permissions=allow_all) as s:
                assert await (await s.prompt("read the pipe")).wait() == "end_turn"
                statuses = [c.status for c in s.state.tool_calls.values()]
    told = told_to_model(fake)
    assert told[0] == "Error: pipe is not a regular file (a FIFO)"
    assert told[1] == told[2] == told[0]
    assert told[3] == "No matches."
    assert "sock is not a regular file" in told[4]
    assert statuses == ["failed", "failed", "failed", "completed", "failed"]
    assert (tmp_path / "pipe").is_fifo()
