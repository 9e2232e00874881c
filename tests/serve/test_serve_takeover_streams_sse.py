"""Taking a durable Streamable HTTP connection over from its stored cursor, in one
process: two applications on one SQLite history file stand for two nodes
(src/acp2/serve/takeover_http.py, restore.py).

The first one's connection dies without a goodbye (its cursor row stays); the client's
reopens and POSTs reach the second, which rebuilds every SSE stream from the history:
each reopen's ``Last-Event-ID`` gets exactly what that stream missed, the POST seqs go
on, every chunk once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from serve_helpers import Event, is_idle, new_session, prompt, request, serve, sse
from test_serve_durable_sse import Poster, chunks, open_session
from test_serve_takeover_streams import die, node, stored_chunks, stored_updates
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from acp2.agent import HistoryStore
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


def client_of(token: str = "token-a") -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=TIMEOUT, headers={"authorization": f"Bearer {token}"})


def has(text: str) -> Any:
    return lambda data: text in json.dumps(data)


def ids(events: list[Event]) -> list[int]:
    return [int(e.id or 0) for e in events]


def history_updates(events: list[Event]) -> list[dict[str, Any]]:
    return [
        e.data["params"]["update"]
        for e in events
        if e.data.get("method") == "session/update"
        and e.data["params"]["update"]["sessionUpdate"] not in ("state_update", "notice")
    ]


async def test_another_node_rebuilds_what_every_stream_missed_and_the_posts_go_on(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    async with serve(node(path)) as first, serve(node(path)) as second, client_of() as http:
        poster = Poster(http, first.url)
        await poster.initialize()
        async with sse(http, first.url, poster.cid) as main:
            assert await poster.post(new_session(1)) == 202
            made = await main.until(lambda d: d.get("id") == 1)
            sid = made[-1].data["result"]["sessionId"]
            async with sse(http, first.url, poster.cid, sid) as session:
                assert await poster.post(prompt(2, sid, "stream 3000"), sid) == 202
                before = await session.until(has('"50 '))
                assert await poster.post(request(8, "x/unknown", {})) == 202
                await main.until(lambda d: d.get("id") == 8)  # sent; the client "loses" it
                await die(first.app)
        main_last, last = made[-1].id, before[-1].id
        assert main_last is not None
        assert last is not None
        poster.url = second.url
        async with (
            sse(http, second.url, poster.cid, sid, last_event_id=last) as session,
            sse(http, second.url, poster.cid, last_event_id=main_last) as main,
        ):
            after = await session.until(is_idle)  # the turn died with its node
            assert await poster.post(prompt(3, sid, "echo still here"), sid) == 202
            more = await session.until(lambda d: d.get("id") == 3)
            more += await session.until(is_idle)
            # The connection's stream resends the answer it missed.
            assert (await main.next()).data.get("id") == 8
    assert ids(before + after + more) == list(range(1, len(before + after + more) + 1))
    text = chunks(before + after)
    assert text.startswith("".join(f"{i} " for i in range(51)))
    assert text == "".join(f"{i} " for i in range(len(text.split())))
    assert chunks(more) == "still here"
    assert stored_chunks(path, sid) == text + "still here"
    assert history_updates(before + after + more) == stored_updates(path, sid)


async def _dead_connection(first: Any, http: httpx.AsyncClient) -> tuple[Poster, str, str]:
    """A connection whose session streamed 20 chunks and went idle (everything taken
    and confirmed), then a second turn; its node dies. Returns the poster, the session
    and the session stream's last event id."""
    poster = Poster(http, first.url)
    await poster.initialize()
    sid = await open_session(poster)
    async with sse(http, first.url, poster.cid, sid) as session:
        await poster.post(prompt(2, sid, "stream 20"), sid)
        events = await session.until(is_idle)
        ack = {"acp-connection-id": poster.cid, "acp-session-id": sid, "acp2-ack": events[-1].id}
        assert (await http.post(first.url, headers=ack)).status_code == 204
        await poster.post(prompt(3, sid, "echo later"), sid)  # stores the confirmed base
        events = await session.until(is_idle)
        await die(first.app)
    assert events[-1].id is not None
    return poster, sid, events[-1].id


async def test_a_connection_is_not_taken_over_for_another_principal_or_an_old_event_id(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    async with serve(node(path)) as first, serve(node(path)) as second, client_of() as http:
        poster, sid, last = await _dead_connection(first, http)
        reopen = {"accept": "text/event-stream", "acp-connection-id": poster.cid}
        async with client_of("token-b") as bob:
            assert (await bob.get(second.url, headers=reopen)).status_code == 403
        unknown = {**reopen, "acp-connection-id": "no-such-connection"}
        assert (await http.get(second.url, headers=unknown)).status_code == 404
        old = {**reopen, "acp-session-id": sid, "last-event-id": "1"}  # before the base
        assert (await http.get(second.url, headers=old)).status_code == 410
        # A digit str.isdigit takes but int() does not: refused, the recorder untouched.
        odd = {**reopen, "acp-session-id": sid, "last-event-id": "\u00b2".encode("latin-1")}
        assert (await http.get(second.url, headers=odd)).status_code == 400
        # The takeover itself went through: the stream reopens from where it was.
        async with sse(http, second.url, poster.cid, sid, last_event_id=last) as session:
            poster.url = second.url
            assert await poster.post(prompt(4, sid, "echo on"), sid) == 202
            await session.until(lambda d: d.get("id") == 4)  # the takeover's snapshot first
            assert chunks(await session.until(is_idle)) == "on"


async def test_a_post_that_reaches_the_other_node_first_takes_the_connection_over(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    async with serve(node(path)) as first, serve(node(path)) as second, client_of() as http:
        poster, sid, last = await _dead_connection(first, http)
        poster.url = second.url
        assert await poster.post(prompt(4, sid, "echo back"), sid) == 202
        # The same POST again (its 202 was lost): taken once.
        assert await poster.post(prompt(4, sid, "echo back"), sid, again=True) == 202
        async with sse(http, second.url, poster.cid, sid, last_event_id=last) as session:
            events = await session.until(lambda d: d.get("id") == 4)
            events += await session.until(is_idle)
            assert await poster.post(prompt(5, sid, "echo twice?"), sid) == 202
            events += await session.until(lambda d: d.get("id") == 5)
            events += await session.until(is_idle)
    assert chunks(events) == "backtwice?"
    assert stored_chunks(path, sid).endswith("laterbacktwice?")


async def test_what_cannot_be_rebuilt_is_refused_as_an_unknown_connection(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    async with serve(node(path)) as first, serve(node(path)) as second, client_of() as http:
        maker = Poster(http, first.url)
        await maker.initialize()
        sid = await open_session(maker)
        poster = Poster(http, first.url)
        await poster.initialize()
        params = {"sessionId": sid, "cwd": "/tmp/acp2-agent-tests"}
        resume = {"jsonrpc": "2.0", "id": 1, "method": "session/resume", "params": params}
        async with sse(http, first.url, poster.cid, sid) as session:
            assert await poster.post(resume, sid) == 202
            await session.until(lambda d: d.get("id") == 1)
        await die(first.app)
        reopen = {"accept": "text/event-stream", "acp-connection-id": poster.cid}
        assert (await http.get(second.url, headers=reopen)).status_code == 404  # joined midway
        # ... and a WebSocket resume never takes a Streamable HTTP connection.
        headers = {
            "authorization": "Bearer token-a",
            "acp2-durable": "1",
            "acp-connection-id": maker.cid,
            "acp2-last-seq": "0",
        }
        with anyio.fail_after(TIMEOUT):
            async with connect(second.ws_url, additional_headers=headers) as ws:
                with pytest.raises(ConnectionClosed):
                    await ws.recv()
                assert ws.protocol.close_rcvd is not None
                assert ws.protocol.close_rcvd.code == 4404


async def test_requests_that_arrive_during_the_takeover_wait_for_the_same_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    async with serve(node(path)) as first, serve(node(path)) as second, client_of() as http:
        poster, sid, last = await _dead_connection(first, http)
        holder = HistoryStore(path)  # the session's lease is held: the takeover waits
        holder.acquire(sid)
        poster.url = second.url
        answers: list[int] = []
        events: list[Event] = []

        async def post() -> None:
            answers.append(await poster.post(prompt(4, sid, "echo both"), sid))

        async def reopen() -> None:
            async with sse(http, second.url, poster.cid, sid, last_event_id=last) as session:
                events.extend(await session.until(lambda d: d.get("id") == 4))
                events.extend(await session.until(is_idle))

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(reopen)
                tg.start_soon(post)
                await anyio.sleep(0.3)  # both wait on the lease meanwhile (or not: same end)
                holder.release(sid)
        finally:
            holder.close()
        assert answers == [202]
        assert [c.id for c in second.app.registry.connections()] == [poster.cid]
    assert chunks(events) == "both"
