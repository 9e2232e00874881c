"""Batch frames on a durable WebSocket (``Acp2-Batch``): granted only when asked, several
queued messages per frame each under its own seq, and a resume from the middle of a batch
that loses and repeats nothing -- with a raw client, and with acp2's own client through
cuts."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from serve_helpers import agent_app, initialize, is_idle, new_session, prompt, serve
from websockets.asyncio.client import ClientConnection, connect

from acp2.client import connect_url
from acp2.errors import ConnectionClosed
from acp2.transport.backoff import Backoff
from acp2.transport.ws_client import WebSocketTransport, open_websocket
from helpers.cutproxy import CutProxy, cut_proxy
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

ASK = {"acp2-durable": "1", "acp2-batch": "1"}
CWD = "/tmp/acp2-client-tests"
FAST = Backoff(initial=0.01, max_delay=0.2, max_attempts=50, max_elapsed=20)


class Batched:
    """A raw durable client that splits batch frames; never acknowledges, so the server
    keeps everything for a resume."""

    def __init__(self) -> None:
        self.sent = 0
        self.last = 0
        self.taken: dict[int, dict[str, Any]] = {}
        self.batch_sizes: list[int] = []

    async def send(self, ws: ClientConnection, message: dict[str, Any]) -> None:
        self.sent += 1
        await ws.send(json.dumps({"seq": self.sent, "msg": message}))

    async def frame(self, ws: ClientConnection) -> list[tuple[int, dict[str, Any]]]:
        """The next data or batch frame's (seq, message) pairs, checked for order."""
        while True:
            frame = json.loads(await ws.recv())
            if "ack" not in frame:
                break
        messages = frame["msgs"] if "msgs" in frame else [frame["msg"]]
        assert frame["seq"] == self.last + 1, "a gap or a repeat in the server's seqs"
        self.batch_sizes.append(len(messages))
        pairs = list(enumerate(messages, frame["seq"]))
        for seq, message in pairs:
            self.taken[seq] = message
        self.last = pairs[-1][0]
        return pairs

    async def until(self, ws: ClientConnection, predicate: Any) -> None:
        with anyio.fail_after(TIMEOUT):
            while not any(predicate(m) for _, m in await self.frame(ws)):
                pass

    def forget_after(self, seq: int) -> None:
        """Claim to have taken nothing after ``seq`` (a resume from there)."""
        self.taken = {s: m for s, m in self.taken.items() if s <= seq}
        self.last = seq


def chunks(client: Batched) -> str:
    return "".join(
        m["params"]["update"]["content"]["text"]
        for _, m in sorted(client.taken.items())
        if m.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
    )


async def open_session(ws: ClientConnection, client: Batched) -> str:
    await client.send(ws, initialize())
    await client.send(ws, new_session(1))
    await client.until(ws, lambda m: m.get("id") == 1)
    created = [m for m in client.taken.values() if m.get("id") == 1]
    return str(created[-1]["result"]["sessionId"])


async def test_batch_frames_are_granted_only_to_a_durable_upgrade_that_asks() -> None:
    async with serve(agent_app()) as served:
        async with connect(served.ws_url, additional_headers=ASK) as ws:
            assert ws.response is not None
            assert ws.response.headers.get("acp2-batch") == "1"
        plain = {"acp2-batch": "1"}
        async with connect(served.ws_url, additional_headers=plain) as ws:
            assert ws.response is not None
            assert "acp2-batch" not in ws.response.headers
        durable = {"acp2-durable": "1"}
        async with connect(served.ws_url, additional_headers=durable) as ws:
            assert ws.response is not None
            assert "acp2-batch" not in ws.response.headers


async def test_a_resume_from_the_middle_of_a_batch_loses_and_repeats_nothing() -> None:
    count = 2000
    client = Batched()
    async with serve(agent_app()) as served:
        async with connect(served.ws_url, additional_headers=ASK) as ws:
            assert ws.response is not None
            cid = ws.response.headers["acp-connection-id"]
            sid = await open_session(ws, client)
            await client.send(ws, prompt(2, sid, f"stream {count}"))
            with anyio.fail_after(TIMEOUT):
                while len(pairs := await client.frame(ws)) < 3:
                    pass
            assert ws.transport is not None
            ws.transport.abort()  # a cut, no closing handshake
        middle = pairs[1][0]
        client.forget_after(middle)
        headers = {**ASK, "acp-connection-id": cid, "acp2-last-seq": str(middle)}
        async with connect(served.ws_url, additional_headers=headers) as again:
            assert again.response is not None
            assert again.response.headers.get("acp2-batch") == "1"
            await client.until(again, is_idle)
    assert sorted(client.taken) == list(range(1, client.last + 1))
    assert chunks(client) == "".join(f"{i} " for i in range(count))
    assert max(client.batch_sizes) > 1


async def cut_while_it_streams(proxy: CutProxy) -> None:
    """Cut five times, each after a little more of the (compressed) stream got through."""
    while proxy.cuts < 5:
        await proxy.forwarded_at_least(proxy.forwarded + 500)
        proxy.cut()


async def test_acp2s_client_takes_a_batched_stream_through_cuts_exactly_once() -> None:
    count = 20_000
    async with serve(agent_app()) as served:
        port = int(served.ws_url.rsplit(":", 1)[1].split("/")[0])
        async with (
            cut_proxy(port) as proxy,
            connect_url(
                f"ws://127.0.0.1:{proxy.port}/acp", transport="websocket", cwd=CWD, reconnect=FAST
            ) as client,
        ):
            transport = client.remote.current  # type: ignore[attr-defined]
            assert isinstance(transport, WebSocketTransport)
            assert transport.batched
            with anyio.fail_after(TIMEOUT * 2):
                session = await client.new_session()
                work = await session.prompt(f"stream {count}")
                async with anyio.create_task_group() as tg:
                    tg.start_soon(cut_while_it_streams, proxy)
                    assert await work.wait() == "end_turn"
                    tg.cancel_scope.cancel()
            assert work.text == "".join(f"{i} " for i in range(count))
            assert transport.reconnects >= 1
            assert transport.batched


async def test_a_message_over_the_clients_limit_ends_the_stream_though_batches_are_bigger() -> None:
    async with (
        serve(agent_app()) as served,
        open_websocket(served.ws_url, max_message_bytes=64) as transport,
    ):
        assert transport.batched
        await transport.send(json.dumps(initialize()).encode() + b"\n")
        with anyio.fail_after(TIMEOUT):
            assert await transport.receive() == b""
        assert isinstance(transport.ended_by, ConnectionClosed)
        assert "over" in str(transport.ended_by)
