"""Why an agent failed to start: the errors :func:`acp2.client.connect` raises before
``initialize`` succeeded, and the watch on the agent's stdout that finds a stray line.

::

    Acp2Error
    ├── AgentStartError (also OSError)    the command could not be started
    ├── ConnectionClosed
    │   └── AgentClosed
    │       └── AgentExited               it went away before answering initialize
    └── RemoteProtocolError
        └── AgentStrayOutput (also TimeoutError)  non-JSON on stdout, then no answer

Every message says what to do next (the wording is in :mod:`acp2.diagnose`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import anyio
import msgspec

from acp2.client.checks import PROTOCOL_VERSION
from acp2.client.core import ClientCore
from acp2.compat.v1.negotiate import NegotiationError, result_version
from acp2.diagnose import StrayLineScanner, not_answered, stderr_excerpt, stray_output
from acp2.errors import (
    AgentExited,
    AgentStartError,
    AgentStrayOutput,
    RemoteProtocolError,
    UnsupportedProtocolVersion,
)
from acp2.rpc.connection import Connection
from acp2.schema import ClientCapabilities, Implementation, InitializeRequest, InitializeResponse
from acp2.schema.codec import decode
from acp2.schema.methods import INITIALIZE
from acp2.transport.base import Transport

if TYPE_CHECKING:
    from acp2.compat.v1.schema import InitializeResponse as V1InitializeResponse

__all__ = [
    "STRAY_GRACE",
    "AgentExited",
    "AgentNotStarted",
    "AgentStrayOutput",
    "StdoutWatch",
    "initialize",
]

#: Seconds the agent still has to answer ``initialize`` after a stray stdout line (an
#: agent printing a banner and then speaking ACP still works; a stray print does not
#: cost the whole initialize timeout).
STRAY_GRACE: Final = 3.0


#: The name this error had in acp2 0.1; the class is :class:`acp2.errors.AgentStartError`.
AgentNotStarted = AgentStartError


class StdoutWatch:
    """A transport wrapper that scans what the agent writes until :meth:`stop`.

    It finds the first stdout line that is not JSON (``found``) and calls
    ``on_stray`` then. Sending passes straight through; once stopped, a pumping reader
    drops the wrapper at its next chunk, so the rest of the session costs nothing.
    """

    def __init__(self, transport: Transport) -> None:
        self.inner = transport
        self.watching = True
        self.on_stray: Callable[[], None] | None = None
        self._scanner = StrayLineScanner()
        self.send = transport.send
        self.aclose = transport.aclose
        self.send_nowait: Any = getattr(transport, "send_nowait", None)
        self._inner_pump: Any = getattr(transport, "pump", None)
        self.pump: Any = self._pump if self._inner_pump is not None else None

    @property
    def found(self) -> str | None:
        """The first stray line (quoted), or None."""
        return self._scanner.found

    def stop(self) -> None:
        """Stop scanning (``initialize`` was answered: the rpc layer takes it from here)."""
        self.watching = False

    async def receive(self) -> bytes:
        """The inner transport's next chunk, scanned while watching."""
        chunk = await self.inner.receive()
        if self.watching:
            self._scan(chunk)
        return chunk

    async def _pump(self, consume: Callable[[bytes], bool]) -> bool:
        if not self.watching:
            return bool(await self._inner_pump(consume))

        def watched(chunk: bytes) -> bool:
            if self.watching:
                self._scan(chunk)
            more = consume(chunk)
            # Once stopped, end this pump call: the reader calls pump again, unwrapped.
            return more and self.watching

        return bool(await self._inner_pump(watched))

    def _scan(self, chunk: bytes) -> None:
        if self._scanner.feed(chunk) is not None and self.on_stray is not None:
            self.on_stray()


async def initialize(
    link: ClientCore[Any],
    info: Implementation,
    capabilities: ClientCapabilities | None,
    seconds: float | None,
    watch: StdoutWatch | None,
    files: bool = False,
    terminals: bool = False,
) -> InitializeResponse | V1InitializeResponse:
    """``initialize`` and check the version (IN-01, IN-02, IN-05); return the answer.

    The answer's version is read from its raw bytes first
    (:func:`acp2.compat.v1.negotiate.result_version`: number and shape), then it is
    decoded with the models of that version: a v1 agent's answer is returned as the v1
    model (the caller runs the back bridge for it). Bounded by ``seconds``, or by
    :data:`STRAY_GRACE` after a stray stdout line. On any failure the connection is
    closed before this raises. With ``files`` / ``terminals`` the params also carry v1's
    ``clientInfo`` and ``clientCapabilities`` with ``fs`` / ``terminal: true`` (extra keys
    a v2 agent ignores), so a v1 agent knows it may call ``fs/*`` / ``terminal/*``.
    """
    params = InitializeRequest(
        protocol_version=PROTOCOL_VERSION,
        info=info,
        capabilities=capabilities or ClientCapabilities(),
    )
    try:
        offer = _with_v1_offer(params, files, terminals) if files or terminals else params
        raw = await _answer(link, offer, seconds, watch)
    except UnsupportedProtocolVersion as exc:
        await link.aclose()
        raise UnsupportedProtocolVersion(
            f"The agent supports no protocol version acp2 speaks ({PROTOCOL_VERSION}): "
            f"{exc.message}",
            exc.data,
        ) from exc
    if raw is None:
        await link.aclose()
        raise _no_answer(link, seconds, watch)
    try:
        response = _decoded(raw)
    except Exception:
        await link.aclose()
        raise
    if isinstance(link.connection, Connection):  # an in-process link decodes nothing
        link.connection.check_ignored(INITIALIZE.name, raw, type(response))
    return response


def _decoded(raw: msgspec.Raw) -> InitializeResponse | V1InitializeResponse:
    """The ``initialize`` result decoded with the models of the version it speaks."""
    try:
        version = result_version(raw)
    except NegotiationError as exc:
        raise RemoteProtocolError(f"malformed result for initialize: {exc}") from exc
    model: type[Any] = InitializeResponse
    if version == 1:
        # Imported only for a v1 agent: the v1 models cost ~15 ms to import.
        from acp2.compat.v1.schema import InitializeResponse as V1Response

        model = V1Response
    try:
        response = decode(raw, model)
    except msgspec.ValidationError as exc:
        raise RemoteProtocolError(f"malformed result for initialize: {exc}") from exc
    if version == 2 and response.protocol_version != PROTOCOL_VERSION:
        raise UnsupportedProtocolVersion(
            f"The agent answered protocol version {response.protocol_version}; "
            f"acp2 speaks versions 1 and {PROTOCOL_VERSION}",
            {"requested": PROTOCOL_VERSION, "supported": [response.protocol_version]},
        )
    return response  # type: ignore[no-any-return]


def _with_v1_offer(params: InitializeRequest, files: bool, terminals: bool) -> dict[str, Any]:
    """``params`` plus the v1 keys that offer ``fs/*`` and / or ``terminal/*`` to a v1
    agent."""
    from acp2.compat.v1.handshake import initialize_request_to_v1

    offer = initialize_request_to_v1(
        params, read_files=files, write_files=files, terminals=terminals
    )
    extra = msgspec.to_builtins(offer)
    plain: dict[str, Any] = msgspec.to_builtins(params)
    plain["clientInfo"] = extra["clientInfo"]
    plain["clientCapabilities"] = extra["clientCapabilities"]
    return plain


async def _answer(
    link: ClientCore[Any],
    params: InitializeRequest | dict[str, Any],
    seconds: float | None,
    watch: StdoutWatch | None,
) -> msgspec.Raw | None:
    """The raw ``initialize`` result, or None when the deadline passed first."""
    limit = math.inf if seconds is None else anyio.current_time() + seconds
    with anyio.CancelScope(deadline=limit) as scope:
        if watch is not None:
            watch.on_stray = lambda: _shorten(scope)
            if watch.found is not None:
                _shorten(scope)
        try:
            return await link.request(INITIALIZE.name, params, msgspec.Raw)
        finally:
            if watch is not None:
                watch.stop()
    return None


def _shorten(scope: anyio.CancelScope) -> None:
    scope.deadline = min(scope.deadline, anyio.current_time() + STRAY_GRACE)


def _no_answer(
    link: ClientCore[Any], seconds: float | None, watch: StdoutWatch | None
) -> Exception:
    tail = link.stderr_tail()
    if watch is None or watch.found is None:
        return TimeoutError(not_answered(seconds or 0.0, tail))
    text = stray_output(watch.found, STRAY_GRACE)
    excerpt = stderr_excerpt(tail)
    if excerpt:
        text += f"; its stderr ended with:\n{excerpt}"
    return AgentStrayOutput(text, watch.found)
