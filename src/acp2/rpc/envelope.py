"""The envelope of one JSON-RPC frame, read once (sans-IO).

Every layer that must know what a frame is without handling it -- the server routing a
message to an SSE stream, the durable cursor counting a session's history, the remote
client keeping prompts across a new connection, the agent answering ``initialize``
before its peer exists -- asks :func:`read` and gets an :class:`Envelope`: its kind, its
method, its id, the session id where the method table says the params hold one
(:attr:`acp2.schema.methods.MethodSpec.session_param`) and the frame's bytes for whoever
forwards them. :func:`read` is the rpc reader's own
:func:`~acp2.rpc.messages.parse_frame` (so a frame is judged one way everywhere, never
raising on a peer's bytes), plus one guarded read of the session id when it is asked
for; :func:`of` builds the same value from a message the reader already parsed, without
a second parse.

A method outside the v2 table (a v1 method, an ``_acp2/`` extension) is looked up under
``sessionId``: every table that names one uses that field.

:func:`keys_of` is for the one layer that must route a line before any peer judges it
(the bridge choosing a version from a client's first ``initialize``, then replaying the
line to the connection that serves it): the routing keys only, unjudged, so that line
reaches that connection's own rules unchanged.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.errors import InvalidRequest
from acp2.rpc.guarded import decode
from acp2.rpc.messages import (
    Batch,
    ErrorResponse,
    Invalid,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    parse_frame,
)
from acp2.schema.methods import CANCEL_REQUEST, METHODS

__all__ = [
    "Envelope",
    "Keys",
    "Kind",
    "cancelled_request",
    "carries_id",
    "keys_of",
    "of",
    "read",
    "result_session",
    "session_field",
]

Kind = Literal["request", "notification", "response", "error", "batch", "invalid"]

#: Where a method outside the v2 table keeps its session id (see the module docstring).
_DEFAULT_FIELD: Final = "sessionId"
_FIELDS: Final[dict[str, str | None]] = {n: s.session_param for n, s in METHODS.items()}


class Envelope(msgspec.Struct, frozen=True):
    """One frame's envelope; immutable.

    ``kind`` is what the rpc reader judged it. ``method`` is set for a request or a
    notification. ``id`` is the request's id, the id a response or error answers, or --
    for an invalid frame -- the id its error reply echoes (a call) or the request whose
    answer was malformed (a response); None otherwise. ``raw`` is the frame as received;
    ``message`` the parsed message (:class:`~acp2.rpc.messages.Batch` for a batch), with
    params undecoded. :attr:`session_id` reads the params only when asked.
    """

    kind: Kind
    method: str | None
    id: RequestId | None
    raw: bytes
    message: Message | Batch

    @property
    def session_id(self) -> str | None:
        """The session a call's params name where the method table says they hold one
        (a string only); None for anything else. Each access reads the params again."""
        message = self.message
        if type(message) is Request or type(message) is Notification:
            assert isinstance(message, Request | Notification)
            return _session_of(message)
        return None

    @property
    def is_call(self) -> bool:
        """A request or a notification."""
        return self.method is not None

    @property
    def answer_id(self) -> RequestId | None:
        """The id the answer to this frame will carry: a request's id, or that of an
        invalid call the peer replies to; None when no answer with an id is due."""
        message = self.message
        if type(message) is Request:
            return message.id
        if type(message) is Invalid and message.reply and message.response_to is None:
            return message.reply_id
        return None


class _Session(msgspec.Struct):
    session_id: Any = msgspec.field(default=None, name="sessionId")


_session: Final = msgspec.json.Decoder(_Session)


class _Id(msgspec.Struct):
    id: Any = None


_id: Final = msgspec.json.Decoder(_Id)


class _Cancelled(msgspec.Struct):
    request_id: Any = msgspec.field(default=None, name="requestId")


_cancelled: Final = msgspec.json.Decoder(_Cancelled)


def cancelled_request(envelope: Envelope) -> RequestId | None:
    """The id a ``$/cancel_request`` notification names (an int or a string); None for
    any other frame or a malformed one."""
    message = envelope.message
    if type(message) is not Notification or message.method != CANCEL_REQUEST.name:
        return None
    assert isinstance(message, Notification)
    if message.params is None:
        return None
    try:
        found = decode(_cancelled, message.params).request_id
    except InvalidRequest:
        return None
    return found if type(found) in (int, str) else None


def carries_id(frame: bytes) -> bool:
    """Whether ``frame`` is a JSON object with a non-null ``id`` (a request, a response,
    or an error that names one of ours): a cheaper test than :func:`read` for a reader
    that skips notifications, since it keeps nothing of the rest."""
    try:
        return decode(_id, frame).id is not None
    except InvalidRequest:
        return False


def session_field(method: str) -> str | None:
    """The params field of ``method`` that carries the session id (None: none does)."""
    return _FIELDS.get(method, _DEFAULT_FIELD)


def read(frame: bytes) -> Envelope:
    """The envelope of ``frame`` (one line, without its newline). Never raises on a
    peer's bytes: what is not a JSON-RPC message has kind ``"invalid"``."""
    return of(parse_frame(frame), frame)


def of(message: Message | Batch, raw: bytes) -> Envelope:
    """The envelope of ``message``, parsed from ``raw`` by the rpc reader (no new parse)."""
    tp = type(message)
    if tp is Notification or tp is Request:
        assert isinstance(message, Request | Notification)
        rid = message.id if isinstance(message, Request) else None
        kind: Kind = "request" if tp is Request else "notification"
        return Envelope(kind, message.method, rid, raw, message)
    if tp is Response:
        assert isinstance(message, Response)
        return Envelope("response", None, message.id, raw, message)
    if tp is ErrorResponse:
        assert isinstance(message, ErrorResponse)
        return Envelope("error", None, message.id, raw, message)
    if tp is Batch:
        return Envelope("batch", None, None, raw, message)
    assert isinstance(message, Invalid)
    rid = message.response_to if message.response_to is not None else message.reply_id
    return Envelope("invalid", None, rid, raw, message)


def _session_of(message: Request | Notification) -> str | None:
    params = message.params
    if params is None or session_field(message.method) is None:
        return None
    try:
        found = decode(_session, params).session_id
    except InvalidRequest:
        return None
    return found if type(found) is str else None


def result_session(envelope: Envelope) -> str | None:
    """The ``sessionId`` a response's result names (``session/new``'s answer), when it
    is a string; None for anything else."""
    message = envelope.message
    if type(message) is not Response:
        return None
    assert isinstance(message, Response)
    try:
        found = decode(_session, message.result).session_id
    except InvalidRequest:
        return None
    return found if type(found) is str else None


class Keys(msgspec.Struct, frozen=True):
    """The routing keys of a line no peer has judged yet (:func:`keys_of`): each is
    ``UNSET`` when the line lacks it; ``params`` and ``result`` stay raw bytes. Nothing
    else is checked (not ``jsonrpc``, not the id's type): the connection the line is
    replayed to judges it by JSON-RPC's rules."""

    method: Any = UNSET
    id: Any = UNSET
    params: Raw | UnsetType = UNSET
    result: Raw | UnsetType = UNSET


_keys: Final = msgspec.json.Decoder(Keys)


def keys_of(line: bytes) -> Keys:
    """The :class:`Keys` of ``line`` (one frame, no newline). Raises
    :class:`~acp2.errors.InvalidRequest` (the guarded decode's, its message naming the
    fault) when the line is not a JSON object."""
    return decode(_keys, line)
