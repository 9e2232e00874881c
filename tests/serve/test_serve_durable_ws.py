"""Durable WebSocket links: numbered envelopes both ways, acknowledgements, and a resume
after the socket is cut that loses and repeats nothing."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from serve_helpers import agent_app, initialize, is_idle, new_session, prompt, serve
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from acp2.transport.durable import Retention
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


class Durable:
    """A raw durable client: numbers what it sends, remembers the last seq it took."""

    def __init__(self) -> None:
        self.sent = 0
        self.last = 0
        self.acks: list[int] = []

    async def send(self, ws: ClientConnection, message: dict[str, Any]) -> None:
        self.sent += 1
        await ws.send(json.dumps({"seq": self.sent, "msg": message}))

    async def until(self, ws: ClientConnection, predicate: Any) -> list[dict[str, Any]]:
        """Every data message up to the first ``predicate`` accepts (acks noted)."""
        seen = []
        with anyio.fail_after(TIMEOUT):
            while True:
                frame = json.loads(await ws.recv())
                if "ack" in frame:
                    self.acks.append(frame["ack"])
                    continue
                assert frame["seq"] == self.last + 1, "a gap or a repeat in the server's seqs"
                self.last = frame["seq"]
                seen.append(frame["msg"])
                if predicate(frame["msg"]):
                    return seen

    def resume_headers(self, connection_id: str) -> dict[str, str]:
        return {
            "acp-connection-id": connection_id,
            "acp2-durable": "1",
            "acp2-last-seq": str(self.last),
        }


def chunks(messages: list[dict[str, Any]]) -> str:
    return "".join(
        m["params"]["update"]["content"]["text"]
        for m in messages
        if m.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
    )


async def open_session(ws: ClientConnection, client: Durable) -> str:
    await client.send(ws, initialize())
    await client.send(ws, new_session(1))
    created = await client.until(ws, lambda m: m.get("id") == 1)
    return str(created[-1]["result"]["sessionId"])


async def test_a_cut_socket_resumes_with_nothing_lost_or_repeated() -> None:
    count = 300
    client = Durable()
    async with serve(agent_app()) as served:
        async with connect(served.ws_url, additional_headers={"acp2-durable": "1"}) as ws:
            assert ws.response is not None
            assert ws.response.headers["acp2-durable"] == Retention().header()
            cid = ws.response.headers["acp-connection-id"]
            sid = await open_session(ws, client)
            await client.send(ws, prompt(2, sid, f"stream {count}"))
            before = await client.until(
                ws, lambda m: "chunk" in json.dumps(m) and "4 " in json.dumps(m)
            )
            assert ws.transport is not None
            ws.transport.abort()  # a cut, no closing handshake
        headers = client.resume_headers(cid)
        async with connect(served.ws_url, additional_headers=headers) as again:
            assert again.response is not None
            assert again.response.headers["acp2-last-seq"] == "3"
            after = await client.until(again, is_idle)
    text = chunks(before + after)
    assert text == "".join(f"{i} " for i in range(count))


async def test_the_server_acknowledges_what_it_took_and_forgets_what_the_client_acked() -> None:
    client = Durable()
    async with (
        serve(agent_app()) as served,
        connect(served.ws_url, additional_headers={"acp2-durable": "1"}) as ws,
    ):
        await open_session(ws, client)
        await client.until(ws, lambda m: "available_commands_update" in json.dumps(m))
        (connection,) = served.app.registry.connections()
        assert connection.main.retained is not None
        assert connection.main.retained.pending() == client.last == 3
        assert connection.held > 0
        await ws.send(json.dumps({"ack": client.last}))
        with anyio.fail_after(TIMEOUT):
            frame = json.loads(await ws.recv())  # within 1 s of going quiet
        assert frame == {"ack": 2}
        assert connection.main.retained.pending() == 0
        assert connection.held == 0


async def test_a_resume_while_the_old_socket_still_reads_gets_every_message_it_missed() -> None:
    # The old socket is half-open from the server's view (a cut it has not noticed): its
    # writer must not take the requeued messages before the new socket is attached.
    old = Durable()
    async with (
        serve(agent_app()) as served,
        connect(served.ws_url, additional_headers={"acp2-durable": "1"}) as ws,
    ):
        cid = ws.response.headers["acp-connection-id"] if ws.response else ""
        sid = await open_session(ws, old)
        await old.send(ws, prompt(2, sid, "stream 50"))
        seen = await old.until(ws, is_idle)  # never acknowledged: all still kept
        new = Durable()
        new.last = old.last - len(seen) + 10
        async with connect(served.ws_url, additional_headers=new.resume_headers(cid)) as again:
            resent = await new.until(again, is_idle)
    assert chunks(seen)[-len(chunks(resent)) :] == chunks(resent)
    assert new.last == old.last


async def test_a_resume_older_than_the_window_is_closed_4410() -> None:
    client = Durable()
    # Unacknowledged messages are kept however many there are (the byte bound makes the
    # agent wait instead); the age bound still drops them.
    app = agent_app(retention=Retention(messages=3, seconds=0.2), resume_grace=30)
    async with serve(app) as served:
        async with connect(served.ws_url, additional_headers={"acp2-durable": "1"}) as ws:
            cid = ws.response.headers["acp-connection-id"] if ws.response else ""
            sid = await open_session(ws, client)
            await client.send(ws, prompt(2, sid, "stream 20"))
            await client.until(ws, is_idle)
        (connection,) = served.app.registry.connections()
        assert connection.main.retained is not None
        assert connection.main.retained.pending() > 3
        await anyio.sleep(0.3)
        client.last = 1  # it missed almost everything, now too old
        await expect_close(served.ws_url, client.resume_headers(cid), 4410)


async def test_a_resume_of_an_unknown_connection_is_closed_4404() -> None:
    async with serve(agent_app()) as served:
        await expect_close(served.ws_url, Durable().resume_headers("no-such-id"), 4404)


async def test_a_resume_by_another_principal_is_closed_4401() -> None:
    tokens = {"a": "alice", "b": "bob"}
    async with serve(agent_app(tokens=tokens)) as served:
        alice = {"acp2-durable": "1", "authorization": "Bearer a"}
        async with connect(served.ws_url, additional_headers=alice) as ws:
            cid = ws.response.headers["acp-connection-id"] if ws.response else ""
        bob = {**Durable().resume_headers(cid), "authorization": "Bearer b"}
        await expect_close(served.ws_url, bob, 4401)


async def test_a_durable_connection_left_past_its_grace_ends() -> None:
    async with serve(agent_app(resume_grace=0.2)) as served:
        async with connect(served.ws_url, additional_headers={"acp2-durable": "1"}) as ws:
            cid = ws.response.headers["acp-connection-id"] if ws.response else ""
            (connection,) = served.app.registry.connections()
        assert not connection.closed  # kept for a resume at first
        with anyio.fail_after(TIMEOUT):
            await connection.ended.wait()
        await expect_close(served.ws_url, Durable().resume_headers(cid), 4404)


async def expect_close(url: str, headers: dict[str, str], code: int) -> None:
    async with connect(url, additional_headers=headers) as ws:
        with anyio.fail_after(TIMEOUT), pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == code
