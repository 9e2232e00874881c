"""Every row of the RFD's routing and error table over HTTP, against a real uvicorn."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from serve_helpers import (
    agent_app,
    initialize,
    is_idle,
    new_session,
    post_headers,
    prompt,
    serve,
    sse,
)

from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

NOTIFY = {"jsonrpc": "2.0", "method": "_acp2/ping", "params": {}}


async def connect(client: httpx.AsyncClient, url: str, **headers: str) -> str:
    """POST initialize; the connection id."""
    response = await client.post(url, json=initialize(), headers={**post_headers(), **headers})
    assert response.status_code == 200, response.text
    return response.headers["acp-connection-id"]


async def test_every_error_row_of_the_routing_table() -> None:
    async with serve(agent_app()) as served, httpx.AsyncClient(timeout=TIMEOUT) as client:
        url = served.url
        cid = await connect(client, url)
        rows = [
            # POST: content type, JSON, batches, ids
            (await client.post(url, content=b"{}", headers={"content-type": "text/plain"}), 415),
            (await client.post(url, content=b"{nope", headers=post_headers(cid)), 400),
            (await client.post(url, content=b"[{}]", headers=post_headers(cid)), 501),
            (await client.post(url, json=NOTIFY, headers=post_headers()), 400),
            (await client.post(url, json=NOTIFY, headers=post_headers("unknown")), 404),
            (await client.post(url, json=initialize(), headers=post_headers(cid)), 400),
            (await client.post(url, json=prompt(5, "s", "x"), headers=post_headers(cid)), 400),
            (
                await client.post(url, json=prompt(5, "s", "x"), headers=post_headers(cid, "t")),
                400,
            ),
            (await client.post(url, json=NOTIFY, headers=post_headers(cid)), 202),
            # GET: Accept, ids
            (await client.get(url, headers={"acp-connection-id": cid}), 406),
            (await client.get(url, headers={"accept": "text/event-stream"}), 400),
            (
                await client.get(
                    url, headers={"accept": "text/event-stream", "acp-connection-id": "nope"}
                ),
                404,
            ),
            # DELETE: ids; other methods and paths
            (await client.delete(url), 400),
            (await client.delete(url, headers={"acp-connection-id": "nope"}), 404),
            (await client.put(url, content=b""), 405),
            (await client.get(url.replace("/acp", "/other")), 404),
        ]
        assert [r.status_code for r, _ in rows] == [status for _, status in rows]
        batch = rows[2][0].json()
        assert batch["error"]["code"] == -32600
        assert batch["id"] is None


async def test_a_second_reader_of_a_plain_stream_is_refused_409() -> None:
    async with serve(agent_app()) as served, httpx.AsyncClient(timeout=TIMEOUT) as client:
        cid = await connect(client, served.url)
        async with sse(client, served.url, cid):
            second = await client.get(
                served.url, headers={"accept": "text/event-stream", "acp-connection-id": cid}
            )
            assert second.status_code == 409


async def test_messages_for_a_stream_not_open_yet_are_held_until_it_opens() -> None:
    async with serve(agent_app()) as served, httpx.AsyncClient(timeout=TIMEOUT) as client:
        url = served.url
        cid = await connect(client, url)
        # Nothing is open: session/new's answer waits on the connection stream.
        assert (await client.post(url, json=new_session(1), headers=post_headers(cid))).is_success
        async with sse(client, url, cid) as main:
            (created,) = await main.until(lambda d: d.get("id") == 1)
        sid = created.data["result"]["sessionId"]
        posted = await client.post(
            url, json=prompt(2, sid, "echo held back"), headers=post_headers(cid, sid)
        )
        assert posted.status_code == 202
        async with sse(client, url, cid, sid) as session:
            events = await session.until(is_idle)
        kinds = [e.data.get("params", {}).get("update", {}).get("sessionUpdate") for e in events]
        assert [e.data.get("id") for e in events if "id" in e.data] == [2]
        assert "agent_message_chunk" in kinds
        assert all(e.id is None for e in events)  # plain streams carry no ids


async def test_delete_ends_the_connection_and_its_streams() -> None:
    async with serve(agent_app()) as served, httpx.AsyncClient(timeout=TIMEOUT) as client:
        url = served.url
        cid = await connect(client, url)
        async with sse(client, url, cid) as main:
            deleted = await client.delete(url, headers={"acp-connection-id": cid})
            assert deleted.status_code == 202
            with pytest.raises(EOFError):
                await main.next()
        after = await client.post(url, json=NOTIFY, headers=post_headers(cid))
        assert after.status_code == 404


async def test_an_oversized_post_is_413_and_the_connection_survives() -> None:
    async with (
        serve(agent_app(max_message_size=4096)) as served,
        httpx.AsyncClient(timeout=TIMEOUT) as client,
    ):
        url = served.url
        cid = await connect(client, url)
        big = {**NOTIFY, "params": {"pad": "x" * 5000}}
        too_big = await client.post(url, content=json.dumps(big), headers=post_headers(cid))
        assert too_big.status_code == 413
        assert "size limit" in too_big.text
        async with sse(client, url, cid) as main:
            ok = await client.post(url, json=new_session(1), headers=post_headers(cid))
            assert ok.status_code == 202
            (created,) = await main.until(lambda d: d.get("id") == 1)
        assert created.data["result"]["sessionId"]


async def test_an_idle_connection_is_reaped() -> None:
    async with (
        serve(agent_app(idle_timeout=0.3)) as served,
        httpx.AsyncClient(timeout=TIMEOUT) as client,
    ):
        cid = await connect(client, served.url)
        (connection,) = served.app.registry.connections()
        with anyio.fail_after(TIMEOUT):
            await connection.ended.wait()
        gone = await client.post(served.url, json=NOTIFY, headers=post_headers(cid))
        assert gone.status_code == 404


async def test_a_connection_with_an_open_stream_is_not_reaped() -> None:
    async with (
        serve(agent_app(idle_timeout=0.2)) as served,
        httpx.AsyncClient(timeout=TIMEOUT) as client,
    ):
        cid = await connect(client, served.url)
        (connection,) = served.app.registry.connections()
        async with sse(client, served.url, cid):
            await anyio.sleep(0.6)  # three idle periods with the stream open
            assert not connection.closed
