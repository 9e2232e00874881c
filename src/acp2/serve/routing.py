"""Which SSE stream a server-to-client message goes to (the RFD's routing model).

* A response goes where its request was posted: the session stream when the POST had
  ``Acp-Session-Id``, else the connection stream (``session/load``'s answer always goes
  to the connection stream, as the TypeScript SDK's server does).
* A request or notification with ``params.sessionId`` goes to that session's stream.
* A ``$/cancel_request`` the agent sends goes where the request it cancels went (a
  permission question withdrawn from a session stream is withdrawn on that stream).
* Everything else goes to the connection stream.

:class:`Router` keeps the scope of every request the client posted until its response
goes out; it reads each message's envelope with :func:`acp2.rpc.envelope.read` (the rpc
layer's own reader, never a parse of its own).
"""

from __future__ import annotations

from typing import Final

from acp2.compat.v1.methods import SESSION_LOAD
from acp2.rpc.envelope import Envelope, cancelled_request, read
from acp2.rpc.messages import RequestId
from acp2.schema.methods import CANCEL_REQUEST

__all__ = ["MAX_PENDING", "Router"]

#: Requests awaiting their response that a connection remembers routes for.
MAX_PENDING: Final = 65_536
#: The request whose answer goes to the connection stream whatever its POST said.
_LOAD: Final = SESSION_LOAD.name
_CANCEL: Final = CANCEL_REQUEST.name


class Router:
    """Remembers where each posted request's response goes; see the module docstring."""

    def __init__(self) -> None:
        self._routes: dict[RequestId, str | None] = {}
        # The session streams the agent's own requests went to, for a later cancel of
        # one of them (bounded: the oldest are forgotten first).
        self._asked: dict[RequestId, str] = {}

    def posted(self, message: Envelope, session: str | None) -> bool:
        """Note a request posted with ``session`` as its ``Acp-Session-Id`` (or None).

        False when the connection already awaits :data:`MAX_PENDING` responses (the
        caller refuses the POST)."""
        key = message.answer_id
        if key is None:
            return True
        if len(self._routes) >= MAX_PENDING and key not in self._routes:
            return False
        self._routes[key] = None if message.method == _LOAD else session
        return True

    def destination(self, message: bytes) -> str | None:
        """The session whose stream ``message`` goes to; None for the connection stream."""
        parsed = read(message)
        if parsed.method is None:
            key = parsed.id
            return self._routes.pop(key, None) if key is not None else None
        session = parsed.session_id
        if session is not None and parsed.id is not None:
            self._remember(parsed.id, session)  # the agent asks the client (a request)
        elif session is None and parsed.method == _CANCEL:
            cancelled = cancelled_request(parsed)
            return self._asked.pop(cancelled, None) if cancelled is not None else None
        return session

    def _remember(self, request: RequestId, session: str) -> None:
        if len(self._asked) >= MAX_PENDING:
            del self._asked[next(iter(self._asked))]
        self._asked[request] = session
