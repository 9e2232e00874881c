"""acp2's remote client (``connect_url``, Streamable HTTP in plain mode) drives the TypeScript
SDK 2.4.0 test agent served by the SDK's own ``experimental/server`` (``ts/server.mjs``).

Every frame that crosses the HTTP transport, both ways, is logged and must be valid under
both drafts, as in the stdio interop tests. The SDK's server grants no durability, so
these also show that the client falls back to a plain link.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

import schema_validation
from acp2.client import allow_all, connect_transport, connect_url
from acp2.transport.http_client import HttpTransport, open_http
from helpers.timeouts import SCENARIO_TIMEOUT as TIMEOUT

from .peers import TS_DIR, node
from .remote_tap import TapTransport

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

CWD = "/tmp/acp2-client-tests"


@pytest.fixture
def ts_server(ts_sdk: Path) -> Iterator[tuple[str, str]]:
    """The SDK's server on a free port: yields its ``/acp`` URL and its mode."""
    env = {**os.environ, "ACP2_TS_SDK": str(ts_sdk), "ACP2_TS_PORT": "0"}
    proc = subprocess.Popen(
        [node(), str(TS_DIR / "server.mjs"), "--sdk", str(ts_sdk)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        words = proc.stdout.readline().split()
        assert words[:1] == ["listening"], words
        yield f"http://127.0.0.1:{words[1]}/acp", words[2]
    finally:
        proc.terminate()
        proc.wait(TIMEOUT)


def valid(log: Path) -> None:
    result = schema_validation.check_log(log)
    assert result.problems == []
    assert result.frames > 0


async def test_a_full_turn_over_streamable_http_with_every_frame_valid(
    ts_server: tuple[str, str], tmp_path: Path
) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with open_http(ts_server[0]) as http:
            tapped = TapTransport(http, log)
            async with connect_transport(tapped, cwd=CWD, permissions=allow_all) as client:
                assert http.retention is None  # the SDK's server is plain
                session = await client.new_session()
                work = await session.prompt("echo hello over http")
                assert await work.wait() == "end_turn"
                assert work.text == "hello over http"
                tools = await session.prompt("tools")
                assert await tools.wait() == "end_turn"
                assert session.id in http.streams
    valid(log)


async def test_two_sessions_get_their_own_streams_and_their_own_updates(
    ts_server: tuple[str, str],
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect_url(ts_server[0], transport="http", cwd=CWD) as client:
            first, second = await client.new_session(), await client.new_session()
            works = [await first.prompt("stream 200"), await second.prompt("echo second")]
            assert [await w.wait() for w in works] == ["end_turn", "end_turn"]
            assert works[0].text == "".join(f"{i}," for i in range(200))
            assert works[1].text == "second"
            http = client.remote.current
            assert isinstance(http, HttpTransport)
            assert {first.id, second.id} <= http.streams


async def test_auto_falls_back_to_http_when_the_server_refuses_the_upgrade(
    ts_server: tuple[str, str],
) -> None:
    url, mode = ts_server
    if mode == "websocket":
        pytest.skip("this SDK server accepts WebSocket upgrades")
    with anyio.fail_after(TIMEOUT):
        async with connect_url(url, cwd=CWD) as client:
            assert isinstance(client.remote.current, HttpTransport)
            session = await client.new_session()
            work = await session.prompt("echo fallback")
            assert await work.wait() == "end_turn"
            assert work.text == "fallback"


async def test_resume_of_a_session_on_a_new_connection_replays_it(
    ts_server: tuple[str, str],
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect_url(ts_server[0], transport="http", cwd=CWD) as client:
            session = await client.new_session()
            work = await session.prompt("echo remembered")
            assert await work.wait() == "end_turn"
            state = session.state
        async with connect_url(ts_server[0], transport="http", cwd=CWD) as again:
            count = len(state.messages)
            resumed = await again.resume(session.id, replay=True, known=state)
            assert resumed.state.foreground == "idle"
            assert len(resumed.state.messages) == count  # the replay doubled nothing
