"""What the sans-IO :class:`~acp2.rpc.peer.Peer` reports about incoming messages.

Each event is a small frozen-by-convention struct; the async shell
(:class:`acp2.rpc.Connection`) handles them in the order the peer returns them, which is
the order the messages arrived in. Everything the protocol decides (ids, exactly-once
answers, cancellation, late responses, error replies) was decided by the peer already;
an event says only what is left to *do*: call a handler, start a request, wake a waiter,
write a frame.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeAlias

import msgspec
from msgspec import Raw

from acp2.rpc.messages import RequestId
from acp2.rpc.pending import BatchReply
from acp2.rpc.routes import Route

__all__ = [
    "CancelRequested",
    "Event",
    "Incoming",
    "InvalidMessage",
    "Notified",
    "Reply",
    "RequestReceived",
    "ResponseReceived",
    "Tap",
    "UnknownNotification",
]

#: ``tap(direction, frame)``: sees every frame (without its newline) as it is sent or read.
Tap = Callable[[Literal["in", "out"], bytes], None]


class Incoming:
    """One request of the remote side that is not answered yet.

    Only the peer's ``send_response`` / ``send_error`` answer it, once. ``scope`` is the
    shell's to use (the request's cancel scope, or the :class:`~acp2.rpc.later.Later` its
    handler returned); the peer never reads it.
    """

    __slots__ = ("batch", "id", "scope")

    def __init__(self, rid: RequestId, batch: BatchReply | None) -> None:
        self.id = rid
        self.batch = batch
        self.scope: Any = None

    def __repr__(self) -> str:
        return f"Incoming(id={self.id!r})"


# gc=False: events are short-lived leaves (nothing refers back to them), so they need not
# be tracked by the cycle collector; one is made per message on the hot path.


class Notified(msgspec.Struct, gc=False):
    """A notification for a registered route, params decoded: call ``route.handler``
    (with ``body``, the exact params bytes, as a second argument when ``route.raw``)."""

    route: Route
    params: Any
    body: bytes


class UnknownNotification(msgspec.Struct, gc=False):
    """A notification of a method without a route; ``params`` undecoded."""

    method: str
    params: Raw | None


class RequestReceived(msgspec.Struct, gc=False):
    """A request to serve: run ``handler(params)`` and answer ``request`` with the peer."""

    request: Incoming
    handler: Callable[[Any], Any]
    params: Any


class CancelRequested(msgspec.Struct, gc=False):
    """The remote side cancelled ``request`` (``$/cancel_request``), still unanswered."""

    request: Incoming


class ResponseReceived(msgspec.Struct, gc=False):
    """The answer to one of our requests: ``entry`` is what was given to
    ``send_request``; exactly one of ``result`` and ``error`` is set."""

    entry: Any
    result: Raw | None
    error: Exception | None


class InvalidMessage(msgspec.Struct, gc=False):
    """The remote side sent an invalid message (counted and logged by the peer);
    ``reply`` is the error response to write, if one is due."""

    message: str
    reply: bytes | None


class Reply(msgspec.Struct, gc=False):
    """A frame the peer answered with by itself (e.g. ``-32601``, a batch reply): write it."""

    frame: bytes


Event: TypeAlias = (
    Notified
    | UnknownNotification
    | RequestReceived
    | CancelRequested
    | ResponseReceived
    | InvalidMessage
    | Reply
)
