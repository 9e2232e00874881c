"""``acp2 check --url``: the checker's probes against a remote agent.

The driver (:mod:`acp2.check.driver`) reads an agent process's stdout and writes its
stdin; :class:`RemoteAgent` is a stand-in process whose pipes are one remote connection
(:func:`acp2.transport.remote.open_remote`, a fresh connection per probe, as a fresh
process would be). It has no exit code and no stderr; closing its stdin ends the
connection.

Only the probes that speak well-formed JSON-RPC and need no process run remotely
(:data:`REMOTE_PROBES`): the byte-level ones (invalid JSON or UTF-8, batches, which a
remote server answers at the HTTP or WebSocket layer) and the shutdown ones (stdin closed,
process exit) are left out, and their rows are reported as not run.
"""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from acp2.errors import ConnectionClosed
from acp2.transport.base import Transport

__all__ = ["NOT_REMOTE", "RemoteAgent", "remote_agent"]

#: Probes that cannot run over ``--url`` (see the module docstring).
NOT_REMOTE: Final = frozenset(
    {"invalid-json", "invalid-request", "invalid-utf8", "batches", "shutdown-idle", "shutdown-busy"}
)


class _Stdin(ByteSendStream):
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    async def send(self, item: bytes) -> None:
        try:
            await self._transport.send(item)
        except ConnectionClosed as exc:
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        await self._transport.aclose()


class _Stdout(ByteReceiveStream):
    def __init__(self, transport: Transport, ended: anyio.Event) -> None:
        self._transport = transport
        self._ended = ended

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await self._transport.receive()
        if not data:
            self._ended.set()
            raise anyio.EndOfStream
        return data

    async def aclose(self) -> None:
        await self._transport.aclose()


class _NoStderr(ByteReceiveStream):
    async def receive(self, max_bytes: int = 65536) -> bytes:
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        return None


class RemoteAgent(Process):
    """A remote connection dressed as the agent process the driver expects."""

    def __init__(self, transport: Transport) -> None:
        self._ended = anyio.Event()
        self._stdin = _Stdin(transport)
        self._stdout = _Stdout(transport, self._ended)
        self._transport = transport

    async def aclose(self) -> None:
        """End the connection."""
        await self._transport.aclose()

    async def wait(self) -> int:
        """Wait until the server ends the stream; a remote agent has no exit code (0)."""
        await self._ended.wait()
        return 0

    def terminate(self) -> None:
        """Nothing to signal: closing stdin ends the connection."""

    def kill(self) -> None:
        """Nothing to signal: closing stdin ends the connection."""

    def send_signal(self, sig: signal.Signals) -> None:
        """Nothing to signal: closing stdin ends the connection."""

    @property
    def pid(self) -> int:
        """No local process: 0."""
        return 0

    @property
    def returncode(self) -> int | None:
        """Never an exit code: the agent is not a local process."""
        return None

    @property
    def stdin(self) -> ByteSendStream:
        """Writes go to the remote connection."""
        return self._stdin

    @property
    def stdout(self) -> ByteReceiveStream:
        """Reads come from the remote connection."""
        return self._stdout

    @property
    def stderr(self) -> ByteReceiveStream:
        """Always at its end: a remote agent's stderr is not ours to see."""
        return _NoStderr()


@asynccontextmanager
async def remote_agent(url: str, token: str | None) -> AsyncIterator[RemoteAgent]:
    """A fresh connection to ``url`` as a :class:`RemoteAgent`; closed on exit. Raises
    :class:`~acp2.transport.remote_base.RemoteRefused` (a ``ConnectionError``)."""
    from acp2.transport.remote import open_remote

    async with open_remote(url, token=token) as transport:
        yield RemoteAgent(transport)
