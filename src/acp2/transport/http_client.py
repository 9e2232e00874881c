"""The client Transport over Streamable HTTP (the RFD's POST + SSE profile), on ``httpx``
(the ``remote`` extra; HTTP/2 when ``h2`` is installed).

Each outgoing JSON-RPC message is one POST to the endpoint. The first must be
``initialize``: its ``200`` body is the answer and names the connection
(``Acp-Connection-Id``), which every later request carries. A message about a session
(``params.sessionId``, or the answer to a server request that had one) also carries
``Acp-Session-Id``. Server messages arrive on long-lived SSE GETs: one for the connection,
opened after ``initialize``, and one per session, opened as soon as a session id is seen
(an answer's ``result.sessionId``, an outgoing message about it, or a child session a
parent's ``subagent_update`` names); all are merged into
the one byte stream in arrival order. Cookies the server sets are kept for the
connection (load-balancer affinity, RFD).

Durable (``Acp2-Durable`` granted on the ``initialize`` answer): every POST carries an
``Acp2-Seq`` and is retried with the same seq after a network failure (the server takes
each seq once); every SSE event carries an ``id:``, and a stream that breaks is reopened
with ``Last-Event-ID`` so the server resends what was missed. The client confirms the
events it took with a bodiless ``Acp2-Ack`` POST per stream, at most every
:data:`ACK_DELAY` seconds while events arrive, so the server can forget them (it keeps
everything unconfirmed, and makes the agent wait when that grows). A ``404`` (connection
unknown) or ``410`` (cursor too old) ends the stream with
:class:`~acp2.transport.remote_base.ResumeRefused`. A plain connection ends when its
connection stream ends.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
from anyio.abc import TaskGroup

from acp2.errors import ConnectionClosed, internal_error
from acp2.rpc.envelope import Envelope, carries_id, read, result_session
from acp2.rpc.messages import RequestId, encode_error
from acp2.rpc.update_frames import announced_child
from acp2.sanitize import line as sanitize_line
from acp2.schema.methods import INITIALIZE
from acp2.transport.backoff import Backoff
from acp2.transport.durable import ACK_HEADER, DURABLE_HEADER, SEQ_HEADER, Retention
from acp2.transport.remote_base import (
    CONNECTION_HEADER,
    SESSION_HEADER,
    Inbox,
    LinkLost,
    RemoteRefused,
    ResumeRefused,
    needs,
    outgoing_framer,
    whole_messages,
)
from acp2.transport.sse import SseError, SseParser

__all__ = ["MAX_SESSION_STREAMS", "HttpTransport", "open_http"]

log = logging.getLogger("acp2.transport.http")

JSON = "application/json"
EVENT_STREAM = "text/event-stream"
INBOX_CHUNKS = 256
#: The most session streams open at once that a parent's ``subagent_update`` may add to
#: (the connection's own stream aside): each holds one of the HTTP client's pooled
#: connections (100 by default over HTTP/1.1), which the POSTs need too.
MAX_SESSION_STREAMS: Final = 64
#: A durable stream silent this long (four missed keepalives) counts as broken.
DURABLE_READ_TIMEOUT = 60.0
#: Seconds between the first unconfirmed event and the ``Acp2-Ack`` POST confirming it
#: (and everything that arrived meanwhile: one POST covers a burst).
ACK_DELAY = 0.2


class HttpTransport:
    """One client connection over Streamable HTTP; see the module docstring.

    Read-only: ``connection_id``, ``retention`` (the durable grant or ``None``),
    ``reconnects`` (streams reopened and POSTs retried after a failure), ``ended_by``
    (why the stream ended; ``None`` while it runs or after :meth:`aclose`), ``streams``
    (the session ids whose SSE stream is open or opening; ``None`` is the connection's).
    """

    def __init__(
        self, url: str, client: Any, tg: TaskGroup, backoff: Backoff, *, durable: bool
    ) -> None:
        self.url = url
        self._wants_durable = durable
        self._http = client
        self._tg = tg
        self._backoff = backoff
        self._framer = outgoing_framer()
        self._inbox = Inbox(INBOX_CHUNKS)
        self._lock = anyio.Lock()
        self._closing = False
        self._seq = 0
        #: Server requests about a session, by id: their answers go to that session.
        self._asked: dict[RequestId, str] = {}
        self._cursors: dict[str | None, int] = {}
        #: The cursor each stream's last ``Acp2-Ack`` (or reopen) confirmed.
        self._confirmed: dict[str | None, int] = {}
        self._ack_wanted = anyio.Event()
        #: The streams that got a 200 since their last break (their backoff restarts).
        self._opened: set[str | None] = set()
        self.streams: set[str | None] = set()
        #: Set once an announced child was refused a stream (logged once).
        self._capped = False
        self.connection_id: str | None = None
        self.retention: Retention | None = None
        self.reconnects = 0
        self.ended_by: BaseException | None = None

    # -- the Transport protocol -----------------------------------------------------------

    async def receive(self) -> bytes:
        """The next message(s) from the server, newline-terminated; ``b""`` at the end."""
        return await self._inbox.take()

    async def send(self, data: bytes) -> None:
        """POST each whole message in ``data``, in order; raises ``ConnectionClosed`` once
        the stream has ended (``ended_by`` says why)."""
        for message in whole_messages(self._framer, data):
            async with self._lock:
                if self._closing or self.ended_by is not None:
                    raise ConnectionClosed("the HTTP connection is closed")
                if self.connection_id is None:
                    await self._initialize(message)
                else:
                    await self._post(message)

    async def aclose(self) -> None:
        """End the connection (``DELETE``, best effort) and the stream. Idempotent."""
        if self._closing:
            return
        self._closing = True
        self._inbox.close()
        if self.connection_id is not None and self.ended_by is None:
            with (
                anyio.CancelScope(shield=True),
                anyio.move_on_after(2),
                contextlib.suppress(Exception),
            ):
                await self._http.delete(self.url, headers=self._ids(None))

    # -- posting --------------------------------------------------------------------------

    def _ids(self, session: str | None) -> dict[str, str]:
        found = {CONNECTION_HEADER: self.connection_id or ""}
        if session is not None:
            found[SESSION_HEADER] = session
        return found

    async def _initialize(self, message: bytes) -> None:
        headers = {"Content-Type": JSON, "Accept": f"{JSON}, {EVENT_STREAM}"}
        if self._wants_durable:
            headers[DURABLE_HEADER] = "1"
        try:
            answer = await self._http.post(self.url, content=message, headers=headers)
        except needs("httpx").HTTPError as exc:
            self._fail(RemoteRefused(f"cannot reach {self.url}: {exc}"))
            raise ConnectionClosed(str(exc)) from None
        connection_id = answer.headers.get(CONNECTION_HEADER)
        if answer.status_code != 200 or not connection_id:
            self._fail(_refused(self.url, answer, INITIALIZE.name))
            raise ConnectionClosed("the server refused initialize")
        self.connection_id = connection_id
        granted = answer.headers.get(DURABLE_HEADER)
        if granted is not None and self._wants_durable:
            self.retention = Retention.parse(granted)
            self._tg.start_soon(self._acknowledge)
        await self._inbox.put(answer.content.strip() + b"\n")
        self._open(None)

    async def _post(self, message: bytes) -> None:
        fields = read(message)
        session = self._session_of(fields)
        if session is not None:
            self._open(session)
        headers = {"Content-Type": JSON, **self._ids(session)}
        if self.retention is not None:
            self._seq += 1
            headers[SEQ_HEADER] = str(self._seq)
        answer = await self._post_retrying(message, headers)
        if answer is None:
            return
        if answer.status_code in (200, 202, 204):
            return
        if answer.status_code in (401, 403, 404, 410):
            self._fail(_gone(self.url, answer))
            raise ConnectionClosed("the server ended the connection")
        await self._refuse_locally(fields, answer)

    def _session_of(self, fields: Envelope) -> str | None:
        if fields.method is not None:
            return fields.session_id
        return self._asked.pop(fields.id, None) if fields.id is not None else None

    async def _post_retrying(self, message: bytes, headers: dict[str, str]) -> Any:
        """POST once (plain) or until it gets an answer (durable); ``None`` when the
        server is gone (the stream has then ended)."""
        errors = needs("httpx").TransportError
        delays = self._backoff.delays()
        while True:
            try:
                return await self._http.post(self.url, content=message, headers=headers)
            except errors as exc:
                wait = next(delays, None) if self.retention is not None else None
                if wait is None:
                    lost = LinkLost if self.retention is None else ConnectionClosed
                    self._fail(lost(f"cannot reach {self.url}: {exc}"))
                    raise ConnectionClosed(str(exc)) from None
                self.reconnects += 1
                await anyio.sleep(wait)

    async def _refuse_locally(self, fields: Envelope, answer: Any) -> None:
        """A POST the server refused (other than "connection gone"): a request gets an
        error answer so its caller is not left waiting; anything else is logged."""
        why = f"HTTP {answer.status_code}: {sanitize_line(answer.text[:200])}"
        if fields.kind != "request":
            log.warning("the server refused a message: %s", why)
            return
        error = internal_error(f"the server refused the request ({why})")
        await self._inbox.put(encode_error(fields.id, error) + b"\n")

    # -- the SSE streams ------------------------------------------------------------------

    def _open(self, session: str | None) -> None:
        if session in self.streams or self._closing or self.ended_by is not None:
            return
        self.streams.add(session)
        self._tg.start_soon(self._stream, session)

    def _open_child(self, child: str) -> None:
        """Open the stream of a child a parent announced, while fewer than
        :data:`MAX_SESSION_STREAMS` session streams are open (a server naming endless
        children must not take every pooled connection, nor a task per name)."""
        if child in self.streams:
            return
        if len(self.streams) > MAX_SESSION_STREAMS:
            if not self._capped:
                self._capped = True
                log.warning(
                    "children announced past %d session streams: their streams stay shut",
                    MAX_SESSION_STREAMS,
                )
            return
        self._open(child)

    async def _stream(self, session: str | None) -> None:
        """Keep one SSE stream open (durable: reopened after breaks) and feed the inbox."""
        delays = self._backoff.delays()
        try:
            while not self._closing:
                broke = await self._listen(session)
                if self._closing or not broke:
                    break
                if session in self._opened:
                    # It was open since the last break: a new outage gets the whole backoff
                    # (attempts and time), not what earlier outages left of it.
                    self._opened.discard(session)
                    delays = self._backoff.delays()
                if self.retention is None:
                    if session is None:
                        self._fail(LinkLost("the connection's SSE stream broke"))
                    return
                wait = next(delays, None)
                if wait is None:
                    self._fail(ConnectionClosed("the SSE stream broke and could not be reopened"))
                    return
                self.reconnects += 1
                await anyio.sleep(wait)
        except (ConnectionClosed, SseError) as exc:
            self._fail(exc if isinstance(exc, ConnectionClosed) else ConnectionClosed(str(exc)))
            return
        finally:
            self.streams.discard(session)
        if session is None and not self._closing:
            self._fail(ConnectionClosed("the server ended the connection stream"))

    async def _listen(self, session: str | None) -> bool:
        """One GET; True when it broke (network), False when the server ended it."""
        httpx = needs("httpx")
        headers = {"Accept": EVENT_STREAM, **self._ids(session)}
        reopen = self._cursors.get(session)
        if reopen is not None:
            headers["Last-Event-ID"] = str(reopen)
        timeout = httpx.Timeout(10.0, read=DURABLE_READ_TIMEOUT if self.retention else None)
        try:
            async with self._http.stream("GET", self.url, headers=headers, timeout=timeout) as got:
                if got.status_code != 200:
                    await self._refused_stream(session, got)
                    return False
                self._opened.add(session)
                if reopen is not None:  # the reopen confirmed everything up to it
                    self._confirmed[session] = max(reopen, self._confirmed.get(session, 0))
                await self._read_events(session, got)
                return False
        except httpx.TransportError:
            return True

    async def _refused_stream(self, session: str | None, got: Any) -> None:
        await got.aread()
        if session is not None and got.status_code == 404:
            return  # a session the server does not know (any more): its stream stays shut
        raise _gone(self.url, got)

    async def _read_events(self, session: str | None, got: Any) -> None:
        """Feed the events of one GET to the inbox, a body chunk's worth at a time (one
        cursor update, one inbox put); the cursor is the last event's id."""
        parser = SseParser()
        durable = self.retention is not None
        async for chunk in got.aiter_raw():
            messages = parser.messages(chunk)
            if not messages:
                continue
            if durable and parser.last_id is not None:
                self._cursors[session] = _int(parser.last_id)
                self._ack_wanted.set()
            await self._deliver(messages)

    async def _deliver(self, messages: list[bytes]) -> None:
        for message in messages:
            if not carries_id(message):
                # A notification: nothing to route (the stream's bulk, kept cheap), but a
                # parent's subagent_update names a child whose updates the server sends
                # to the child's own stream, so that stream is opened too.
                child = announced_child(message)
                if child is not None:
                    self._open_child(child)
                continue
            fields = read(message)
            if fields.kind == "request" and fields.id is not None:
                asked = fields.session_id
                if asked is not None:
                    self._asked[fields.id] = asked
            elif fields.kind == "response":
                found = result_session(fields)
                if found is not None:
                    self._open(found)
        messages.append(b"")
        await self._inbox.put(b"\n".join(messages))

    # -- confirming events ------------------------------------------------------------------

    async def _acknowledge(self) -> None:
        """Confirm what the streams took, :data:`ACK_DELAY` after the first unconfirmed
        event; a failed POST is retried with the next round (or made moot by a reopen)."""
        while not self._closing and self.ended_by is None:
            await self._ack_wanted.wait()
            await anyio.sleep(ACK_DELAY)
            self._ack_wanted = anyio.Event()
            for session, cursor in list(self._cursors.items()):
                if cursor > self._confirmed.get(session, 0) and await self._ack(session, cursor):
                    self._confirmed[session] = max(cursor, self._confirmed.get(session, 0))

    async def _ack(self, session: str | None, cursor: int) -> bool:
        """POST ``Acp2-Ack: cursor`` for ``session``'s stream; True when it was taken."""
        headers = {**self._ids(session), ACK_HEADER: str(cursor)}
        try:
            answer = await self._http.post(self.url, headers=headers)
        except needs("httpx").TransportError:
            self._ack_wanted.set()
            return False
        return bool(answer.status_code == 204)

    def _fail(self, reason: BaseException) -> None:
        if self._closing or self.ended_by is not None:
            return
        self.ended_by = reason
        log.info("remote stream ended: %s", reason)
        self._inbox.close()


def _int(value: str | bytes) -> int:
    try:
        return max(0, int(value))
    except ValueError:
        return 0


def _refused(url: str, answer: Any, what: str) -> RemoteRefused:
    text = sanitize_line(answer.text[:200])
    return RemoteRefused(f"{url} refused {what}: {answer.status_code} {text}", answer.status_code)


def _gone(url: str, answer: Any) -> ConnectionClosed:
    status = answer.status_code
    if status in (404, 410):
        return ResumeRefused(f"{url} no longer knows this connection ({status})", status)
    return ConnectionClosed(f"{url} refused the connection: {status}")


@asynccontextmanager
async def open_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    durable: bool = True,
    backoff: Backoff | None = None,
) -> AsyncIterator[HttpTransport]:
    """Yield a Streamable HTTP transport for the endpoint ``url`` (``http(s)://``); the
    connection is made by the first message sent (``initialize``) and ended (``DELETE``)
    on exit. ``headers`` go on every request; ``durable`` asks for a durable connection;
    ``backoff`` paces retries. Raises ``ImportError`` without ``httpx``."""
    httpx = needs("httpx")
    http2 = importlib.util.find_spec("h2") is not None
    async with (
        httpx.AsyncClient(headers=dict(headers or {}), http2=http2, trust_env=False) as client,
        anyio.create_task_group() as tg,
    ):
        transport = HttpTransport(url, client, tg, backoff or Backoff(), durable=durable)
        try:
            yield transport
        finally:
            await transport.aclose()
            tg.cancel_scope.cancel()
