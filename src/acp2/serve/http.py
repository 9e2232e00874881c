"""The Streamable HTTP profile: POST a message, GET an SSE stream, DELETE to end.

Status codes follow the RFD's routing table: 400 (a missing or mismatched header, bad
JSON, ``initialize`` on an existing connection), 404 (unknown connection), 406 (GET
without ``Accept: text/event-stream``), 413 (a message over the size limit: the
connection survives), 415 (POST not ``application/json``), 501 (a JSON-RPC batch); plus
421 / 401 / 403 from :mod:`acp2.serve.security`, 409 (a plain stream that already has a
reader), 410 (a durable stream's ``Last-Event-ID`` older than its window) and 503 (too
many connections). ``initialize`` without ``Acp-Connection-Id`` creates the connection
and is answered 200 with the agent's JSON response and the ``Acp-Connection-Id`` header;
every other accepted POST is answered 202 and its response comes on a GET stream. A
bodiless POST with ``Acp2-Ack`` (durable connections) confirms SSE events and is answered
204: a durable stream keeps every event until it is confirmed so (or by a reopen's
``Last-Event-ID``), and the agent waits while the connection holds too much. A
request naming a durable connection whose node died is taken over from its stored
cursor when it can be (:mod:`acp2.serve.takeover_http`), else answered 404 / 410 as before.
"""

from __future__ import annotations

import asyncio

import anyio

from acp2.errors import (
    BodyTooLarge,
    ClientDisconnected,
    ConnectionClosed,
    InvalidRequest,
    RequestError,
    TooManyStreams,
)
from acp2.rpc.envelope import Envelope, read
from acp2.rpc.messages import Invalid, encode_error
from acp2.schema.methods import INITIALIZE
from acp2.serve.asgi import Receive, Scope, Send, read_body, respond
from acp2.serve.config import ServeConfig
from acp2.serve.events import stream_events
from acp2.serve.registry import Registry
from acp2.serve.remote_connection import RemoteConnection
from acp2.serve.security import Headers
from acp2.serve.takeover_http import held_connection
from acp2.transport.durable import ACK_HEADER, DURABLE_HEADER, SEQ_HEADER, SeqGap, header_seq

__all__ = ["CONNECTION_HEADER", "SESSION_HEADER", "handle_http"]

CONNECTION_HEADER = "acp-connection-id"
SESSION_HEADER = "acp-session-id"
_CLOSE = [("connection", "close")]
_BATCH = encode_error(None, InvalidRequest("JSON-RPC batches are not supported"))


async def handle_http(
    scope: Scope, receive: Receive, send: Send, registry: Registry, principal: str
) -> None:
    """Serve one HTTP request on the ACP endpoint (see the module docstring)."""
    headers = Headers.of(scope)
    method = scope["method"]
    if method == "POST":
        await _post(receive, send, headers, registry, principal)
    elif method == "GET":
        await _get(receive, send, headers, registry, principal)
    elif method == "DELETE":
        await _delete(send, headers, registry, principal)
    else:
        await respond(send, 405, "Method Not Allowed", headers=[("allow", "GET, POST, DELETE")])


async def _connection(
    headers: Headers, registry: Registry, principal: str, *, take_over: bool = True
) -> RemoteConnection | tuple[int, str]:
    """The connection the request names (taken over from its stored cursor when its
    node died, with ``take_over``), or the status and text refusing it."""
    connection_id = headers.get(CONNECTION_HEADER)
    if not connection_id:
        return 400, "Missing Acp-Connection-Id"
    connection = await held_connection(registry, connection_id, principal, take_over=take_over)
    if isinstance(connection, tuple):
        return connection
    if connection.principal != principal:
        return 403, "This connection belongs to another principal"
    return connection


async def _delete(send: Send, headers: Headers, registry: Registry, principal: str) -> None:
    found = await _connection(headers, registry, principal, take_over=False)
    if isinstance(found, tuple):
        await respond(send, *found)
        return
    registry.remove(found.id)
    await respond(send, 202)


async def _post(
    receive: Receive, send: Send, headers: Headers, registry: Registry, principal: str
) -> None:
    if headers.get(ACK_HEADER) is not None:
        await _ack(send, headers, registry, principal)
        return
    content_type = (headers.get("content-type") or "").split(";", 1)[0].strip().lower()
    if content_type != "application/json":
        await respond(send, 415, "Unsupported Media Type: send application/json")
        return
    body = await _body(receive, send, registry.config)
    if body is None:
        return
    if body.lstrip()[:1] == b"[":
        await respond(send, 501, _BATCH, content_type="application/json")
        return
    message = read(body)
    if message.kind == "invalid":
        await respond(send, 400, _invalid(message), content_type="application/json")
        return
    if not headers.get(CONNECTION_HEADER):
        await _initialize(send, headers, registry, principal, body, message)
        return
    if message.method == INITIALIZE.name:
        await respond(send, 400, "initialize is not allowed on an existing connection")
        return
    found = await _connection(headers, registry, principal)
    if isinstance(found, tuple):
        await respond(send, *found)
        return
    await _forward(send, headers, found, body, message)


async def _body(receive: Receive, send: Send, config: ServeConfig) -> bytes | None:
    """The POST's body, or None when it was refused (413 too large, 408 too slow) or
    the client left."""
    limit = config.max_message_size
    try:
        with anyio.fail_after(config.body_timeout):
            return await read_body(receive, limit)
    except BodyTooLarge:
        await respond(send, 413, f"Message over the size limit ({limit} bytes)")
    except TimeoutError:
        # A body trickled in slowly holds a socket and a task: cut it.
        await respond(send, 408, "The request body took too long", headers=_CLOSE)
    except ClientDisconnected:
        pass
    return None


def _invalid(message: Envelope) -> bytes:
    """The JSON-RPC error body of a POST whose body is not one JSON-RPC message: the rpc
    reader's own judgement (code, message, and the id it echoes, else ``id: null``)."""
    invalid = message.message
    assert isinstance(invalid, Invalid)
    return encode_error(invalid.reply_id, RequestError(invalid.message, code=invalid.code))


async def _ack(send: Send, headers: Headers, registry: Registry, principal: str) -> None:
    """A durable client confirms the SSE events it took (``Acp2-Ack``): 204, and the
    stream forgets them (a session stream not open yet is left alone)."""
    found = await _connection(headers, registry, principal)
    if isinstance(found, tuple):
        await respond(send, *found)
        return
    raw = headers.get(ACK_HEADER) or ""
    upto = header_seq(raw)
    if not found.durable or found.kind != "http" or upto is None:
        await respond(send, 400, f"Bad {ACK_HEADER}: {raw[:40]!r} (durable SSE streams only)")
        return
    session = headers.get(SESSION_HEADER)
    outlet = found.main if session is None else found.sessions.get(session)
    if outlet is not None:
        outlet.ack(upto)
        if found.recorder is not None:
            found.recorder.ack_on(session, upto)
    found.touch()
    await respond(send, 204)


async def _forward(
    send: Send, headers: Headers, connection: RemoteConnection, body: bytes, message: Envelope
) -> None:
    """Deliver a POST on an existing connection; 202 once delivered (or a duplicate)."""
    session = headers.get(SESSION_HEADER)
    in_params = message.session_id
    if in_params is not None and session is None:
        await respond(send, 400, "Missing Acp-Session-Id")
        return
    if in_params is not None and session != in_params:
        await respond(send, 400, "Mismatched Acp-Session-Id")
        return
    duplicate = _seq_duplicate(headers, connection)
    if isinstance(duplicate, str):
        await respond(send, 400, duplicate)
        return
    if not duplicate:
        if not connection.router.posted(message, session):
            await respond(send, 429, "Too many requests awaiting their responses")
            return
        try:
            await connection.deliver(body)
        except ConnectionClosed:
            await respond(send, 404, "Unknown Acp-Connection-Id")
            return
        if connection.recorder is not None:
            # What is answered 202 the client forgets: a node taking over must know it.
            connection.recorder.cover_received(connection.received.last)
    await respond(send, 202)


def _seq_duplicate(headers: Headers, connection: RemoteConnection) -> bool | str:
    """Durable POSTs: True for a seq already taken (answer 202, deliver nothing), False
    for the next one, or why the header is refused."""
    raw = headers.get(SEQ_HEADER)
    if raw is None or not connection.durable:
        return False
    seq = header_seq(raw)
    if seq is None:
        return f"Bad {SEQ_HEADER}: {raw[:40]!r}"
    try:
        return not connection.received.accept(seq)
    except SeqGap as exc:
        return f"{SEQ_HEADER} out of order: {exc}"


async def _initialize(
    send: Send,
    headers: Headers,
    registry: Registry,
    principal: str,
    body: bytes,
    message: Envelope,
) -> None:
    """Create a connection for an ``initialize`` POST and answer with the agent's 200."""
    if message.method != INITIALIZE.name:
        await respond(send, 400, "Missing Acp-Connection-Id")
        return
    request_id = message.answer_id
    if request_id is None:
        await respond(send, 400, "initialize must be a request with an id")
        return
    config = registry.config
    busy = registry.busy(principal)
    if busy is not None:
        await respond(send, 503, busy, headers=[("retry-after", str(config.retry_after))])
        return
    durable = config.durable and headers.get(DURABLE_HEADER) == "1"
    connection = registry.create(principal, "http", config.retention if durable else None)
    if durable and headers.get(SEQ_HEADER) == "1":
        connection.received.accept(1)  # a client that numbers its initialize POST too
    answer = connection.expect_initial(request_id)
    await connection.deliver(body)
    if connection.recorder is not None:
        connection.recorder.cover_received(connection.received.last)
    try:
        response = await asyncio.wait_for(answer, config.initialize_timeout)
    except (TimeoutError, ConnectionClosed):
        registry.remove(connection.id)
        await respond(send, 504, "The agent did not answer initialize")
        return
    extra = [(CONNECTION_HEADER, connection.id)]
    if durable:
        extra.append((DURABLE_HEADER, config.retention.header()))
    await respond(send, 200, response, content_type="application/json", headers=extra)


async def _get(
    receive: Receive, send: Send, headers: Headers, registry: Registry, principal: str
) -> None:
    if "text/event-stream" not in (headers.get("accept") or "").lower():
        await respond(send, 406, "Not Acceptable: GET needs Accept: text/event-stream")
        return
    found = await _connection(headers, registry, principal)
    if isinstance(found, tuple):
        await respond(send, *found)
        return
    if found.kind != "http":
        await respond(send, 409, "This connection is served over its WebSocket")
        return
    session = headers.get(SESSION_HEADER)
    try:
        outlet = found.stream(session)
    except TooManyStreams as exc:
        await respond(send, 400, f"Too many session streams: {exc}")
        return
    last_event_id = headers.get("last-event-id")
    confirmed = header_seq(last_event_id)
    if found.recorder is not None and confirmed is not None:
        found.recorder.ack_on(session, confirmed)  # a reopen confirms up to it
    await stream_events(receive, send, found, outlet, last_event_id)
