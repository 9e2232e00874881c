"""The WebSocket profile: ``GET`` with ``Upgrade: websocket`` on the ACP endpoint.

A new upgrade creates a connection (its id in the 101's ``Acp-Connection-Id``); text
frames are JSON-RPC messages both ways, binary frames are ignored (RFD). A plain
connection ends when its socket closes. With ``Acp2-Durable: 1`` granted (the 101
repeats the header with the retention), every frame is a durable envelope
(:mod:`acp2.transport.durable`): data frames are numbered and acknowledged, and a new
upgrade naming the connection with ``Acp2-Last-Seq`` resumes it — the 101 carries the
last client seq the server took, then the server resends what the client missed.
Refusals of a resume are close codes right after the accept: 4404 unknown connection,
4410 cursor too old, 4401 another principal. A message over the size limit closes the
socket with 1009. A durable upgrade that also asks ``Acp2-Batch: 1`` is granted batch
frames (the 101 repeats the header): the writer frames what is queued when it runs into
batches (:func:`acp2.transport.durable.batches`) instead of one frame per message; it
never waits for more. The grant is per socket: a resume asks again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import anyio

from acp2.errors import ConnectionClosed
from acp2.serve import takeover_streams
from acp2.serve.asgi import Receive, Scope, Send
from acp2.serve.http import CONNECTION_HEADER
from acp2.serve.registry import Registry
from acp2.serve.remote_connection import RemoteConnection
from acp2.serve.security import Headers, Refusal
from acp2.transport.durable import (
    BATCH_HEADER,
    DURABLE_HEADER,
    LAST_SEQ_HEADER,
    CursorTooOld,
    FrameError,
    SeqGap,
    batches,
    decode_frame,
    encode_ack,
    encode_data,
    header_seq,
)

__all__ = ["handle_websocket", "refuse_busy", "reject_websocket"]

logger = logging.getLogger(__name__)

#: How soon after going quiet the server acknowledges what it received.
ACK_DELAY = 1.0


async def reject_websocket(scope: Scope, send: Send, refusal: Refusal) -> None:
    """Turn an upgrade away with ``refusal``'s HTTP status when the server can send one
    (the ``websocket.http.response`` extension), else with a plain 403 close."""
    if "websocket.http.response" in (scope.get("extensions") or {}):
        body = refusal.reason.encode()
        headers = [(b"content-type", b"text/plain; charset=utf-8")]
        if refusal.status == 401:
            headers.append((b"www-authenticate", b"Bearer"))
        start = {"type": "websocket.http.response.start", "status": refusal.status}
        await send({**start, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008})


async def refuse_busy(scope: Scope, send: Send, reason: str, retry_after: int) -> None:
    """Turn an upgrade away because the server is full: a 503 with ``Retry-After`` when
    the server can answer the handshake so, else accepted and closed with 1013 (try
    again later); never the 403 of an ASGI close before accepting."""
    if "websocket.http.response" in (scope.get("extensions") or {}):
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"retry-after", str(retry_after).encode()),
        ]
        start = {"type": "websocket.http.response.start", "status": 503, "headers": headers}
        await send(start)
        await send({"type": "websocket.http.response.body", "body": reason.encode()})
        return
    await _accept(send, [])
    await send({"type": "websocket.close", "code": 1013, "reason": reason})


async def handle_websocket(
    scope: Scope, receive: Receive, send: Send, registry: Registry, principal: str
) -> None:
    """Serve one WebSocket on the ACP endpoint (the ``websocket.connect`` was received)."""
    headers = Headers.of(scope)
    config = registry.config
    wants_durable = config.durable and headers.get(DURABLE_HEADER) == "1"
    resume_id = headers.get(CONNECTION_HEADER)
    if resume_id:
        await _resume(receive, send, headers, registry, principal, resume_id)
        return
    busy = registry.busy(principal)
    if busy is not None:
        await refuse_busy(scope, send, busy, config.retry_after)
        return
    retention = config.retention if wants_durable else None
    connection = registry.create(principal, "websocket", retention)
    accept = [(CONNECTION_HEADER, connection.id)]
    batch = wants_durable and _wants_batch(headers)
    if wants_durable:
        accept.append((DURABLE_HEADER, config.retention.header()))
    if batch:
        accept.append((BATCH_HEADER, "1"))
    await _accept(send, accept)
    await _Socket(receive, send, connection, batch=batch).run()
    if not connection.durable:
        registry.remove(connection.id)  # RFD: a plain connection ends with its socket


async def _resume(
    receive: Receive,
    send: Send,
    headers: Headers,
    registry: Registry,
    principal: str,
    connection_id: str,
) -> None:
    connection = registry.get(connection_id)
    if connection_id in registry.restoring:
        # Another socket is taking this stream over right now: come back in a moment.
        await _accept(send, [])
        await send({"type": "websocket.close", "code": 1013, "reason": "Resuming, try again"})
        return
    if connection is None and registry.backing is not None:
        await _take_over_stream(receive, send, headers, registry, principal, connection_id)
        return
    code, reason = 0, ""
    generation: int | None = None
    if connection is None or not connection.durable or connection.kind != "websocket":
        code, reason = 4404, "Unknown connection"
    elif connection.principal != principal:
        code, reason = 4401, "This connection belongs to another principal"
    else:
        try:
            generation = _take_over(connection, _last_seq(headers))
        except CursorTooOld:
            code, reason = 4410, "Acp2-Last-Seq is older than the retained window"
        except ValueError:
            code, reason = 4410, "Acp2-Last-Seq was never sent"
    if code or connection is None:
        await _accept(send, [])
        await send({"type": "websocket.close", "code": code, "reason": reason})
        return
    batch = _wants_batch(headers)
    last = connection.received.last
    await _accept(send, _resumed_headers(registry, connection.id, last, batch))
    await _Socket(receive, send, connection, batch=batch).run(generation)


def _last_seq(headers: Headers) -> int:
    """The resuming client's ``Acp2-Last-Seq`` (0 when absent); ``ValueError`` unless it
    is a seq as :func:`~acp2.transport.durable.header_seq` reads one."""
    seq = header_seq(headers.get(LAST_SEQ_HEADER) or "0")
    if seq is None:
        raise ValueError("Acp2-Last-Seq is not a seq")
    return seq


async def _take_over_stream(
    receive: Receive,
    send: Send,
    headers: Headers,
    registry: Registry,
    principal: str,
    connection_id: str,
) -> None:
    """Resume a stream this node does not hold from its stored cursor (its node died):
    accept at once with the cursor's client seq (the rebuild may wait for a lease), then
    rebuild what the client missed (:mod:`acp2.serve.takeover_streams`) and serve the socket;
    refused with a close code as an unknown stream is when that cannot be exact."""
    backing = registry.backing
    assert backing is not None
    cursor = takeover_streams.load(backing, connection_id, registry.config.grace)
    code, reason, result = 4404, "Unknown connection", None
    if cursor is not None and cursor.principal != principal:
        code, reason = 4401, "This connection belongs to another principal"
    elif cursor is not None and (busy := registry.busy(principal)) is not None:
        code, reason = 1013, busy
    elif cursor is not None:
        try:
            result = takeover_streams.plan(cursor, _last_seq(headers))
        except takeover_streams.Unrestorable as exc:
            code, reason = exc.code, exc.reason[:120]
        except ValueError:
            code, reason = 4410, "Acp2-Last-Seq is not a number"
    if result is None or cursor is None:
        logger.info("not taking stream %s over: %s", connection_id, reason)
        await _accept(send, [])
        await send({"type": "websocket.close", "code": code, "reason": reason})
        return
    registry.restoring.add(connection_id)  # before the 101: a second socket waits its turn
    batch = _wants_batch(headers)
    try:
        await _accept(send, _resumed_headers(registry, connection_id, cursor.received, batch))
        connection = await takeover_streams.restore(registry, backing, result)
    except takeover_streams.Unrestorable as exc:
        logger.warning("could not take stream %s over: %s", connection_id, exc.reason)
        await send({"type": "websocket.close", "code": exc.code, "reason": exc.reason[:120]})
        return
    finally:
        registry.restoring.discard(connection_id)
    await _Socket(receive, send, connection, batch=batch).run()


def _wants_batch(headers: Headers) -> bool:
    """Whether a durable upgrade asks for batch frames (``Acp2-Batch: 1``)."""
    return headers.get(BATCH_HEADER) == "1"


def _resumed_headers(
    registry: Registry, connection_id: str, last: int, batch: bool
) -> list[tuple[str, str]]:
    """The 101 headers of a resumed stream: its id, the retention, the last client seq,
    and the batch grant when asked for."""
    accept = [
        (CONNECTION_HEADER, connection_id),
        (DURABLE_HEADER, registry.config.retention.header()),
        (LAST_SEQ_HEADER, str(last)),
    ]
    if batch:
        accept.append((BATCH_HEADER, "1"))
    return accept


def _take_over(connection: RemoteConnection, last_seq: int) -> int:
    """Requeue what the client missed and make the new socket the outlet's reader, in
    one step: the old socket's writer may still be running (a half-open socket), and
    if it could take the requeued messages before the new reader is attached it would
    write them to the dead socket, and the new one would skip them."""
    outlet = connection.main
    outlet.resume(last_seq)
    return outlet.attach()


async def _accept(send: Send, headers: list[tuple[str, str]]) -> None:
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    await send({"type": "websocket.accept", "headers": raw})


@dataclass
class _Socket:
    """One accepted socket of a connection: a reader task and a writer (this task)."""

    receive: Receive
    send: Send
    connection: RemoteConnection
    close_code: int = 1000
    close_reason: str = ""
    acked: int = 0
    #: Whether this socket was granted batch frames (``Acp2-Batch``).
    batch: bool = False

    async def run(self, generation: int | None = None) -> None:
        """Pump both ways until the socket closes, a resume replaces it, or the
        connection ends; then close the socket with the reason. ``generation`` is the
        reader number when the caller already attached this socket (a resume)."""
        connection = self.connection
        outlet = connection.main
        self.acked = connection.received.last
        if generation is None:
            generation = outlet.attach()
        connection.open_streams += 1
        gone = False
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._read, tg.cancel_scope)
                await self._write(generation)
                tg.cancel_scope.cancel()
            gone = self.close_code == 0
            if not gone:
                code, reason = self.close_code, self.close_reason
                await self.send({"type": "websocket.close", "code": code, "reason": reason})
        except* OSError:
            pass  # the client is gone; a durable connection waits for its resume
        finally:
            connection.open_streams -= 1
            connection.touch()
            outlet.detach(generation)

    async def _read(self, scope: anyio.CancelScope) -> None:
        limit = self.connection.config.max_message_size
        try:
            while True:
                message = await self.receive()
                if message["type"] == "websocket.disconnect":
                    self.close_code = 0
                    break
                text = message.get("text")
                if text is None:
                    continue  # binary frames are ignored (RFD)
                data = text.encode()
                if len(data) > limit + 64:
                    self.close_code, self.close_reason = 1009, "Message over the size limit"
                    break
                if not await self._take(data):
                    break
        except ConnectionClosed:
            pass
        scope.cancel()

    async def _take(self, data: bytes) -> bool:
        """Handle one text frame; False when the socket must close (reason set)."""
        connection = self.connection
        if not connection.durable:
            await connection.deliver(data)
            return True
        try:
            frame = decode_frame(data)
            if frame.ack is not None:
                connection.main.ack(frame.ack)
                if connection.recorder is not None:
                    connection.recorder.ack(frame.ack)
                return True
            assert frame.seq is not None
            await self._deliver(frame.seq, frame.messages())
        except (FrameError, SeqGap) as exc:
            self.close_code, self.close_reason = 1008, str(exc)[:120]
            return False
        return True

    async def _deliver(self, first: int, messages: list[bytes]) -> None:
        """Deliver the messages of a data or batch frame that were not taken before."""
        connection = self.connection
        # One seq at a time: the count of taken messages never runs ahead of delivery.
        for seq, message in enumerate(messages, first):
            if not connection.received.accept(seq):
                continue
            if connection.recorder is not None:
                connection.recorder.cursor.received = seq
            await connection.deliver(message)
        if connection.received.ack_due():
            connection.main.wake()

    async def _write(self, generation: int) -> None:
        connection = self.connection
        outlet = connection.main
        while outlet.generation == generation:
            await self._ack_if_due(force=False)
            if outlet.generation != generation:
                break  # replaced while acknowledging: what is queued is the new reader's
            items = outlet.take()
            if items:
                if connection.recorder is not None:
                    connection.recorder.cover()  # the database describes what goes out
                for data in self._frames(items):
                    await self.send({"type": "websocket.send", "text": data.decode()})
                continue
            if connection.closed:
                if connection.end_reason:  # the agent side gave up on this client
                    self.close_code, self.close_reason = 1008, connection.end_reason
                return
            pending = connection.durable and connection.received.last > self.acked
            if not await outlet.wait(ACK_DELAY if pending else None):
                await self._ack_if_due(force=True)
        self.close_code, self.close_reason = 4000, "Replaced by a newer socket"

    def _frames(self, items: list[tuple[int, bytes]]) -> list[bytes]:
        """The frames carrying ``items``: batches when granted, else one per message
        (a plain stream's messages go as they are)."""
        if self.batch and self.connection.durable:
            return batches(items)
        return [encode_data(seq, message) if seq else message for seq, message in items]

    async def _ack_if_due(self, *, force: bool) -> None:
        received = self.connection.received
        if not self.connection.durable or received.last <= self.acked:
            return
        if force or received.ack_due():
            recorder = self.connection.recorder
            if recorder is not None:
                # What is acknowledged, the client forgets: a node taking over must know.
                recorder.cover_received(received.last)
            self.acked = received.acked()
            await self.send({"type": "websocket.send", "text": encode_ack(self.acked).decode()})
