"""A durable stream -- a WebSocket, or Streamable HTTP's SSE streams -- outlives its
server process on one machine (SQLite): the server is killed mid-stream and started
again on the same port and history file; the client's resume (the upgrade, or each
stream's reopen) finds the connection's cursor in the file and the new process rebuilds
what the client missed from the history (no new connection, no session/resume with
replay).

The same over PostgreSQL and two nodes behind a balancer is in test_scale_out.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp2.client import connect_url
from acp2.schema import AgentMessageChunk
from acp2.transport.backoff import Backoff
from helpers.serve_process import listening_port
from helpers.timeouts import PROCESS_TIMEOUT, SCENARIO_TIMEOUT

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CWD = "/tmp/acp2-agent-tests"
BACKOFF = Backoff(initial=0.05, max_delay=0.5, max_attempts=None, max_elapsed=60)


class Server:
    """One ``acp2 serve --test-agent`` process on a SQLite file (started again at will)."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self.port = 0
        self.process: subprocess.Popen[str] | None = None
        self.lines: list[str] = []

    def start(self) -> None:
        env = dict(os.environ, ACP2_DATA_DIR=str(self.store.parent))
        env.pop("ACP2_TOKEN", None)
        argv = [sys.executable, "-m", "acp2", "serve", "--test-agent", "--no-token"]
        argv += ["--port", str(self.port)]
        self.process = subprocess.Popen(
            [*argv, "--store", str(self.store)], stderr=subprocess.PIPE, text=True, env=env
        )
        self.port = listening_port(self.process, self.lines)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(PROCESS_TIMEOUT)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(PROCESS_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(PROCESS_TIMEOUT)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    pytest.importorskip("uvicorn", reason="acp2 serve needs the server extra")
    running = Server(tmp_path / "history.sqlite3")
    running.start()
    try:
        yield running
    finally:
        running.stop()


@pytest.mark.parametrize("transport", ["websocket", "http"])
async def test_a_durable_stream_survives_a_restart_of_its_server_on_the_same_file(
    server: Server, transport: Any
) -> None:
    texts: list[str] = []
    seen_enough = anyio.Event()

    def listen(update: Any, raw: bytes) -> None:
        if isinstance(update, AgentMessageChunk):
            texts.append(update.content.text)
            if len(texts) >= 300:
                seen_enough.set()

    url = f"http://127.0.0.1:{server.port}/acp"
    with anyio.fail_after(SCENARIO_TIMEOUT * 2):
        async with connect_url(url, transport=transport, cwd=CWD, reconnect=BACKOFF) as client:
            session = await client.new_session(on_update=listen)
            work = await session.prompt("stream 1000000")
            await seen_enough.wait()
            server.kill()
            await anyio.to_thread.run_sync(server.start)  # the same port, the same file
            await work.wait()  # the turn died with its process: it ends, it is not rerun
            again = await session.prompt("echo still here")
            assert await again.wait() == "end_turn"
            logs = "".join(server.lines)[-3000:]
            assert client.remote.rejoins == 0, logs
            assert client.remote.reconnects >= 1
            seen = session.state
        assert "".join(texts).endswith("still here")
        streamed = "".join(texts).removesuffix("still here")
        count = len(streamed.split())
        assert count >= 300
        assert streamed == "".join(f"{i} " for i in range(count))
        async with connect_url(url, transport="http", cwd=CWD) as fresh_client:
            fresh = await fresh_client.resume(session.id, replay=True)
            assert fresh.state.timeline == seen.timeline
