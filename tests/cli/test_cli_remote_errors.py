"""Errors about a remote agent are worded for a URL, not for a process started here: a
real ``acp2 serve --test-agent`` on 127.0.0.1 that goes away for good."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from attach_helpers import free_port, serve_process
from cli_helpers import ACP2, isolated_env, run_acp2

from acp2.client import connect_url
from acp2.errors import AgentClosed
from acp2.transport.backoff import Backoff
from helpers.serve_process import listening_port
from helpers.timeouts import PROCESS_TIMEOUT, TIMEOUT


@pytest.mark.anyio
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


def test_a_served_agent_that_cannot_start_is_reported_for_the_url(tmp_path: Path) -> None:
    """``acp2 serve -- AGENT`` whose agent exits at once (a missing one is refused at
    start-up, tests/cli/test_serve_startup_errors.py): the client's error names the URL
    and the server's log, not a local stderr."""
    env = isolated_env(tmp_path / "data")
    dies = [sys.executable, "-c", "raise SystemExit(1)"]
    argv = [*ACP2, "serve", "--no-token", "--port", "0", "--", *dies]
    server = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        url = f"http://127.0.0.1:{listening_port(server, [])}/acp"
        done = run_acp2("run", "hi", "--url", url, stdin="", env=env, cwd=tmp_path)
    finally:
        server.terminate()
        server.wait(PROCESS_TIMEOUT)
    assert done.returncode == 3
    assert f"The remote agent at {url} closed the connection before answering" in done.stderr
    assert "stderr" not in done.stderr


@pytest.mark.anyio
async def test_run_says_it_is_reconnecting_while_the_server_is_away(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "data")
    port = free_port()
    said = b""
    with contextlib.ExitStack() as first:
        url = first.enter_context(serve_process(env, port))
        argv = [*ACP2, "run", "--json", "wait", "--url", url]  # --json: updates as they come
        run = await anyio.open_process(argv, env=env, cwd=tmp_path)
        try:
            assert run.stdout is not None
            assert run.stderr is not None
            with anyio.fail_after(TIMEOUT):
                seen = b""
                async for chunk in run.stdout:
                    seen += chunk
                    if b"Waiting until cancelled" in seen:
                        break  # the turn runs
                first.close()  # the server goes away mid-turn
                async for chunk in run.stderr:
                    said += chunk
                    if b"reconnecting, attempt" in said:
                        break
        finally:
            run.kill()
            with anyio.CancelScope(shield=True):
                await run.wait()
            await run.aclose()
    assert f"the link to {url} dropped: reconnecting, attempt 1 in".encode() in said
