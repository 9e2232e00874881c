"""One SSE response: a connection's or a session's stream, written as its outlet fills.

A plain stream has one reader at a time (a second GET is answered 409, as the TypeScript
SDK's server does). A durable stream numbers its events (``id: <seq>``); a GET that
reopens it with ``Last-Event-ID`` takes over from any earlier reader (which may be a
half-open socket nobody reads) and first gets everything after that seq, or 410 when the
window no longer holds it (or never sent it). A comment line ``: keepalive`` goes out
every ``keepalive`` seconds of silence so intermediaries keep the stream open.
"""

from __future__ import annotations

import anyio

from acp2.serve.asgi import Receive, Send, respond
from acp2.serve.outlet import Outlet
from acp2.serve.remote_connection import RemoteConnection
from acp2.transport.durable import CursorTooOld, header_seq

__all__ = ["stream_events"]

_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]
_KEEPALIVE = b": keepalive\n\n"
_NUMBERED = b"id: %d\ndata: %s\n\n"
_PLAIN = b"data: %s\n\n"


async def stream_events(
    receive: Receive,
    send: Send,
    connection: RemoteConnection,
    outlet: Outlet,
    last_event_id: str | None,
) -> None:
    """Answer a GET with ``outlet``'s events until the client leaves, a newer reader
    takes over, or the connection ends."""
    if outlet.durable and last_event_id is not None:
        problem = _resume(outlet, last_event_id)
        if problem is not None:
            await respond(send, *problem)
            return
    elif outlet.reading and not outlet.durable:
        await respond(send, 409, "This stream already has a reader")
        return
    generation = outlet.attach()
    connection.open_streams += 1
    try:
        await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
        async with anyio.create_task_group() as tg:
            tg.start_soon(_watch_disconnect, receive, tg.cancel_scope)
            await _write(send, connection, outlet, generation)
            tg.cancel_scope.cancel()
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except* OSError:
        pass  # the client went away mid-write; a durable stream resends on reopen
    finally:
        connection.open_streams -= 1
        connection.touch()
        outlet.detach(generation)


def _resume(outlet: Outlet, last_event_id: str) -> tuple[int, str] | None:
    seq = header_seq(last_event_id)
    if seq is None:
        return 400, f"Bad Last-Event-ID: {last_event_id[:40]!r}"
    if outlet.retained is not None and seq > outlet.retained.last:
        # Never sent here: a stream taken over whose history is shorter than what its
        # client saw. 410, as a WebSocket's 4410: the client falls back.
        return 410, f"Last-Event-ID {seq} was never sent"
    try:
        outlet.resume(seq)
    except CursorTooOld as exc:
        return 410, f"Last-Event-ID too old: {exc}"
    return None


async def _write(send: Send, connection: RemoteConnection, outlet: Outlet, generation: int) -> None:
    keepalive = connection.config.keepalive
    while outlet.generation == generation:
        items = outlet.take()
        if items:
            if connection.recorder is not None:
                connection.recorder.cover()  # the database describes what goes out
            body = _events(items)
            await send({"type": "http.response.body", "body": body, "more_body": True})
            continue
        if connection.closed:
            if connection.end_reason:  # the agent side gave up on this client: say why
                comment = b": closed: %s\n\n" % connection.end_reason.encode()
                await send({"type": "http.response.body", "body": comment, "more_body": True})
            return
        if not await outlet.wait(keepalive):
            await send({"type": "http.response.body", "body": _KEEPALIVE, "more_body": True})


def _events(items: list[tuple[int, bytes]]) -> bytes:
    """The SSE events of ``items`` from one outlet: all numbered (durable) or none."""
    if items[0][0]:
        return b"".join(map(_NUMBERED.__mod__, items))
    return b"".join(map(_PLAIN.__mod__, [message for _, message in items]))


async def _watch_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()
