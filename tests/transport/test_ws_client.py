"""The WebSocket client transport against a real server on 127.0.0.1 (the durable test
server of tests/helpers/durable_ws.py): plain and durable links, resume after drops,
refusals, and the fall back to a plain link when durability is not granted."""

from __future__ import annotations

import anyio
import pytest

from acp2.client import connect_url
from acp2.errors import ConnectionClosed
from acp2.transport.backoff import Backoff
from acp2.transport.remote_base import RemoteRefused, ResumeRefused
from acp2.transport.ws_client import WebSocketTransport, open_websocket
from helpers.cutproxy import cut_proxy
from helpers.durable_ws import durable_ws_server
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

CWD = "/tmp/acp2-client-tests"
FAST = Backoff(initial=0.01, max_delay=0.2, max_attempts=50, max_elapsed=20)


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def _ws(client: object) -> WebSocketTransport:
    transport = client.remote.current  # type: ignore[attr-defined]
    assert isinstance(transport, WebSocketTransport)
    return transport


async def test_a_prompt_runs_over_a_durable_websocket_link() -> None:
    with anyio.fail_after(TIMEOUT):
        async with (
            durable_ws_server() as server,
            connect_url(server.url, transport="websocket", cwd=CWD) as client,
        ):
            assert _ws(client).retention is not None
            session = await client.new_session()
            work = await session.prompt("echo hello remote")
            assert await work.wait() == "end_turn"
            assert work.text == "hello remote"


async def test_a_server_that_does_not_grant_durability_gives_a_plain_link() -> None:
    with anyio.fail_after(TIMEOUT):
        async with (
            durable_ws_server(grant=False) as server,
            connect_url(server.url, transport="websocket", cwd=CWD) as client,
        ):
            assert _ws(client).retention is None
            session = await client.new_session()
            work = await session.prompt("echo plain")
            assert await work.wait() == "end_turn"
            assert work.text == "plain"


async def test_a_dropped_durable_link_resumes_without_loss_or_duplicates() -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with (
            durable_ws_server() as server,
            cut_proxy(_port(server.url)) as proxy,
            connect_url(
                f"ws://127.0.0.1:{proxy.port}/acp", transport="websocket", cwd=CWD, reconnect=FAST
            ) as client,
        ):
            session = await client.new_session()
            work = await session.prompt("stream 3000")
            cuts = 0
            while cuts < 5:
                await anyio.sleep(0.02)
                cuts += proxy.cut() > 0
            assert await work.wait() == "end_turn"
            assert work.text == "".join(f"{i} " for i in range(3000))
            assert _ws(client).reconnects >= 1


async def test_a_resume_the_server_refuses_ends_the_stream_with_resume_refused() -> None:
    with anyio.fail_after(TIMEOUT):
        async with (
            durable_ws_server() as server,
            open_websocket(server.url, backoff=FAST) as transport,
        ):
            server.forget()
            assert await transport.receive() == b""
            assert isinstance(transport.ended_by, ResumeRefused)
            assert transport.ended_by.code == 4404
            with pytest.raises(ConnectionClosed):
                await transport.send(b'{"jsonrpc":"2.0","method":"x"}\n')


async def test_an_unreachable_server_is_refused_with_status_zero() -> None:
    with anyio.fail_after(TIMEOUT):
        async with durable_ws_server() as server:
            url = server.url
        with pytest.raises(RemoteRefused) as caught:
            async with open_websocket(url):
                pass
        assert caught.value.status == 0
