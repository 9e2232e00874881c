"""acp2's remote client (``connect_url``, WebSocket and Streamable HTTP in plain mode) drives
the TypeScript SDK 2.4.0 test agent served by the SDK's own ``experimental/server``
(``ts/server.mjs``, WebSocket upgrades through the ``ws`` package as the SDK expects).

Every frame that crosses the HTTP transport, both ways, is logged and must be valid under
both drafts, as in the stdio interop tests. The SDK's server grants no durability, so
these also show that the client falls back to a plain link.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

import schema_validation
from acp2.client import allow_all, connect_transport, connect_url
from acp2.transport.backoff import Backoff
from acp2.transport.http_client import HttpTransport, open_http
from acp2.transport.remote import ws_url
from acp2.transport.ws_client import WebSocketTransport, open_websocket
from helpers.cutproxy import cut_proxy
from helpers.timeouts import SCENARIO_TIMEOUT as TIMEOUT

from .peers import TS_DIR, node
from .remote_tap import TapTransport

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

CWD = "/tmp/acp2-client-tests"


@contextmanager
def running_ts_server(ts_sdk: Path, *, http_only: bool = False) -> Iterator[tuple[str, str]]:
    """The SDK's server on a free port: yields its ``/acp`` URL and its mode."""
    env = {**os.environ, "ACP2_TS_SDK": str(ts_sdk), "ACP2_TS_PORT": "0"}
    if http_only:
        env["ACP2_TS_HTTP_ONLY"] = "1"
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


@pytest.fixture
def ts_server(ts_sdk: Path) -> Iterator[tuple[str, str]]:
    """The SDK's server, WebSocket upgrades accepted."""
    with running_ts_server(ts_sdk) as found:
        yield found


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


async def test_a_full_turn_over_a_websocket_with_every_frame_valid(
    ts_server: tuple[str, str], tmp_path: Path
) -> None:
    url, mode = ts_server
    assert mode == "websocket"
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with open_websocket(ws_url(url)) as ws:
            tapped = TapTransport(ws, log)
            async with connect_transport(tapped, cwd=CWD, permissions=allow_all) as client:
                assert ws.retention is None  # no durability from the SDK's server
                assert ws.connection_id
                session = await client.new_session()
                work = await session.prompt("stream 300")
                assert await work.wait() == "end_turn"
                assert work.text == "".join(f"{i}," for i in range(300))
                tools = await session.prompt("tools")
                assert await tools.wait() == "end_turn"
    valid(log)


async def test_auto_prefers_the_websocket(ts_server: tuple[str, str]) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect_url(ts_server[0], cwd=CWD) as client:
            assert isinstance(client.remote.current, WebSocketTransport)
            work = await (await client.new_session()).prompt("echo over ws")
            assert await work.wait() == "end_turn"
            assert work.text == "over ws"


async def test_auto_falls_back_to_http_when_the_server_refuses_the_upgrade(
    ts_sdk: Path,
) -> None:
    with running_ts_server(ts_sdk, http_only=True) as (url, mode), anyio.fail_after(TIMEOUT):
        assert mode == "http-only"
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


@pytest.mark.parametrize("profile", ["websocket", "http"])
async def test_a_cut_plain_link_rejoins_with_session_resume_and_doubles_nothing(
    ts_server: tuple[str, str], profile: str
) -> None:
    port = int(ts_server[0].rsplit(":", 1)[1].split("/")[0])
    backoff = Backoff(initial=0.01, max_delay=0.2, max_attempts=50, max_elapsed=20)
    with anyio.fail_after(TIMEOUT):
        async with (
            cut_proxy(port) as proxy,
            connect_url(
                f"http://127.0.0.1:{proxy.port}/acp", transport=profile, cwd=CWD, reconnect=backoff
            ) as client,
        ):
            session = await client.new_session()
            assert await (await session.prompt("echo one")).wait() == "end_turn"
            assert proxy.cut() > 0
            # The SDK's agent ignores idempotencyKey: a prompt posted before the client saw
            # the cut would run twice after the rejoin, so this one waits for it.
            await client.remote.wait_rejoins(1)
            work = await session.prompt("echo two")
            assert await work.wait() == "end_turn"
            assert work.text == "two"
            assert client.remote.rejoins == 1
            assert len(session.state.messages) == 4  # the replay rebuilt, not doubled
