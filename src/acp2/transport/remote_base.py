"""What the remote client transports share: header names, errors, message framing.

The rpc layer writes newline-delimited JSON to a transport; a remote transport sends one
message per WebSocket frame or POST, so :class:`LineSplitter` cuts the written bytes into
whole messages, and :func:`peek` reads the few fields routing needs (method, id, the
``sessionId`` of params or result) without decoding the rest.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import msgspec

from acp2.errors import ConnectionClosed

__all__ = [
    "CONNECTION_HEADER",
    "SESSION_HEADER",
    "LineSplitter",
    "Peek",
    "RemoteRefused",
    "ResumeRefused",
    "needs",
    "peek",
]

CONNECTION_HEADER = "Acp-Connection-Id"
SESSION_HEADER = "Acp-Session-Id"


class RemoteRefused(ConnectionError):
    """The server refused to open a connection (``status``: the HTTP status, or ``0``
    when it could not be reached); ``str()`` says why, with the server's text sanitized."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class ResumeRefused(ConnectionClosed):
    """The server cannot resume a dropped durable link (it does not know the connection
    any more, or no longer holds what was missed): only a new connection and
    ``session/resume`` of the sessions can go on. ``code`` is the WebSocket close code or
    HTTP status that said so."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def needs(module: str) -> ModuleType:
    """Import ``module`` of the ``remote`` extra, or raise an ``ImportError`` that says
    how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"remote connections need the {module!r} package: pip install 'acp2[remote]'"
        ) from exc


class LineSplitter:
    """Cuts a byte stream of newline-terminated JSON messages into whole messages."""

    __slots__ = ("_partial",)

    def __init__(self) -> None:
        self._partial = b""

    def feed(self, data: bytes) -> list[bytes]:
        """The complete, non-blank messages ``data`` ends (without their newline); a
        trailing partial line is kept for the next call."""
        if self._partial:
            data = self._partial + data
        lines = data.split(b"\n")
        self._partial = lines.pop()
        return [line for line in lines if line.strip()]


class _Sid(msgspec.Struct):
    sessionId: Any = None


_sid = msgspec.json.Decoder(_Sid)
_NONE = msgspec.Raw(b"")


class Peek(msgspec.Struct):
    """The routing fields of one JSON-RPC message; params and result stay undecoded."""

    method: Any = None
    id: Any = None
    params: msgspec.Raw = _NONE
    result: msgspec.Raw = _NONE

    @property
    def is_request(self) -> bool:
        """A request (method and id)."""
        return isinstance(self.method, str) and self.id is not None

    @property
    def is_response(self) -> bool:
        """A response (an id and no method)."""
        return self.method is None and self.id is not None

    def session_id(self) -> str | None:
        """The ``sessionId`` of the params, else of the result, when it is a string."""
        for part in (self.params, self.result):
            if len(part):
                try:
                    found = _sid.decode(part).sessionId
                except (msgspec.DecodeError, msgspec.ValidationError):
                    continue
                if isinstance(found, str):
                    return found
        return None


_peek = msgspec.json.Decoder(Peek)


def peek(message: bytes) -> Peek:
    """The routing fields of ``message``; an empty :class:`Peek` when it is not a JSON
    object (the rpc layer of the receiving side judges it)."""
    try:
        return _peek.decode(message)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return Peek()
