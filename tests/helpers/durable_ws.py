"""A small test-only server for the durable WebSocket side of the remote wire contract
(/work/wt/remote-wire.md, "Durable"), on ``websockets.serve``: it serves an acp2 agent
(the test agent by default) one connection per upgrade, and keeps that connection --
agent, numbered outgoing messages, last seq taken -- across dropped links, so the client's
resume can be tested before ``acp2 serve`` exists. It is deliberately small: no SSE, no
security, no grace timeout (``forget()`` drops a connection, as a restarted server would).

    async with durable_ws_server() as server:
        url = server.url            # ws://127.0.0.1:<port>/acp
"""

from __future__ import annotations

import contextlib
import itertools
import queue
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
from anyio.abc import TaskGroup
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from acp2.agent import Agent
from acp2.agent.connection import serve_connection
from acp2.testing.scenarios import build_test_agent
from acp2.transport.durable import (
    CursorTooOld,
    Received,
    Retained,
    Retention,
    decode_frame,
    encode_ack,
    encode_data,
)
from acp2.transport.memory import memory_pair
from acp2.transport.remote_base import outgoing_framer, whole_messages
from helpers.timeouts import TIMEOUT

_ids = itertools.count(1)


class _Connection:
    """One ACP connection: its agent end and the durable state of both directions."""

    def __init__(self, durable: bool, retention: Retention) -> None:
        self.id = f"conn-{next(_ids)}"
        self.durable = durable
        self.out = Retained(retention)
        self.took = Received()
        self.ours, self.agent_end = memory_pair()
        self.link: ServerConnection | None = None
        self.lock = anyio.Lock()
        self.gone = anyio.Event()

    async def pump_out(self) -> None:
        """Agent → client: number each message, send it when a link is up."""
        framer = outgoing_framer()
        while chunk := await self.ours.receive():
            for message in whole_messages(framer, chunk):
                async with self.lock:
                    frame = encode_data(self.out.add(message), message) if self.durable else message
                    if self.link is not None:
                        try:
                            await self.link.send(frame, text=True)
                        except ConnectionClosed:
                            self.link = None
        self.gone.set()
        if self.link is not None:
            await self.link.close(1000)

    async def attach(self, ws: ServerConnection, client_took: int) -> bool:
        """Make ``ws`` the link, resending what the client missed; False if impossible."""
        async with self.lock:
            try:
                missed = self.out.after(client_took)
            except (CursorTooOld, ValueError):
                await ws.close(4410)
                return False
            for seq, message in missed:
                await ws.send(encode_data(seq, message), text=True)
            self.link = ws
        return True

    async def pump_in(self, ws: ServerConnection, server: DurableServer) -> None:
        """Client → agent, until this link closes."""
        async for frame in ws:
            if not isinstance(frame, str):
                continue
            if not self.durable:
                await self.ours.send(frame.encode() + b"\n")
                continue
            parsed = decode_frame(frame)
            if parsed.ack is not None:
                self.out.ack(parsed.ack)
            elif parsed.seq is not None and self.took.accept(parsed.seq):
                await self.ours.send(bytes(parsed.msg) + b"\n")
                if server.forget_after_prompt and b'"session/prompt"' in bytes(parsed.msg):
                    server.forget_after_prompt = False
                    server.forget()  # the prompt was taken; its answer is lost
                    return
                # Acknowledging each message is the simplest thing the contract allows.
                await ws.send(encode_ack(self.took.acked()), text=True)


class DurableServer:
    """The running server: ``url``, ``connections`` by id, ``links`` (every accepted
    upgrade, in order), :meth:`drop_links`, :meth:`forget` and ``forget_after_prompt``
    to misbehave on purpose."""

    def __init__(self, agent: Agent, tg: TaskGroup, retention: Retention, grant: bool) -> None:
        self.agent = agent
        self.tg = tg
        self.retention = retention
        self.grant = grant
        self.connections: dict[str, _Connection] = {}
        self.links: list[ServerConnection] = []
        self.url = ""
        #: Set to forget every connection right after the next prompt reaches the agent.
        self.forget_after_prompt = False

    def process_response(self, ws: ServerConnection, request: Any, response: Any) -> Any:
        """Name the connection in the 101 (and grant durability, resume cursors)."""
        if response.status_code != 101:
            return response
        asked = request.headers.get("Acp-Connection-Id")
        if asked is None:
            durable = self.grant and request.headers.get("Acp2-Durable") == "1"
            conn = _Connection(durable, self.retention)
            self.connections[conn.id] = conn
            self.tg.start_soon(serve_connection, self.agent, conn.agent_end)
            self.tg.start_soon(conn.pump_out)
            if durable:
                response.headers["Acp2-Durable"] = self.retention.header()
        else:
            conn = self.connections.get(asked)  # type: ignore[assignment]
            if conn is not None:
                response.headers["Acp2-Last-Seq"] = str(conn.took.last)
        ws.acp_conn = conn  # type: ignore[attr-defined]
        if conn is not None:
            response.headers["Acp-Connection-Id"] = conn.id
        return response

    async def handler(self, ws: ServerConnection) -> None:
        """Serve one upgrade: a new connection, or a resume of a known one."""
        self.links.append(ws)
        conn: _Connection | None = ws.acp_conn  # type: ignore[attr-defined]
        if conn is None:
            await ws.close(4404)
            return
        last = int(ws.request.headers.get("Acp2-Last-Seq", "0"))  # type: ignore[union-attr]
        if await conn.attach(ws, last):
            with contextlib.suppress(ConnectionClosed):
                await conn.pump_in(ws, self)
        if not conn.durable:
            await conn.ours.aclose()

    def drop_links(self) -> None:
        """Break every open link at the TCP level (the connections stay)."""
        for ws in self.links:
            ws.transport.abort()

    def forget(self) -> None:
        """Forget every connection, as a restarted server would: resumes get 4404, and
        the agent sees each connection end (its running work is cancelled); the agent
        and its session history live on, as a restarted server's store does."""
        for conn in self.connections.values():
            self.tg.start_soon(conn.ours.aclose)
        self.connections.clear()
        self.drop_links()


@asynccontextmanager
async def durable_ws_server(
    agent: Agent | None = None,
    *,
    retention: Retention | None = None,
    grant: bool = True,
) -> AsyncIterator[DurableServer]:
    """Run the server on 127.0.0.1 (a free port) until the block ends. ``grant=False``
    makes it a plain server that ignores ``Acp2-Durable``."""
    async with anyio.create_task_group() as tg:
        server = DurableServer(agent or build_test_agent(), tg, retention or Retention(), grant)
        async with serve(
            server.handler,
            "127.0.0.1",
            0,
            process_response=server.process_response,
            compression=None,
        ) as ws_server:
            port = next(iter(ws_server.sockets)).getsockname()[1]
            server.url = f"ws://127.0.0.1:{port}/acp"
            yield server
            ws_server.close()
        tg.cancel_scope.cancel()


@contextmanager
def durable_ws_thread(**kwargs: Any) -> Iterator[str]:
    """:func:`durable_ws_server` on its own event loop in a thread, for tests that run the
    CLI as a blocking subprocess; yields the URL."""
    ready: queue.Queue[str] = queue.Queue()
    stop = threading.Event()

    async def run() -> None:
        async with durable_ws_server(**kwargs) as server:
            ready.put(server.url)
            await anyio.to_thread.run_sync(stop.wait)

    thread = threading.Thread(target=anyio.run, args=(run,), daemon=True)
    thread.start()
    try:
        yield ready.get(timeout=TIMEOUT)
    finally:
        stop.set()
        thread.join(TIMEOUT)
