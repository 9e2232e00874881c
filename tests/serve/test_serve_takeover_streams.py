"""Taking a durable WebSocket stream over from its stored cursor, in one process: two
applications on one SQLite history file stand for two nodes (src/acp2/serve/takeover_streams.py).

The first one's connection dies without a goodbye (its cursor row stays, its leases are
released as a dead process's are voided); the client resumes on the second, which
rebuilds exactly what the client missed from the history: the seqs go on where the
client stopped, every chunk once, the history's chunks are the client's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from serve_helpers import initialize, is_idle, prompt, serve
from test_serve_durable_ws import Durable, chunks, open_session
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from acp2.agent import HistoryStore
from acp2.serve import AcpApp, create_app
from acp2.serve.config import ServeConfig
from acp2.testing.scenarios import build_test_agent
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

TOKENS = {"token-a": "alice", "token-b": "bob"}


def node(path: Path) -> AcpApp:
    return create_app(build_test_agent(str(path)), config=ServeConfig(tokens=TOKENS))


def headers(token: str = "token-a", **more: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}", "acp2-durable": "1", **more}


async def die(app: AcpApp) -> None:
    """End every connection of ``app`` as a killed node would: the cursors stay."""
    for connection in app.registry.connections():
        connection.recorder = None  # a dead node deletes nothing
    await app.aclose()


def stored_chunks(path: Path, session_id: str) -> str:
    store = HistoryStore(path)
    try:
        bodies = [json.loads(b) for b in store.updates(session_id)]
    finally:
        store.close()
    return "".join(
        b["content"]["text"] for b in bodies if b.get("sessionUpdate") == "agent_message_chunk"
    )


async def test_another_node_rebuilds_exactly_what_the_client_missed(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    client = Durable()
    async with serve(node(path)) as first, serve(node(path)) as second:
        async with connect(first.ws_url, additional_headers=headers()) as ws:
            assert ws.response is not None
            cid = ws.response.headers["acp-connection-id"]
            sid = await open_session(ws, client)
            await client.send(ws, prompt(2, sid, "stream 3000"))
            before = await client.until(ws, lambda m: "50 " in json.dumps(m))
            await die(first.app)
        resume = headers(**client.resume_headers(cid))
        async with connect(second.ws_url, additional_headers=resume) as again:
            assert again.response is not None
            assert again.response.headers["acp2-last-seq"] == "3"  # what the cursor says
            after = await client.until(again, is_idle)  # the turn died with its node
            await client.send(again, prompt(3, sid, "echo still here"))
            # Past the answer: the idle the takeover's snapshot brought may come first.
            more = await client.until(again, lambda m: m.get("id") == 3)
            more += await client.until(again, is_idle)
    text = chunks(before + after)
    assert text.startswith("".join(f"{i} " for i in range(51)))
    assert text == "".join(f"{i} " for i in range(len(text.split())))
    assert chunks(more) == "still here"
    assert stored_chunks(path, sid) == text + "still here"
    assert history_updates(before + after + more) == stored_updates(path, sid)


async def _refusal(url: str, extra: dict[str, str], token: str = "token-a") -> int | None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url, additional_headers=headers(token, **extra)) as ws:
            with pytest.raises(ConnectionClosed):
                await ws.recv()
            assert ws.protocol.close_rcvd is not None
            return ws.protocol.close_rcvd.code


async def _dead_stream(first: Any, client: Durable, *, stream: str = "stream 20") -> str:
    async with connect(first.ws_url, additional_headers=headers()) as ws:
        assert ws.response is not None
        cid = ws.response.headers["acp-connection-id"]
        sid = await open_session(ws, client)
        await client.send(ws, prompt(2, sid, stream))
        await client.until(ws, is_idle)
        await die(first.app)
    return cid


async def test_a_stream_is_not_taken_over_by_another_principal_or_from_an_unseen_seq(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    client = Durable()
    async with serve(node(path)) as first, serve(node(path)) as second:
        cid = await _dead_stream(first, client)
        resume = client.resume_headers(cid)
        assert await _refusal(second.ws_url, resume, token="token-b") == 4401
        ahead = {**resume, "acp2-last-seq": str(client.last + 5)}
        assert await _refusal(second.ws_url, ahead) == 4410
        unknown = {**resume, "acp-connection-id": "no-such-stream"}
        assert await _refusal(second.ws_url, unknown) == 4404
        async with connect(second.ws_url, additional_headers=headers(**resume)) as again:
            await client.send(again, prompt(3, "x", "echo ok"))  # the stream goes on
            answered = await client.until(again, lambda m: m.get("id") == 3)
            assert "error" in answered[-1]  # no session "x": but an answer, in order


async def test_a_stream_that_joined_its_session_midway_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    maker, client = Durable(), Durable()
    async with serve(node(path)) as first, serve(node(path)) as second:
        async with connect(first.ws_url, additional_headers=headers()) as ws:
            sid = await open_session(ws, maker)
        async with connect(first.ws_url, additional_headers=headers()) as ws:
            assert ws.response is not None
            cid = ws.response.headers["acp-connection-id"]
            await client.send(ws, initialize())
            params = {"sessionId": sid, "cwd": "/tmp/acp2-agent-tests"}
            await client.send(
                ws, {"jsonrpc": "2.0", "id": 1, "method": "session/resume", "params": params}
            )
            await client.until(ws, lambda m: m.get("id") == 1)
            await die(first.app)
        assert await _refusal(second.ws_url, client.resume_headers(cid)) == 4404


async def test_a_takeover_waits_for_the_sessions_lease_and_a_second_socket_meanwhile_waits(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    client = Durable()
    async with serve(node(path)) as first, serve(node(path)) as second:
        async with connect(first.ws_url, additional_headers=headers()) as ws:
            assert ws.response is not None
            cid = ws.response.headers["acp-connection-id"]
            sid = await open_session(ws, client)
            await die(first.app)
        holder = HistoryStore(path)  # another live owner holds the session for now
        holder.acquire(sid)
        try:
            resume = headers(**client.resume_headers(cid))
            async with connect(second.ws_url, additional_headers=resume) as again:
                assert cid in second.app.registry.restoring  # waiting for the lease
                assert await _refusal(second.ws_url, client.resume_headers(cid)) == 1013
                holder.release(sid)
                await client.send(again, prompt(3, sid, "echo back"))
                await client.until(again, lambda m: m.get("id") == 3)  # the snapshot first
                assert chunks(await client.until(again, is_idle)) == "back"
        finally:
            holder.close()


async def test_a_session_another_client_resumed_here_meanwhile_is_not_taken_over(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    client, other = Durable(), Durable()
    async with serve(node(path)) as first, serve(node(path)) as second:
        cid = await _dead_stream(first, client)
        async with connect(second.ws_url, additional_headers=headers()) as ws:
            await other.send(ws, initialize())
            (sid,) = first_cursor_sessions(path)
            params = {"sessionId": sid, "cwd": "/tmp/acp2-agent-tests"}
            await other.send(
                ws, {"jsonrpc": "2.0", "id": 1, "method": "session/resume", "params": params}
            )
            answered = await other.until(ws, lambda m: m.get("id") == 1)
            assert "result" in answered[-1], answered[-1]
            assert await _refusal(second.ws_url, client.resume_headers(cid)) == 4404


def first_cursor_sessions(path: Path) -> list[str]:
    import sqlite3

    from acp2.store.cursors import decode_cursor

    db = sqlite3.connect(path)
    try:
        (body,) = db.execute("SELECT body FROM stream_cursors").fetchone()
    finally:
        db.close()
    cursor = decode_cursor(bytes(body))
    assert cursor is not None
    return list(cursor.counts)


async def test_a_stream_taken_over_once_can_be_taken_over_again(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    client = Durable()
    async with serve(node(path)) as first, serve(node(path)) as second, serve(node(path)) as third:
        async with connect(first.ws_url, additional_headers=headers()) as ws:
            assert ws.response is not None
            cid = ws.response.headers["acp-connection-id"]
            sid = await open_session(ws, client)
            await client.send(ws, prompt(2, sid, "stream 2000"))
            seen = await client.until(ws, lambda m: "20 " in json.dumps(m))
            await die(first.app)
        async with connect(
            second.ws_url, additional_headers=headers(**client.resume_headers(cid))
        ) as ws:
            seen += await client.until(ws, is_idle)
            await client.send(ws, prompt(3, sid, "stream 2000"))
            seen += await client.until(ws, lambda m: m.get("id") == 3)
            seen += await client.until(ws, lambda m: "1500 " in json.dumps(m))
            await die(second.app)
        async with connect(
            third.ws_url, additional_headers=headers(**client.resume_headers(cid))
        ) as ws:
            seen += await client.until(ws, is_idle)
            # The takeover's snapshot (the idle), then its commands.
            seen += await client.until(ws, lambda m: "available_commands" in json.dumps(m))
    # Every history update once, in order -- chunks, messages, commands -- over two
    # takeovers.
    assert history_updates(seen) == stored_updates(path, sid)


def history_updates(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The updates among ``messages`` that the agent records (not states or notices)."""
    return [
        m["params"]["update"]
        for m in messages
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] not in ("state_update", "notice")
    ]


def stored_updates(path: Path, session_id: str) -> list[dict[str, Any]]:
    store = HistoryStore(path)
    try:
        return [json.loads(b) for b in store.updates(session_id)]
    finally:
        store.close()
