"""Errors about a remote agent are worded for a URL, not for a process started here: a
real ``acp2 serve --test-agent`` on 127.0.0.1 that goes away for good."""

from __future__ import annotations

import contextlib
from pathlib import Path

import anyio
import pytest
from attach_helpers import free_port, serve_process
from cli_helpers import isolated_env

from acp2.client import connect_url
from acp2.errors import AgentClosed
from acp2.transport.backoff import Backoff
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


async def test_a_remote_agent_that_is_gone_for_good_is_named_by_its_url(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "data")
    port = free_port()
    quick = Backoff(initial=0.05, max_delay=0.1, max_attempts=3, max_elapsed=1.0)
    with contextlib.ExitStack() as server:
        url = server.enter_context(serve_process(env, port))
        with anyio.fail_after(TIMEOUT):
            async with connect_url(url, reconnect=quick) as client:
                session = await client.new_session(str(tmp_path))
                server.close()  # the server stops and does not come back
                with pytest.raises(AgentClosed) as failed:
                    await (await session.prompt("echo lost")).wait()
    message = str(failed.value)
    assert f"The connection to the remote agent at {url} ended" in message
    assert "stderr" not in message  # there is no local agent process
    assert "its log says more" in message
