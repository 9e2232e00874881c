"""The :class:`ClientConnection`: one initialized connection to an agent.

It owns the JSON-RPC :class:`~acp2.rpc.Connection`, routes ``session/update`` to its
sessions (buffering updates for session ids not known yet, SS-25), serves
``session/request_permission`` with the permission policy, and turns the agent going
away into :class:`~acp2.errors.ConnectionClosed` for every waiter, with the agent's
stderr tail in the message. Session management lives in :mod:`acp2.client.manage`.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import msgspec
from anyio.abc import TaskGroup

from acp2.client.manage import SessionManagement
from acp2.client.permissions import CANCELLED, PermissionPolicy
from acp2.client.session import ClientSession
from acp2.diagnose import sanitize
from acp2.errors import AgentClosed, ConnectionClosed
from acp2.rpc import Connection
from acp2.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    RequestPermissionRequest,
    SessionUpdate,
    StateUpdate,
)

__all__ = ["AgentClosed", "ClientConnection"]

log = logging.getLogger("acp2.client")
R = TypeVar("R")

#: Early updates kept per unknown session id, and unknown ids kept (SS-25).
MAX_EARLY_UPDATES: Final = 10_000
MAX_EARLY_SESSIONS: Final = 64
#: How much of the agent's stderr an error message quotes.
STDERR_LINES: Final = 20
STDERR_LINE_CHARS: Final = 400


class _RawUpdateNotification(msgspec.Struct, rename="camel"):
    """``session/update`` params with the update kept as its exact bytes."""

    session_id: str
    update: msgspec.Raw


class _UpdateNotification(msgspec.Struct, rename="camel"):
    """``session/update`` params decoded in one pass (the hot path)."""

    session_id: str
    update: SessionUpdate


class ClientConnection(SessionManagement):
    """An initialized connection to an agent; create it with :func:`acp2.client.connect`
    or :func:`acp2.client.connect_transport`.

    Read-only attributes: ``agent_info`` (:class:`~acp2.schema.Implementation`),
    ``agent_capabilities`` (:class:`~acp2.schema.AgentCapabilities`; test markers with
    :func:`acp2.schema.supports`), ``auth_methods``, ``protocol_version``, ``sessions``
    (live :class:`ClientSession` objects by id), ``closed``.
    """

    def __init__(
        self,
        connection: Connection,
        task_group: TaskGroup,
        *,
        permissions: PermissionPolicy,
        default_cwd: str,
        stderr_tail: Callable[[], str] | None = None,
    ) -> None:
        self.connection = connection
        self.permission_policy = permissions
        self.default_cwd = default_cwd
        self.sessions: dict[str, ClientSession] = {}
        self.agent_info = Implementation(name="unknown", version="unknown")
        self.agent_capabilities = AgentCapabilities()
        self.auth_methods: list[Any] = []
        self.protocol_version = 0
        self._tg = task_group
        self._stderr_tail = stderr_tail
        self._early: OrderedDict[str, list[tuple[Any, bytes]]] = OrderedDict()
        self._forgotten: set[str] = set()
        self._failure: AgentClosed | None = None

    # -- set-up ---------------------------------------------------------------------------

    def _install(self) -> None:
        """Register the client's handlers on the connection (before it is entered)."""
        conn = self.connection
        conn.on_notification("session/update", _UpdateNotification, self._on_update, raw=True)
        conn.on_request("session/request_permission", RequestPermissionRequest, self._on_permission)

    def _initialized(self, response: InitializeResponse) -> None:
        self.protocol_version = response.protocol_version
        self.agent_info = response.info
        self.agent_capabilities = response.capabilities
        methods = response.auth_methods
        self.auth_methods = list(methods) if isinstance(methods, list) else []

    async def _watch(self) -> None:
        """Fail every waiter with a clear error once the connection closes."""
        await self.connection.wait_closed()
        self._failure = AgentClosed(self.describe_closed)
        for session in list(self.sessions.values()):
            session._fail(self._failure)

    # -- public helpers ---------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once the connection is closing or closed."""
        return self.connection.closed

    def stderr_tail(self) -> str:
        """The last lines the agent process wrote to stderr ("" if unknown)."""
        return self._stderr_tail() if self._stderr_tail is not None else ""

    def describe_closed(self) -> str:
        """Explain the closed connection, ending with the last lines of the agent's stderr."""
        conn = self.connection
        text = "The agent closed the connection"
        if conn.close_reason:  # we closed it, because of the agent
            text = f"Closed the connection to the agent: {conn.close_reason}"
        if conn.protocol_errors:
            text += f" (it sent {conn.protocol_errors} invalid message(s); the last: "
            text += f"{sanitize(str(conn.last_protocol_error))})"  # may quote the agent
        lines = sanitize(self.stderr_tail(), newlines=True).strip().splitlines()[-STDERR_LINES:]
        tail = "\n".join(line[-STDERR_LINE_CHARS:] for line in lines)
        if tail:
            return f"{text}; its stderr ended with:\n{tail}"
        return f"{text}; it wrote nothing to stderr (run the agent command by itself to see why)."

    async def aclose(self) -> None:
        """Close the connection (idempotent); pending calls raise ``ConnectionClosed``."""
        await self.connection.aclose()

    async def ext_request(self, method: str, params: Any = None) -> Any:
        """Send the extension request ``method`` (must start with ``_``); return the
        result as plain JSON values. Raises the agent's ``RequestError`` on error."""
        if not method.startswith("_"):
            raise ValueError(f"extension methods start with '_': {method!r}")
        raw = await self._request(method, params, msgspec.Raw)
        return msgspec.json.decode(raw)

    async def ext_notify(self, method: str, params: Any = None) -> None:
        """Send the extension notification ``method`` (must start with ``_``)."""
        if not method.startswith("_"):
            raise ValueError(f"extension methods start with '_': {method!r}")
        self._notify_nowait(method, params)

    # -- plumbing used by sessions -----------------------------------------------------------

    async def _request(self, method: str, params: Any, result_type: type[R]) -> R:
        """``connection.request`` with the agent's stderr added to ``ConnectionClosed``."""
        if self._failure is not None:
            raise self._failure
        try:
            return await self.connection.request(method, params, result_type)
        except ConnectionClosed as exc:
            raise AgentClosed(self.describe_closed) from exc

    def _notify_nowait(self, method: str, params: Any) -> None:
        if self._failure is not None:
            raise self._failure
        try:
            self.connection.send_notification_nowait(method, params)
        except ConnectionClosed as exc:
            raise AgentClosed(self.describe_closed) from exc

    def _start_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        self._tg.start_soon(fn, *args)

    def _attach(self, session: ClientSession) -> None:
        """Register ``session`` and feed it the updates that arrived before it (SS-25)."""
        self.sessions[session.id] = session
        self._forgotten.discard(session.id)
        for update, raw in self._early.pop(session.id, ()):
            session._receive(update, raw)

    def _detach(self, session: ClientSession) -> None:
        if self.sessions.get(session.id) is session:
            del self.sessions[session.id]
            self._forgotten.add(session.id)

    # -- handlers ----------------------------------------------------------------------------

    def _on_update(self, note: _UpdateNotification, raw_params: bytes) -> Awaitable[None] | None:
        # A plain function: the reader calls it inline, no coroutine per update. ``note``
        # was decoded strictly in one pass; the exact bytes of the update are only cut out
        # of ``raw_params`` when someone needs them (listeners, early buffering). An idle
        # while a prompt waits for its response is the exception: see _receive_in_order.
        session = self.sessions.get(note.session_id)
        if session is not None and not session._listeners:
            if session._prompting and _is_idle(note.update):
                return session._receive_in_order(note.update, b"")
            session._receive(note.update, b"")
            return None
        raw = _raw_update(raw_params)
        if raw is None:
            return None
        if session is not None:
            if session._prompting and _is_idle(note.update):
                return session._receive_in_order(note.update, raw)
            session._receive(note.update, raw)
        elif note.session_id not in self._forgotten:
            self._buffer(note.session_id, note.update, raw)
        return None

    def _buffer(self, session_id: str, update: Any, raw: bytes) -> None:
        early = self._early.get(session_id)
        if early is None:
            if len(self._early) >= MAX_EARLY_SESSIONS:
                self._early.popitem(last=False)
            early = self._early[session_id] = []
        if len(early) < MAX_EARLY_UPDATES:
            early.append((update, raw))

    async def _on_permission(self, params: RequestPermissionRequest) -> Any:
        session = self.sessions.get(params.session_id)
        if session is None:
            log.warning("permission request for unknown session %s: declined", params.session_id)
            return CANCELLED
        return await session._answer_permission(params)


def _is_idle(update: Any) -> bool:
    return type(update) is StateUpdate and update.state == "idle"


def _raw_update(raw_params: bytes) -> bytes | None:
    """The exact bytes of the ``update`` inside ``session/update`` params (None if absent)."""
    try:
        return bytes(msgspec.json.decode(raw_params, type=_RawUpdateNotification).update)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        log.warning("dropped a malformed session/update: %s", exc)
        return None
