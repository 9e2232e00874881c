"""One remote connection: the byte :class:`~acp2.transport.base.Transport` its agent side
is served on, and the outlets its client reads from.

The agent side (``Agent.serve`` or a spliced subprocess) reads what clients posted or
framed with :meth:`RemoteConnection.receive` and writes with :meth:`send`; every line
it writes is one message, queued on the connection's main outlet (the WebSocket, or the
connection-scoped SSE stream) or, over SSE, on the session stream the routing model
(:mod:`acp2.serve.routing`) picks. ``send`` waits while the connection holds more than
``max_held_bytes`` for its client, and ends the connection when that lasts
``stall_timeout`` while a reader is attached: an agent streaming to a client that stopped
reading slows down instead of growing memory.
"""

from __future__ import annotations

import asyncio
import logging
import time
from itertools import islice, takewhile
from operator import methodcaller
from typing import Literal

import anyio

from acp2.errors import ConnectionClosed, TooManyStreams
from acp2.rpc.envelope import read
from acp2.rpc.messages import RequestId
from acp2.rpc.update_frames import fast_session, session_head
from acp2.serve.config import ServeConfig
from acp2.serve.cursor import CursorRecorder
from acp2.serve.outlet import Outlet
from acp2.serve.routing import Router
from acp2.transport.durable import Received, Retention

__all__ = ["Kind", "RemoteConnection"]

logger = logging.getLogger("acp2.serve")

#: How the client reaches the connection.
Kind = Literal["http", "websocket"]


class RemoteConnection:
    """The state of one ``Acp-Connection-Id``; see the module docstring.

    ``principal`` is who opened it (from the bearer token): every later request on it
    must come from the same principal. ``retention`` is set when the durable extension
    was granted.
    """

    def __init__(
        self,
        connection_id: str,
        principal: str,
        kind: Kind,
        config: ServeConfig,
        retention: Retention | None = None,
    ) -> None:
        self.id = connection_id
        self.principal = principal
        self.kind = kind
        self.config = config
        self.retention = retention
        self.router = Router()
        #: Seqs taken from the client (durable: POST ``Acp2-Seq`` / WebSocket frames).
        self.received = Received()
        self.held = 0
        self._room = asyncio.Event()
        #: Set while the agent side's :meth:`send` waits for room (backpressure).
        self.waiting = asyncio.Event()
        self._inbound = bytearray()
        self._inbound_ready = asyncio.Event()
        self._inbound_room = asyncio.Event()
        self._partial = b""
        self.closed = False
        #: Why the agent side gave up on the client ("" when it did not): the close
        #: frame's reason (WebSocket) or the last comment (SSE).
        self.end_reason = ""
        self.ended = asyncio.Event()
        self.open_streams = 0
        self.last_active = time.monotonic()
        self._initial: tuple[RequestId, asyncio.Future[bytes]] | None = None
        self.main = self._outlet()
        self.sessions: dict[str, Outlet] = {}
        #: The stream's cursor, kept for a takeover by another node (durable only).
        self.recorder: CursorRecorder | None = None
        #: The agent side's lines held back while a taken-over stream is rebuilt.
        self._gate: list[bytes] | None = None
        #: Answers to requests the server itself made to the agent side (a takeover).
        self._internal: dict[RequestId, asyncio.Future[bytes]] = {}

    @property
    def durable(self) -> bool:
        """True when the durable extension was granted on this connection."""
        return self.retention is not None

    # -- the Transport the agent side uses ---------------------------------------------

    async def receive(self) -> bytes:
        """The client messages delivered so far, newline-framed; ``b""`` once ended."""
        while not self._inbound:
            if self.closed:
                return b""
            self._inbound_ready.clear()
            await self._inbound_ready.wait()
        data = bytes(self._inbound)
        self._inbound.clear()
        self._inbound_room.set()
        return data

    async def send(self, data: bytes) -> None:
        """Queue each complete line of ``data`` for the client; wait while too much is held.

        Raises ``ConnectionClosed`` once the connection ended."""
        if self.closed:
            raise ConnectionClosed("the remote connection ended")
        lines = (self._partial + data if self._partial else bytes(data)).split(b"\n")
        self._partial = lines.pop()
        # Stripped once here (a no-op copy-free call on the agent's own lines), so every
        # later step may join the bytes as they are; blank lines carry nothing.
        self._route_all([line for line in map(bytes.strip, lines) if line])
        await self._wait_for_room()

    async def aclose(self) -> None:
        """End the connection (idempotent)."""
        self.end()

    def closing_because(self, reason: str) -> None:
        """The agent side is giving up on the client (it fell too far behind): tell the
        client ``reason`` when the stream closes (kept short for a close frame)."""
        one_line = " ".join(reason.split())  # a close frame or an SSE comment: one line
        self.end_reason = one_line.encode()[:120].decode(errors="ignore")

    # -- the client side ----------------------------------------------------------------

    async def deliver(self, message: bytes) -> None:
        """Hand one client message to the agent side; waits while its input is full."""
        self.touch()
        if self.recorder is not None:
            self.recorder.took(message)
        await self._deliver(message)

    async def _deliver(self, message: bytes) -> None:
        # Raw newlines in JSON text are only ever whitespace between tokens (a string
        # cannot hold one unescaped), so blanking them keeps the message and its framing.
        line = message.strip().replace(b"\n", b" ").replace(b"\r", b" ")
        while len(self._inbound) > self.config.max_held_bytes and not self.closed:
            self._inbound_room.clear()
            await self._inbound_room.wait()
        if self.closed:
            raise ConnectionClosed("the remote connection ended")
        self._inbound += line + b"\n"
        self._inbound_ready.set()

    def expect_initial(self, request_id: RequestId) -> asyncio.Future[bytes]:
        """The future of the response to the ``initialize`` POST with ``request_id``."""
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._initial = (request_id, future)
        return future

    def stream(self, session_id: str | None) -> Outlet:
        """The outlet of ``session_id``'s SSE stream (created on first use), or the
        connection stream for None. Raises :class:`TooManyStreams` past the bound."""
        if session_id is None or self.kind == "websocket":
            return self.main
        outlet = self.sessions.get(session_id)
        if outlet is None:
            if len(self.sessions) >= self.config.max_session_streams:
                raise TooManyStreams(f"more than {self.config.max_session_streams} sessions")
            outlet = self.sessions[session_id] = self._outlet()
        return outlet

    async def ask(self, request_id: RequestId, message: bytes) -> asyncio.Future[bytes]:
        """Hand the agent side a request of the server's own (a takeover's ``initialize``
        and ``session/resume``); its answer comes back in the returned future instead of
        going to the client. ``request_id`` is its id (``message``'s)."""
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._internal[request_id] = future
        await self._deliver(message)
        return future

    def hold_output(self) -> None:
        """Keep what the agent side sends from now on until :meth:`release_output`."""
        if self._gate is None:
            self._gate = []

    def held_output(self) -> list[bytes]:
        """The lines held back so far (see :meth:`hold_output`)."""
        return list(self._gate or ())

    def release_output(self) -> None:
        """Queue the held lines for the client, in order; stop holding."""
        held, self._gate = self._gate or [], None
        self._route_all(held)

    def push_restored(self, line: bytes) -> None:
        """Queue ``line`` for the client now, ahead of held output (a rebuilt message)."""
        self._push(line)

    def push_restored_to(self, stream: str | None, line: bytes) -> None:
        """Queue ``line`` on ``stream``'s SSE stream (None: the connection's) now, ahead
        of held output (a rebuilt message of that stream)."""
        self._push_to(stream, [line])

    def touch(self) -> None:
        """Note activity now (the idle countdown restarts)."""
        self.last_active = time.monotonic()

    def idle_for(self, now: float) -> float:
        """Seconds without a stream open and without a request (0 while one is open)."""
        return 0.0 if self.open_streams else now - self.last_active

    def end(self) -> None:
        """End the connection as if DELETEd: the agent side sees end of input, readers
        stop, waiting senders fail. Idempotent."""
        if self.closed:
            return
        self.closed = True
        self._inbound_ready.set()
        self._inbound_room.set()
        self._room.set()
        for outlet in (self.main, *self.sessions.values()):
            outlet.release()
            outlet.wake()
        if self._initial is not None and not self._initial[1].done():
            self._initial[1].set_exception(ConnectionClosed("the agent ended the connection"))
        for future in self._internal.values():
            if not future.done():
                future.set_exception(ConnectionClosed("the agent ended the connection"))
        self._internal.clear()
        if self.recorder is not None:
            self.recorder.forget()  # the stream is over: nothing to resume anywhere
        self.ended.set()

    # -- internals ------------------------------------------------------------------------

    def _outlet(self) -> Outlet:
        return Outlet(
            self._account,
            retention=self.retention,
            peer_acks=True,  # both profiles acknowledge (WebSocket frames, SSE Acp2-Ack)
            max_bytes=self.config.max_held_bytes,
        )

    def _account(self, delta: int) -> None:
        self.held += delta
        if self.held <= self.config.max_held_bytes:
            self._room.set()

    def _route(self, line: bytes) -> None:
        if self._initial is not None and self._answers_initial(line):
            return
        if self._internal and self._answers_internal(line):
            return
        if self._gate is not None:
            self._gate.append(line)
            return
        self._push(line)

    def _route_all(self, lines: list[bytes]) -> None:
        """Route ``lines`` in order; in bulk unless some line may be intercepted."""
        if self._initial is None and not self._internal and self._gate is None:
            self._push_all(lines)
            return
        for line in lines:
            self._route(line)

    def _push(self, line: bytes) -> None:
        self._push_all([line])

    def _push_all(self, lines: list[bytes]) -> None:
        """Queue ``lines`` for the client: on the WebSocket all at once, over SSE one
        push per run of lines that go to the same stream."""
        if not lines:
            return
        if self.kind == "websocket":
            last = self.main.push_all(lines)
            if self.recorder is not None and self.main.durable:
                self.recorder.sent_all(last - len(lines) + 1, lines)
            return
        index, count = 0, len(lines)
        while index < count:
            destination = self._destination(lines[index])
            end = index + 1
            prefix = session_head(destination)
            if prefix:
                # The updates after it for the same session (one C-level test each).
                same = methodcaller("startswith", prefix)
                end += len(list(takewhile(same, islice(lines, end, None))))
            self._push_to(destination, lines[index:end])
            index = end

    def _push_to(self, destination: str | None, lines: list[bytes]) -> None:
        """Queue ``lines`` on ``destination``'s stream (the connection's when it cannot
        have one), and note them for the cursor."""
        try:
            outlet = self.stream(destination)
        except TooManyStreams:
            outlet, destination = self.main, None
        last = outlet.push_all(lines)
        if self.recorder is not None and outlet.durable:
            self.recorder.sent_all_on(destination, last - len(lines) + 1, lines)

    def _destination(self, line: bytes) -> str | None:
        """The session stream ``line`` goes to (None: the connection stream)."""
        # The hot path: a session/update notification goes to its params.sessionId.
        session = fast_session(line)
        return session if session is not None else self.router.destination(line)

    def _answers_initial(self, line: bytes) -> bool:
        assert self._initial is not None
        request_id, future = self._initial
        parsed = read(line)
        if parsed.method is not None or parsed.id != request_id:
            return False
        self._initial = None
        if not future.done():
            future.set_result(line)
        return True

    def _answers_internal(self, line: bytes) -> bool:
        parsed = read(line)
        key = parsed.id if parsed.method is None else None
        future = self._internal.pop(key, None) if key is not None else None
        if future is None:
            return False
        if not future.done():
            future.set_result(line)
        return True

    async def _wait_for_room(self) -> None:
        while self.held > self.config.max_held_bytes and not self.closed:
            self._room.clear()
            self.waiting.set()
            try:
                with anyio.move_on_after(self.config.stall_timeout) as waited:
                    await self._room.wait()
            finally:
                self.waiting.clear()
            # Only a client that is there and takes nothing stalls the connection; while
            # its link is down the agent waits, and the resume grace decides.
            if waited.cancelled_caught and self.open_streams:
                logger.warning(
                    "ending remote connection %s: its client took none of its output for %g s",
                    self.id,
                    self.config.stall_timeout,
                )
                self.closing_because(f"stalled: took nothing for {self.config.stall_timeout:g} s")
                self.end()
        if self.closed:
            raise ConnectionClosed("the remote connection ended")
