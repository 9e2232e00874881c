"""The Streamable HTTP profile end to end: a full turn over POST + SSE (RFD routing)."""

from __future__ import annotations

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


async def open_connection(client: httpx.AsyncClient, url: str) -> str:
    """POST initialize; return the connection id."""
    response = await client.post(url, json=initialize(), headers=post_headers())
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == 0
    assert body["result"]["protocolVersion"] == 2
    return response.headers["acp-connection-id"]


async def test_a_full_turn_goes_over_post_and_the_connection_and_session_streams() -> None:
    async with serve(agent_app()) as served, httpx.AsyncClient(timeout=TIMEOUT) as client:
        url = served.url
        cid = await open_connection(client, url)
        async with sse(client, url, cid) as main:
            response = await client.post(url, json=new_session(1), headers=post_headers(cid))
            assert response.status_code == 202
            created = await main.until(lambda d: d.get("id") == 1)
            sid = created[-1].data["result"]["sessionId"]
            async with sse(client, url, cid, sid) as session:
                posted = await client.post(
                    url, json=prompt(2, sid, "echo hello world"), headers=post_headers(cid, sid)
                )
                assert posted.status_code == 202
                events = await session.until(is_idle)
        datas = [e.data for e in events]
        assert any(d.get("id") == 2 and "messageId" in d["result"] for d in datas)
        chunks = [
            d["params"]["update"]["content"]["text"]
            for d in datas
            if d.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
        ]
        assert "".join(chunks) == "hello world"
        (connection,) = served.app.registry.connections()
        deleted = await client.delete(url, headers={"acp-connection-id": cid})
        assert deleted.status_code == 202
        with anyio.fail_after(TIMEOUT):
            await connection.ended.wait()
