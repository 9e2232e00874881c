"""Security defaults: bearer tokens, the Origin allow-list, one principal per connection,
and the WebSocket size limit."""

from __future__ import annotations

import json

import httpx
import pytest
from serve_helpers import agent_app, initialize, post_headers, serve
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from acp2.serve.config import LOCAL_PRINCIPAL

pytestmark = pytest.mark.anyio

TOKENS = {"alice-token": "alice", "bob-token": "bob"}
NOTIFY = {"jsonrpc": "2.0", "method": "_acp2/ping", "params": {}}


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_no_token_or_a_wrong_one_is_401_over_http_and_websocket() -> None:
    async with serve(agent_app(tokens=TOKENS)) as served, httpx.AsyncClient() as client:
        none = await client.post(served.url, json=initialize(), headers=post_headers())
        wrong = await client.post(
            served.url, json=initialize(), headers={**post_headers(), **bearer("guess")}
        )
        assert (none.status_code, wrong.status_code) == (401, 401)
        assert none.headers["www-authenticate"] == "Bearer"
        with pytest.raises(InvalidStatus) as refused:
            async with connect(served.ws_url):
                pass
        assert refused.value.response.status_code == 401
        good = await client.post(
            served.url, json=initialize(), headers={**post_headers(), **bearer("alice-token")}
        )
        assert good.status_code == 200
        (connection,) = served.app.registry.connections()
        assert connection.principal == "alice"


async def test_a_foreign_origin_is_403_and_the_servers_own_is_accepted() -> None:
    async with serve(agent_app(allow_origins=("https://editor.example",))) as served:
        own = f"http://127.0.0.1:{served.port}"
        async with httpx.AsyncClient() as client:
            for origin, status in [
                ("http://evil.example", 403),
                (f"http://localhost:{served.port + 1}", 403),
                (own, 200),
                ("https://editor.example", 200),
            ]:
                answer = await client.post(
                    served.url, json=initialize(), headers={**post_headers(), "origin": origin}
                )
                assert answer.status_code == status, origin
        with pytest.raises(InvalidStatus) as refused:
            async with connect(served.ws_url, origin="http://evil.example"):  # type: ignore[arg-type]
                pass
        assert refused.value.response.status_code == 403


async def test_without_tokens_every_connection_is_the_local_principal() -> None:
    async with serve(agent_app()) as served, httpx.AsyncClient() as client:
        answer = await client.post(served.url, json=initialize(), headers=post_headers())
        assert answer.status_code == 200
        (connection,) = served.app.registry.connections()
        assert connection.principal == LOCAL_PRINCIPAL


async def test_another_principal_cannot_use_a_connection_by_its_id() -> None:
    async with serve(agent_app(tokens=TOKENS)) as served, httpx.AsyncClient() as client:
        alice = {**post_headers(), **bearer("alice-token")}
        cid = (await client.post(served.url, json=initialize(), headers=alice)).headers[
            "acp-connection-id"
        ]
        as_bob = {**post_headers(cid), **bearer("bob-token")}
        stream_as_bob = {
            "accept": "text/event-stream",
            "acp-connection-id": cid,
            **bearer("bob-token"),
        }
        assert (await client.post(served.url, json=NOTIFY, headers=as_bob)).status_code == 403
        assert (await client.get(served.url, headers=stream_as_bob)).status_code == 403
        delete = {"acp-connection-id": cid, **bearer("bob-token")}
        assert (await client.delete(served.url, headers=delete)).status_code == 403
        as_alice = {**post_headers(cid), **bearer("alice-token")}
        assert (await client.post(served.url, json=NOTIFY, headers=as_alice)).status_code == 202


async def test_an_oversized_websocket_message_closes_with_1009() -> None:
    async with serve(agent_app(max_message_size=2048)) as served:
        async with connect(served.ws_url) as ws:
            await ws.send(json.dumps({**NOTIFY, "params": {"pad": "x" * 4096}}))
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1009
