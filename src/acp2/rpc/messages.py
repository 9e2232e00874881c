"""JSON-RPC 2.0 envelopes: parse one frame into events, encode outgoing frames (sans-IO).

:func:`parse_frame` turns one line into a :class:`Request`, :class:`Notification`,
:class:`Response`, :class:`ErrorResponse`, :class:`Invalid` or :class:`Batch`.
``params`` / ``result`` stay :class:`msgspec.Raw` (undecoded bytes) so the envelope costs
one pass, and each handler decodes its own params type.

Id rules (TR-09, TR-10, D-02): a request id is a JSON string or a 64-bit signed integer;
``1`` and ``"1"`` are different ids. ``null``, booleans, fractions, structured ids and
integers outside the int64 range are refused with ``-32600`` and ``id: null``, as the Nov
schema does (its ids are ``int64``).

A line nested deeper than the decoder can follow (it raises ``RecursionError``) is one
bad message like any other: it becomes an :class:`Invalid` classified from its first and
last bytes (:func:`acp2.rpc.sniff.classify_line`), never an exception.

The encoders build each outgoing frame with a single msgspec encode of a small Struct
that embeds the caller's params / result object: no intermediate dicts.
"""

from __future__ import annotations

import re
from typing import Any, Final, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.errors import RequestError
from acp2.schema.codec import encode
from acp2.schema.methods import CANCEL_REQUEST, SESSION_UPDATE

__all__ = [
    "CANCEL_METHOD",
    "NOTIFICATION_HEAD",
    "SESSION_UPDATE_PREFIX",
    "Batch",
    "ErrorResponse",
    "Invalid",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "encode_batch",
    "encode_error",
    "encode_notification",
    "encode_request",
    "encode_result",
    "is_request_id",
    "notification_prefix",
    "parse_frame",
]

RequestId: TypeAlias = int | str

#: The protocol-level cancellation notification (TR-19).
CANCEL_METHOD: Final = CANCEL_REQUEST.name

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600

#: Integer ids must fit in a signed 64-bit integer (the schema's ``int64``).
INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1

#: Why a frame nested deeper than the decoder can follow is refused.
TOO_DEEP: Final = "JSON nested too deeply"


class Request(msgspec.Struct):
    """A request from the peer: answer it exactly once, echoing ``id``."""

    id: RequestId
    method: str
    params: Raw | None


class Notification(msgspec.Struct):
    """A notification from the peer: never answered (TR-08)."""

    method: str
    params: Raw | None


class Response(msgspec.Struct):
    """A successful response to one of our requests."""

    id: RequestId
    result: Raw


class ErrorResponse(msgspec.Struct):
    """An error response; ``id`` is None when the peer could not read our frame."""

    id: RequestId | None
    code: int
    message: str
    data: Raw | None


class Invalid(msgspec.Struct):
    """A frame that is not a valid JSON-RPC message.

    Answer it with an error ``code`` (``-32700`` / ``-32600``) and ``reply_id`` (None
    means ``id: null``) when ``reply`` is true. ``response_to`` names one of our pending
    requests whose response was malformed: its waiter should fail.
    """

    code: int
    message: str
    reply_id: RequestId | None = None
    reply: bool = True
    response_to: RequestId | None = None


Message: TypeAlias = Request | Notification | Response | ErrorResponse | Invalid


class Batch(msgspec.Struct):
    """A JSON array of messages (TR-14); never empty (``[]`` parses as :class:`Invalid`)."""

    entries: list[Message]


class _Envelope(msgspec.Struct):
    jsonrpc: Any = UNSET
    id: Any = UNSET
    method: Any = UNSET
    params: Raw | UnsetType = UNSET
    result: Raw | UnsetType = UNSET
    error: Raw | UnsetType = UNSET


class _ErrorObject(msgspec.Struct):
    code: int
    message: str = ""
    data: Raw | UnsetType = UNSET


# The envelope is closed (no open unions, no leniency), so it gets plain msgspec decoders
# instead of acp2.schema.codec.decode, whose lenient fallback would re-parse bad frames.
_frame_decoder = msgspec.json.Decoder(_Envelope | list[Raw])
_entry_decoder = msgspec.json.Decoder(_Envelope)
_error_decoder = msgspec.json.Decoder(_ErrorObject)
_NULL: Final = Raw(b"null")
_NOT_AN_OBJECT: Final = "Invalid request: batch entry is not an object"
_BAD_VERSION: Final = 'Invalid message: "jsonrpc" must be "2.0"'


def is_request_id(value: object) -> bool:
    """Return True when ``value`` is a valid request id: a str, or an int (never a bool)
    within the signed 64-bit range."""
    tp = type(value)
    return tp is str or (tp is int and INT64_MIN <= value <= INT64_MAX)  # type: ignore[operator]


def parse_frame(line: bytes) -> Message | Batch:
    """Parse one line into an event; never raises on bad input (it returns :class:`Invalid`)."""
    if not line.isascii():
        try:
            line.decode()
        except UnicodeDecodeError:
            return Invalid(PARSE_ERROR, "Parse error: invalid UTF-8")
    try:
        env = _frame_decoder.decode(line)
    except msgspec.ValidationError:
        return Invalid(INVALID_REQUEST, "Invalid request: not a JSON-RPC object")
    except msgspec.DecodeError as exc:
        return Invalid(PARSE_ERROR, f"Parse error: {_describe(exc, line)}")
    except RecursionError:
        from acp2.rpc.sniff import classify_line  # sniff imports this module

        return classify_line(line, f"Invalid request: {TOO_DEEP}")
    if isinstance(env, list):
        return _parse_batch(env)
    return _classify(env)


_LONE_SURROGATE: Final = re.compile(
    rb"(?<!\\)(?:\\\\)*\\u(d[89ab][0-9a-f]{2})(?!\\u[dD][c-fC-F])", re.IGNORECASE
)


def _describe(exc: msgspec.DecodeError, line: bytes) -> str:
    """The decode error, made clear where msgspec's message misleads."""
    text = str(exc)
    if "truncated" in text:
        lone = _LONE_SURROGATE.search(line)
        if lone is not None:
            return f"invalid JSON: lone surrogate \\u{lone.group(1).decode()} in a string"
    return text


def _parse_batch(items: list[Raw]) -> Message | Batch:
    if not items:
        return Invalid(INVALID_REQUEST, "Invalid request: empty batch")
    entries: list[Message] = []
    for raw in items:
        try:
            entries.append(_classify(_entry_decoder.decode(raw)))
        except (msgspec.DecodeError, RecursionError):
            entries.append(
                Invalid(INVALID_REQUEST, "Invalid request: batch entry is not an object")
            )
    return Batch(entries)


def _classify(env: _Envelope) -> Message:
    if env.method is not UNSET:
        return _classify_call(env)
    return _classify_response(env)


def _classify_call(env: _Envelope) -> Message:
    rid = env.id
    has_id = rid is not UNSET
    reply_id = rid if has_id and is_request_id(rid) else None
    if env.jsonrpc != "2.0" or type(env.jsonrpc) is not str:
        return Invalid(INVALID_REQUEST, _BAD_VERSION, reply_id)
    if type(env.method) is not str:
        return Invalid(INVALID_REQUEST, 'Invalid request: "method" must be a string', reply_id)
    if env.result is not UNSET or env.error is not UNSET:
        return Invalid(
            INVALID_REQUEST, "Invalid request: a call cannot carry result or error", reply_id
        )
    if has_id and reply_id is None:
        return Invalid(INVALID_REQUEST, _bad_id("Invalid request", rid))
    params = None if env.params is UNSET or env.params == _NULL else env.params
    if has_id:
        return Request(rid, env.method, params)
    return Notification(env.method, params)


def _classify_response(env: _Envelope) -> Message:
    rid = env.id
    valid_id = is_request_id(rid)
    ours = rid if valid_id else None
    if env.jsonrpc != "2.0" or type(env.jsonrpc) is not str:
        return Invalid(
            INVALID_REQUEST, 'Invalid response: "jsonrpc" must be "2.0"', None, True, ours
        )
    if (env.result is UNSET) == (env.error is UNSET):
        msg = "Invalid message: need a method, or exactly one of result and error"
        return Invalid(INVALID_REQUEST, msg, None, True, ours)
    if isinstance(env.error, Raw):
        return _error_response(env.error, rid, ours)
    if not valid_id:
        return Invalid(INVALID_REQUEST, _bad_id("Invalid response", rid))
    assert isinstance(env.result, Raw)
    return Response(rid, env.result)


def _bad_id(what: str, rid: Any) -> str:
    if type(rid) is int:
        return f"{what}: integer id outside the signed 64-bit range"
    return f"{what}: id must be a string or an integer"


def _error_response(raw: Raw, rid: Any, ours: RequestId | None) -> Message:
    if ours is None and rid is not None:
        return Invalid(INVALID_REQUEST, "Invalid response: id must be a string, an integer or null")
    try:
        err = _error_decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError) as exc:
        return Invalid(INVALID_REQUEST, f"Invalid error object: {exc}", None, True, ours)
    data = None if err.data is UNSET else err.data
    return ErrorResponse(ours, err.code, err.message, data)


# --- encoding ------------------------------------------------------------------------


class _OutRequest(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    method: str
    params: Any = UNSET


class _OutNotification(msgspec.Struct):
    jsonrpc: str
    method: str
    params: Any = UNSET


class _OutResult(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    result: Any


class _OutErrorObject(msgspec.Struct):
    code: int
    message: str
    data: Any = UNSET


class _OutError(msgspec.Struct):
    jsonrpc: str
    id: RequestId | None
    error: _OutErrorObject


# The envelope prefixes: what the encoders below write before a notification's params.
# Hot paths match incoming lines against them (acp2.rpc.routes) and build outgoing frames
# by concatenation (acp2.agent.emitter); tests/rpc/test_messages.py pins them to the encoder.

#: How every notification frame in the canonical layout starts, up to its method name.
NOTIFICATION_HEAD: Final = b'{"jsonrpc":"2.0","method":"'


def notification_prefix(method: str) -> bytes:
    """Return the bytes :func:`encode_notification` writes before the params of ``method``
    (exact for a method name that needs no JSON escape)."""
    return NOTIFICATION_HEAD + method.encode() + b'","params":'


#: How every ``session/update`` frame starts, up to its params object.
SESSION_UPDATE_PREFIX: Final = notification_prefix(SESSION_UPDATE.name)


def encode_request(rid: RequestId, method: str, params: Any = None) -> bytes:
    """Return the request frame (no newline); ``params=None`` omits ``params``.

    Raises ``TypeError`` / ``msgspec.EncodeError`` when ``params`` is not encodable.
    """
    return encode(_OutRequest("2.0", rid, method, UNSET if params is None else params))


def encode_notification(method: str, params: Any = None) -> bytes:
    """Return the notification frame (no newline); ``params=None`` omits ``params``."""
    return encode(_OutNotification("2.0", method, UNSET if params is None else params))


def encode_result(rid: RequestId, result: Any) -> bytes:
    """Return the success response frame for ``rid`` (``None`` is sent as ``null``)."""
    return encode(_OutResult("2.0", rid, result))


def encode_error(rid: RequestId | None, error: RequestError) -> bytes:
    """Return the error response frame for ``rid`` (None gives ``id: null``)."""
    data = UNSET if error.data is None else error.data
    return encode(_OutError("2.0", rid, _OutErrorObject(error.code, error.message, data)))


def encode_batch(frames: list[bytes]) -> bytes:
    """Join response frames into one batch reply array (only ever a reply, TR-14)."""
    return b"[" + b",".join(frames) + b"]"
