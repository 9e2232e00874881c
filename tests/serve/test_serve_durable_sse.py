"""Durable Streamable HTTP: numbered SSE events, reopening with ``Last-Event-ID``, and
POSTs taken once by their ``Acp2-Seq``."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from serve_helpers import (
    Event,
    agent_app,
    initialize,
    is_idle,
    new_session,
    post_headers,
    prompt,
    request,
    serve,
    sse,
)

from acp2.transport.durable import Retention
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


class Poster:
    """POSTs of a durable client: one seq counter per connection."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client = client
        self.url = url
        self.seq = 0
        self.cid = ""

    async def initialize(self) -> httpx.Response:
        headers = {**post_headers(), "acp2-durable": "1"}
        answer = await self.client.post(self.url, json=initialize(), headers=headers)
        self.cid = answer.headers["acp-connection-id"]
        return answer

    async def post(
        self, message: dict[str, Any], session: str | None = None, *, again: bool = False
    ) -> int:
        if not again:
            self.seq += 1
        headers = {**post_headers(self.cid, session), "acp2-seq": str(self.seq)}
        answer = await self.client.post(self.url, json=message, headers=headers)
        return answer.status_code


def chunks(events: list[Event]) -> str:
    return "".join(
        e.data["params"]["update"]["content"]["text"]
        for e in events
        if e.data.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
    )


async def open_session(poster: Poster) -> str:
    async with sse(poster.client, poster.url, poster.cid) as main:
        assert await poster.post(new_session(1)) == 202
        events = await main.until(lambda d: d.get("id") == 1)
    assert [e.id for e in events][-1] is not None
    return str(events[-1].data["result"]["sessionId"])


async def test_events_are_numbered_and_a_reopened_stream_resumes_after_last_event_id() -> None:
    count = 200
    async with serve(agent_app()) as served, httpx.AsyncClient(timeout=TIMEOUT) as client:
        poster = Poster(client, served.url)
        answer = await poster.initialize()
        assert answer.headers["acp2-durable"] == Retention().header()
        sid = await open_session(poster)
        async with sse(client, served.url, poster.cid, sid) as session:
            assert await poster.post(prompt(2, sid, f"stream {count}"), sid) == 202
            before = [await session.next() for _ in range(20)]
        # The stream is cut; the agent keeps streaming into the window meanwhile.
        last = before[-1].id
        assert last is not None
        async with sse(client, served.url, poster.cid, sid, last_event_id=last) as again:
            after = await again.until(is_idle)
    ids = [int(e.id or 0) for e in before + after]
    assert ids == list(range(1, len(ids) + 1))
    assert chunks(before + after) == "".join(f"{i} " for i in range(count))


async def test_a_last_event_id_older_than_the_window_is_410() -> None:
    # Unconfirmed events are kept however many there are (the byte bound makes the agent
    # wait instead); the age bound still drops them.
    app = agent_app(retention=Retention(messages=4, seconds=0.2), resume_grace=30)
    async with serve(app) as served, httpx.AsyncClient(timeout=TIMEOUT) as client:
        poster = Poster(client, served.url)
        await poster.initialize()
        sid = await open_session(poster)
        async with sse(client, served.url, poster.cid, sid) as session:
            await poster.post(prompt(2, sid, "stream 30"), sid)
            await session.until(is_idle)
        await anyio.sleep(0.3)
        headers = {
            "accept": "text/event-stream",
            "acp-connection-id": poster.cid,
            "acp-session-id": sid,
            "last-event-id": "1",
        }
        assert (await client.get(served.url, headers=headers)).status_code == 410
        gone = {**headers, "acp-connection-id": "unknown"}
        assert (await client.get(served.url, headers=gone)).status_code == 404
        # A seq the stream never sent (a history shorter than what the client saw, on
        # a node that took the connection over) is 410 too: the client falls back.
        unsent = {**headers, "last-event-id": "99999"}
        assert (await client.get(served.url, headers=unsent)).status_code == 410
        bad = {**headers, "last-event-id": "x1"}
        assert (await client.get(served.url, headers=bad)).status_code == 400


async def test_unconfirmed_events_are_all_kept_and_an_ack_post_lets_them_go() -> None:
    app = agent_app(retention=Retention(messages=4))
    async with serve(app) as served, httpx.AsyncClient(timeout=TIMEOUT) as client:
        poster = Poster(client, served.url)
        await poster.initialize()
        sid = await open_session(poster)
        async with sse(client, served.url, poster.cid, sid) as session:
            await poster.post(prompt(2, sid, "stream 30"), sid)
            events = await session.until(is_idle)
        (connection,) = served.app.registry.connections()
        outlet = connection.sessions[sid]
        assert outlet.retained is not None
        assert outlet.retained.pending() == len(events) > 4  # not cut by the count bound
        held = connection.held
        ack = {**post_headers(poster.cid, sid), "acp2-ack": str(events[-3].id)}
        assert (await client.post(served.url, headers=ack)).status_code == 204
        assert outlet.retained.pending() == 2
        assert 0 < connection.held < held
        bad = {**ack, "acp2-ack": "-1"}
        assert (await client.post(served.url, headers=bad)).status_code == 400


async def test_a_retried_post_is_answered_202_and_delivered_once() -> None:
    async with serve(agent_app()) as served, httpx.AsyncClient(timeout=TIMEOUT) as client:
        poster = Poster(client, served.url)
        await poster.initialize()
        async with sse(client, served.url, poster.cid) as main:
            assert await poster.post(new_session(1)) == 202
            assert await poster.post(new_session(1), again=True) == 202  # its 202 was "lost"
            assert await poster.post(request(3, "session/list", {})) == 202
            events = await main.until(lambda d: d.get("id") == 3)
        assert [e.data.get("id") for e in events if "result" in e.data] == [1, 3]
        skipped = {**post_headers(poster.cid), "acp2-seq": str(poster.seq + 5)}
        gap = await client.post(served.url, json=request(9, "session/list", {}), headers=skipped)
        assert gap.status_code == 400
        assert "out of order" in gap.text


async def test_a_reopened_durable_stream_takes_over_from_an_older_reader() -> None:
    async with serve(agent_app()) as served, httpx.AsyncClient(timeout=TIMEOUT) as client:
        poster = Poster(client, served.url)
        await poster.initialize()
        async with (
            sse(client, served.url, poster.cid) as stale,
            sse(client, served.url, poster.cid, last_event_id="0") as fresh,
        ):
            assert await poster.post(new_session(1)) == 202
            (created,) = await fresh.until(lambda d: d.get("id") == 1)
            with pytest.raises(EOFError):
                await stale.next()  # the older reader's response ended
        assert created.id == "1"


async def test_a_quiet_stream_gets_keepalive_comments() -> None:
    async with (
        serve(agent_app(keepalive=0.05)) as served,
        httpx.AsyncClient(timeout=TIMEOUT) as client,
    ):
        poster = Poster(client, served.url)
        await poster.initialize()
        headers = {"accept": "text/event-stream", "acp-connection-id": poster.cid}
        async with client.stream("GET", served.url, headers=headers) as response:
            lines = response.aiter_lines()
            with anyio.fail_after(TIMEOUT):
                first = await anext(lines)
        assert first == ": keepalive"
