"""Which SSE stream a server-to-client message goes to (the RFD's routing model).

* A response goes where its request was posted: the session stream when the POST had
  ``Acp-Session-Id``, else the connection stream (``session/load``'s answer always goes
  to the connection stream, as the TypeScript SDK's server does).
* A request or notification with ``params.sessionId`` goes to that session's stream.
* Everything else goes to the connection stream.

:func:`head` reads just the envelope fields routing needs (msgspec skips the rest
without building it); :class:`Router` keeps the scope of every request the client
posted until its response goes out.
"""

from __future__ import annotations

from typing import Final

import msgspec

from acp2.compat.v1.methods import SESSION_LOAD
from acp2.errors import InvalidRequest
from acp2.rpc.guarded import decode

__all__ = ["MAX_PENDING", "Head", "Router", "head", "id_key", "session_of"]

#: Requests awaiting their response that a connection remembers routes for.
MAX_PENDING: Final = 65_536
#: The request whose answer goes to the connection stream whatever its POST said.
_LOAD: Final = SESSION_LOAD.name


class Head(msgspec.Struct):
    """The envelope of one JSON-RPC message; absent fields are empty Raw / None."""

    id: msgspec.Raw = msgspec.Raw(b"")
    method: str | None = None
    params: msgspec.Raw = msgspec.Raw(b"")


class _Scoped(msgspec.Struct):
    session_id: str | None = msgspec.field(default=None, name="sessionId")


_head = msgspec.json.Decoder(Head)
_scoped = msgspec.json.Decoder(_Scoped)
_any = msgspec.json.Decoder()


def head(message: bytes) -> Head:
    """The envelope of ``message``; raises :class:`~acp2.errors.InvalidRequest` for text
    that is not one JSON object with such fields (nested too deeply included)."""
    return decode(_head, message)


def session_of(message: Head) -> str | None:
    """``params.sessionId`` when it is a string, else None."""
    if not len(message.params):
        return None
    try:
        return decode(_scoped, message.params).session_id
    except InvalidRequest:
        return None


def id_key(raw: msgspec.Raw) -> bytes | None:
    """A canonical key for a JSON-RPC id (the same id spelled differently matches); None
    for no id, and for one that cannot be an id (null, a boolean, an array, an object)."""
    if not len(raw):
        return None
    try:
        value = decode(_any, raw)
    except InvalidRequest:
        return None  # an array or object nested too deeply: no id either
    if value is None or isinstance(value, bool | dict | list):
        return None
    return msgspec.json.encode(value)


class Router:
    """Remembers where each posted request's response goes; see the module docstring."""

    def __init__(self) -> None:
        self._routes: dict[bytes, str | None] = {}

    def posted(self, message: Head, session: str | None) -> bool:
        """Note a request posted with ``session`` as its ``Acp-Session-Id`` (or None).

        False when the connection already awaits :data:`MAX_PENDING` responses (the
        caller refuses the POST)."""
        key = id_key(message.id) if message.method is not None else None
        if key is None:
            return True
        if len(self._routes) >= MAX_PENDING and key not in self._routes:
            return False
        self._routes[key] = None if message.method == _LOAD else session
        return True

    def destination(self, message: bytes) -> str | None:
        """The session whose stream ``message`` goes to; None for the connection stream."""
        try:
            parsed = head(message)
        except InvalidRequest:
            return None
        if parsed.method is None:
            key = id_key(parsed.id)
            return self._routes.pop(key, None) if key is not None else None
        return session_of(parsed)
