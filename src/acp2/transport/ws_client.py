"""The client Transport over a WebSocket (the RFD's WebSocket profile, plus acp2's durable
links), on the ``websockets`` library (the ``remote`` extra).

:func:`open_websocket` upgrades ``GET <url>`` and yields a :class:`WebSocketTransport`.
Every text frame is one JSON-RPC message; binary frames are ignored (RFD).

When the client asks for a durable link (``Acp2-Durable: 1``) and the server grants it,
frames are envelopes (:mod:`acp2.transport.durable`): each direction numbers its data
frames, keeps them until acknowledged, and drops duplicates. The client also asks for
batch frames (``Acp2-Batch: 1``): a server that grants them sends several messages per
frame when several are queued, which the client splits, each message under its own seq
(the client's own frames stay one message each: it sends few). A link that drops is
reconnected underneath the byte stream, paced by a :class:`~acp2.transport.backoff.Backoff`:
the new upgrade names the connection and the last seq taken, the server answers with the
last seq it took, and both resend what the other missed -- the rpc layer above sees one
unbroken stream. Every re-dial sends back the cookies the server set (a load balancer's
affinity cookie brings it to the node that holds the connection, RFD). When the server
refuses (close 4404 / 4410 / 4401, or an HTTP 404 / 410), the stream ends with
:class:`~acp2.transport.remote_base.ResumeRefused` as its reason
(:attr:`WebSocketTransport.ended_by`). A plain link ends when its socket closes (RFD).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
from anyio.abc import TaskGroup

from acp2.errors import ConnectionClosed
from acp2.transport.backoff import Backoff
from acp2.transport.durable import (
    BATCH_BYTES,
    BATCH_HEADER,
    BATCH_MAX,
    DURABLE_HEADER,
    LAST_SEQ_HEADER,
    CursorTooOld,
    FrameError,
    Received,
    Retained,
    Retention,
    SeqGap,
    decode_frame,
    encode_ack,
    encode_data,
)
from acp2.transport.remote_base import (
    CONNECTION_HEADER,
    Inbox,
    LinkLost,
    RemoteRefused,
    ResumeRefused,
    needs,
    outgoing_framer,
    whole_messages,
)
from acp2.transport.ws_socket import Link, dial

__all__ = ["REFUSAL_CODES", "WebSocketTransport", "open_websocket"]

log = logging.getLogger("acp2.transport.ws")

#: Close codes by which a server refuses to resume a link (contract: unknown connection,
#: cursor too old, not authorized).
REFUSAL_CODES = frozenset({4404, 4410, 4401})
#: Seconds between acknowledgements while messages keep coming, which is also the longest
#: a quiet receiver waits before acknowledging what it took (contract: < 1 s). An ack frame
#: per interval instead of one per ``ACK_EVERY`` messages: each ack is a frame written and
#: a wake-up of the server, ~10% of the client's CPU in a fast stream (docs/benchmarks.md).
ACK_DELAY = 0.025
#: What share of the server's retention count may arrive unacknowledged before an ack goes
#: out at once, timer or not: the server trims its window by count even when nothing is
#: acknowledged, and a resume needs everything after the client's cursor still there.
ACK_SHARE = 4
#: Seconds to wait for the close code of a resume the server accepted without a cursor.
REFUSAL_WAIT = 5.0
#: Chunks the transport holds for a reader that is not reading, before it stops reading
#: the socket (and so pushes back on the server through TCP).
INBOX_CHUNKS = 256


class WebSocketTransport:
    """One client connection over WebSocket; see the module docstring.

    Read-only after :func:`open_websocket` returns it: ``connection_id`` (the
    ``Acp-Connection-Id`` of the 101, or ``None``), ``retention`` (the server's grant, or
    ``None`` for a plain link), ``batched`` (whether the current link's server granted
    batch frames), ``reconnects`` (links re-established so far),
    ``ended_by`` (why the stream ended: ``None`` while it runs or after :meth:`aclose`).
    """

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        backoff: Backoff,
        options: dict[str, Any],
        *,
        max_message: int = 0,
    ) -> None:
        self.url = url
        self._headers = dict(headers)
        self._backoff = backoff
        self._options = options
        self._framer = outgoing_framer()
        self._inbox = Inbox(INBOX_CHUNKS)
        self._lock = anyio.Lock()
        self._link: Link | None = None
        self._closing = False
        self._acked_sent = 0
        self._ack_wanted = anyio.Event()
        #: Whether the acknowledger's timer already runs for what was taken since its
        #: last ack (so a message costs a flag test, not an ``Event.set()``).
        self._ack_pending = False
        self.connection_id: str | None = None
        self.retention: Retention | None = None
        self.batched = False
        self.reconnects = 0
        #: The cookies the server set, sent back on every re-dial (load-balancer affinity:
        #: the RFD expects clients to keep them for the connection, RT-10).
        self._cookies: dict[str, str] = {}
        self.ended_by: BaseException | None = None
        self._out = Retained()
        self._in = Received()
        #: The largest message taken (0: the socket's frame limit is the only bound); the
        #: socket's limit is per frame, and a batch frame holds several messages.
        self._max_message = max_message

    # -- the Transport protocol ---------------------------------------------------------

    async def receive(self) -> bytes:
        """The next message(s) from the server, newline-terminated; ``b""`` at the end."""
        return await self._inbox.take()

    async def send(self, data: bytes) -> None:
        """Send the whole messages in ``data`` (a partial last line waits for the rest).

        On a durable link a message is kept until the server acknowledges it, so a send
        while the link is down returns at once and the message goes out on the resumed
        link. Raises ``ConnectionClosed`` once the stream has ended.
        """
        for message in whole_messages(self._framer, data):
            async with self._lock:
                if self._ended():
                    raise ConnectionClosed("the WebSocket connection is closed")
                await self._send_locked(message)

    async def aclose(self) -> None:
        """Close the socket (code 1000: the client is done) and end the stream. Idempotent."""
        if self._closing:
            return
        self._closing = True
        link, self._link = self._link, None
        self._inbox.close()
        if link is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(2):
                await link.close(1000)

    # -- sending ------------------------------------------------------------------------

    def _ended(self) -> bool:
        return self._closing or self.ended_by is not None

    async def _send_locked(self, message: bytes) -> None:
        if self.retention is None:
            link = self._link
            if link is None:
                raise ConnectionClosed("the WebSocket connection is closed")
            try:
                await link.send(message)
            except ConnectionClosed:
                raise
            return
        seq = self._out.add(message)
        link = self._link
        if link is not None:
            # A failure here is the drop the reader sees too; the resumed link resends.
            with contextlib.suppress(ConnectionClosed):
                await link.send(encode_data(seq, message))

    # -- the link's life ------------------------------------------------------------------

    async def dial(self) -> None:
        """Dial the first link; raises :class:`RemoteRefused` when the upgrade is refused."""
        link = await dial(self.url, self._headers, self._options)
        self._cookies.update(link.cookies())
        self.connection_id = link.header(CONNECTION_HEADER)
        granted = link.header(DURABLE_HEADER)
        self.batched = link.header(BATCH_HEADER) == "1"
        if granted is not None and self.connection_id:
            self.retention = Retention.parse(granted)
            self._out = Retained(self.retention)
            self._in = Received(ack_every=max(1, self.retention.messages // ACK_SHARE))
        self._link = link

    def start(self, tg: TaskGroup) -> None:
        """Run the reader (and on a durable link the acknowledger) in ``tg``."""
        assert self._link is not None
        tg.start_soon(self._run, self._link)
        if self.retention is not None:
            tg.start_soon(self._acknowledge)

    async def _run(self, link: Link) -> None:
        try:
            while True:
                code = await self._read(link)
                if self._closing:
                    return
                if self.retention is None or code == 1000 or code in REFUSAL_CODES:
                    self._end(_ended_reason(code))
                    return
                link = await self._resume()
        except (ConnectionClosed, RemoteRefused) as exc:
            self._end(exc)

    async def _read(self, link: Link) -> int | None:
        """Take the link's frames until it closes; return its close code."""
        async for frame in link.frames():
            if self.retention is None:
                if self._max_message and len(frame) > self._max_message:
                    # The socket's limit was raised for batches the server did not grant.
                    await link.close(1009)
                    raise ConnectionClosed("the server sent a message over the limit")
                await self._inbox.put(frame + b"\n")
            else:
                await self._take(link, frame)
        return link.close_code()

    async def _take(self, link: Link, frame: bytes) -> None:
        try:
            parsed = decode_frame(frame)
            if parsed.ack is not None:
                self._out.ack(parsed.ack)
                return
            assert parsed.seq is not None
            if parsed.msgs is None:
                if self._max_message and len(parsed.msg) > self._max_message:
                    raise _TooBig(f"a message over {self._max_message} bytes")
                if not self._in.accept(parsed.seq):
                    return
                chunk = bytes(parsed.msg) + b"\n"
            else:
                chunk = self._split(parsed.seq, parsed.msgs)
        except (FrameError, SeqGap) as exc:
            await link.close(1002)
            raise ConnectionClosed(f"the server broke the durable link: {exc}") from None
        except _TooBig as exc:
            await link.close(1009)
            raise ConnectionClosed(f"the server sent a message over the limit: {exc}") from None
        if not chunk:
            return
        await self._inbox.put(chunk)
        if self._in.ack_due():
            await self._send_ack(link)
        elif not self._ack_pending:
            self._ack_pending = True
            self._ack_wanted.set()

    def _split(self, first: int, msgs: list[Any]) -> bytes:
        """The messages of a batch frame not taken before, newline-terminated, as one
        chunk (one inbox put per frame); ``b""`` when all were duplicates."""
        if self._max_message and max(map(len, msgs)) > self._max_message:
            raise _TooBig(f"a batch holds a message over {self._max_message} bytes")
        skip = self._in.accept_batch(first, len(msgs))
        if skip == len(msgs):
            return b""
        # The Raw values are views of the frame: joined without a copy of each.
        fresh = msgs[skip:] if skip else msgs
        fresh.append(msgspec.Raw(b""))
        return b"\n".join(fresh)

    async def _send_ack(self, link: Link) -> None:
        seq = self._in.acked()
        self._acked_sent = seq
        with contextlib.suppress(ConnectionClosed):
            await link.send(encode_ack(seq))

    async def _acknowledge(self) -> None:
        """Acknowledge what was taken :data:`ACK_DELAY` after the first message since the
        last ack: at most one ack per interval while messages keep coming, and one within
        the interval once the link goes quiet (the reader acknowledges at once when a
        share of the server's retention arrived unacknowledged, see :data:`ACK_SHARE`)."""
        while not self._ended():
            await self._ack_wanted.wait()
            self._ack_wanted = anyio.Event()
            await anyio.sleep(ACK_DELAY)
            # Messages from here on start the next interval; this ack covers the rest.
            self._ack_pending = False
            link = self._link
            if link is not None and self._in.last > self._acked_sent:
                await self._send_ack(link)

    async def _resume(self) -> Link:
        """Re-dial until a link is resumed; raise when refused or out of attempts."""
        self._link = None
        headers = {**self._headers, CONNECTION_HEADER: self.connection_id or ""}
        for wait in self._backoff.delays():
            await anyio.sleep(wait)
            headers[LAST_SEQ_HEADER] = str(self._in.last)
            if self._cookies:
                headers["cookie"] = "; ".join(f"{k}={v}" for k, v in self._cookies.items())
            try:
                link = await dial(self.url, headers, self._options)
            except RemoteRefused as exc:
                if exc.status in (404, 410):
                    raise ResumeRefused(str(exc), exc.status) from None
                if exc.status in (401, 403):
                    raise
                continue
            self._cookies.update(link.cookies())
            self.batched = link.header(BATCH_HEADER) == "1"
            await self._resend(link)
            self.reconnects += 1
            return link
        raise ConnectionClosed("the WebSocket link dropped and could not be re-established")

    async def _resend(self, link: Link) -> None:
        """Resend what the server did not take, before anything new goes out."""
        took = link.header(LAST_SEQ_HEADER)
        if took is None:  # no cursor: the server accepted only to close with a refusal
            raise await _refusal(link)
        async with self._lock:
            try:
                missed = self._out.after(_int(took))
            except (ValueError, CursorTooOld) as exc:
                await link.close(4410)
                raise ResumeRefused(f"cannot resume: {exc}", 4410) from None
            for seq, message in missed:
                await link.send(encode_data(seq, message))
            self._link = link
        self._acked_sent = 0
        self._ack_pending = True
        self._ack_wanted.set()

    def _end(self, reason: BaseException) -> None:
        if not self._closing:
            self.ended_by = reason
            log.info("remote stream ended: %s", reason)
        self._link = None
        self._inbox.close()


class _TooBig(Exception):
    """A message in a batch frame over the client's message size limit."""


def _int(value: str | None) -> int:
    try:
        return max(0, int(value or "0"))
    except ValueError:
        return 0


async def _refusal(link: Link) -> ResumeRefused:
    """The refusal a resumed link without a cursor closes with (4404 if none comes)."""
    with anyio.move_on_after(REFUSAL_WAIT):
        async for _ in link.frames():
            pass
    code = link.close_code()
    if code not in REFUSAL_CODES:
        with anyio.CancelScope(shield=True), anyio.move_on_after(1):
            await link.close(1002)
        code = 4404
    assert code is not None
    return ResumeRefused(f"the server refused to resume the link (close {code})", code)


def _ended_reason(code: int | None) -> ConnectionClosed:
    if code in REFUSAL_CODES:
        assert code is not None
        return ResumeRefused(f"the server refused to resume the link (close {code})", code)
    if code == 1000:
        return ConnectionClosed("the server closed the WebSocket (close 1000)")
    return LinkLost(f"the WebSocket broke (close {code})")


@asynccontextmanager
async def open_websocket(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    durable: bool = True,
    batch: bool = True,
    backoff: Backoff | None = None,
    max_message_bytes: int = 64 * 1024 * 1024,
    open_timeout: float = 10.0,
    ping_interval: float | None = 15.0,
) -> AsyncIterator[WebSocketTransport]:
    """Open a WebSocket connection to ``url`` (``ws://`` or ``wss://``) and yield its
    transport; close it on exit.

    ``headers`` go on every upgrade (e.g. ``Authorization``). With ``durable`` the client
    asks for a durable link; the transport's ``retention`` says whether it was granted;
    ``batch`` (with ``durable``) also asks for batch frames (``batched`` says the grant).
    ``max_message_bytes`` bounds each message; a batch frame may be bigger (up to
    :data:`~acp2.transport.durable.BATCH_BYTES` of messages plus the envelope).
    ``backoff`` paces reconnects of a durable link (default :class:`Backoff`). Raises
    :class:`RemoteRefused` when the server cannot be reached or refuses the upgrade
    (``status`` says how: the caller may fall back to Streamable HTTP), ``ImportError``
    without the ``websockets`` package.
    """
    needs("websockets")
    wanted = dict(headers or {})
    frame_limit = max_message_bytes
    if durable:
        wanted[DURABLE_HEADER] = "1"
    if durable and batch:
        wanted[BATCH_HEADER] = "1"
        # A frame of several messages: their bytes plus a comma each and the envelope.
        frame_limit = max(max_message_bytes, BATCH_BYTES) + BATCH_MAX + 1024
    options: dict[str, Any] = {
        "max_size": frame_limit,
        "open_timeout": open_timeout,
        "ping_interval": ping_interval,
    }
    limit = max_message_bytes if frame_limit > max_message_bytes else 0
    transport = WebSocketTransport(url, wanted, backoff or Backoff(), options, max_message=limit)
    await transport.dial()
    async with anyio.create_task_group() as tg:
        transport.start(tg)
        try:
            yield transport
        finally:
            await transport.aclose()
            tg.cancel_scope.cancel()
