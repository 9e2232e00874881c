"""Helpers for the client tests: the test agent in process, and a scripted fake agent.

``in_process(...)`` serves ``acp2.testing``'s test agent on one end of a memory pair and
yields an initialized :class:`ClientConnection` on the other. ``FakeAgent`` is a raw
JSON-RPC peer whose behaviour each test scripts frame by frame, for agents that break
the rules (wrong version, no ``messageId``, early updates, ``$/cancel_request``, ...).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio

from acp2.client import ClientConnection, connect_transport
from acp2.transport.memory import MemoryTransport, memory_pair
from helpers.inprocess import served, sole_exception

CWD = "/tmp/acp2-client-tests"


@asynccontextmanager
async def in_process(agent: Any = None, **kwargs: Any) -> AsyncIterator[ClientConnection]:
    """Serve ``agent`` (default: a fresh test agent) in process; yield the client."""
    from acp2.testing.scenarios import build_test_agent

    kwargs.setdefault("cwd", CWD)
    async with served(agent if agent is not None else build_test_agent(), **kwargs) as client:
        yield client


Script = Callable[["FakeAgent", dict[str, Any]], Awaitable[None]]


class FakeAgent:
    """A scripted agent: ``script(fake, message)`` runs for every message the client sends.

    ``fake.send(obj)`` writes one JSON object; ``fake.respond(msg, result)`` answers a
    request; ``fake.received`` lists every message received, in order.
    """

    def __init__(self, transport: MemoryTransport, script: Script) -> None:
        self.transport = transport
        self.script = script
        self.received: list[dict[str, Any]] = []
        self.next_id = 1000
        self._changed = anyio.Event()

    async def wait_for(self, predicate: Callable[[], Any]) -> Any:
        """Wait until ``predicate()`` is truthy (re-checked on every received message)."""
        while not (result := predicate()):
            await self._changed.wait()
        return result

    async def send(self, obj: Any) -> None:
        """Write one message (or raw bytes) to the client."""
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode() + b"\n"
        await self.transport.send(data)

    async def respond(self, msg: dict[str, Any], result: Any) -> None:
        """Answer the request ``msg`` with ``result``."""
        await self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    async def error(self, msg: dict[str, Any], code: int, message: str, data: Any = None) -> None:
        """Answer the request ``msg`` with an error."""
        err: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        await self.send({"jsonrpc": "2.0", "id": msg["id"], "error": err})

    async def update(self, session_id: str, update: dict[str, Any]) -> None:
        """Send one ``session/update``."""
        params = {"sessionId": session_id, "update": update}
        await self.send({"jsonrpc": "2.0", "method": "session/update", "params": params})

    async def request(self, method: str, params: Any) -> int:
        """Send a request to the client; return its id (the answer shows up in ``received``)."""
        self.next_id += 1
        await self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    async def run(self) -> None:
        """Read and script until the client closes."""
        buffer = b""
        while chunk := await self.transport.receive():
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                msg = json.loads(line)
                self.received.append(msg)
                await self.script(self, msg)
                self._changed.set()
                self._changed = anyio.Event()

    def answers_to(self, request_id: int) -> list[dict[str, Any]]:
        """The client's responses to our request ``request_id``."""
        return [m for m in self.received if m.get("id") == request_id and "method" not in m]


def initialize_result(version: int = 2, **capabilities: Any) -> dict[str, Any]:
    """An ``initialize`` result with session support and the given capabilities."""
    session: dict[str, Any] = {"prompt": {}, "mcp": {}}
    session.update(capabilities)
    return {
        "protocolVersion": version,
        "info": {"name": "fake", "version": "1"},
        "capabilities": {"session": session},
    }


async def handshake(fake: FakeAgent, msg: dict[str, Any]) -> bool:
    """Answer ``initialize`` and ``session/new`` (session ``s1``) for a fake agent's script.

    Returns True when ``msg`` was one of them, so a script handles only the rest.
    """
    method = msg.get("method")
    if method == "initialize":
        await fake.respond(msg, initialize_result())
        return True
    if method == "session/new":
        await fake.respond(msg, {"sessionId": "s1"})
        return True
    return False


@asynccontextmanager
async def fake_agent(
    script: Script, **kwargs: Any
) -> AsyncIterator[tuple[ClientConnection, FakeAgent]]:
    """Connect a client to a :class:`FakeAgent` running ``script``."""
    ours, theirs = memory_pair()
    fake = FakeAgent(theirs, script)
    kwargs.setdefault("cwd", CWD)
    with sole_exception():
        async with anyio.create_task_group() as tg:
            tg.start_soon(fake.run)
            async with connect_transport(ours, **kwargs) as client:
                yield client, fake
            await theirs.aclose()
            tg.cancel_scope.cancel()
