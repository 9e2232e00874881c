"""The seam between a runtime and the peer it talks to: :class:`Link`.

The agent runtime (:func:`acp2.agent.connection.serve_link`), the client runtime
(:class:`acp2.client.core.ClientCore`) and the bridges are written against this
``Protocol``, not against :class:`acp2.rpc.Connection`, so that whatever stands where a
connection would -- the async ``Connection`` over a transport, or an in-process end
such as :class:`acp2.bridge.inprocess.InProcessEnd` -- is checked by mypy to offer what they
use, with no ``cast`` in between (``tests/rpc/test_link_seam.py`` keeps it so).

What a caller may rely on is what :class:`acp2.rpc.Connection` documents for each
member; an in-process end keeps the same meaning (errors, ordering, backpressure,
``ConnectionClosed`` once closing) without framing anything. Only types are imported
here: the module stays free of I/O.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, overload

from msgspec import Raw

if TYPE_CHECKING:
    from acp2.rpc.later import Later
    from acp2.schema.methods import MethodSpec

__all__ = ["Link"]

P = TypeVar("P")
R = TypeVar("R")


class Link(Protocol):
    """What a runtime uses of the peer it serves or drives (see the module)."""

    name: str

    # -- state --------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once the link is closing: sends raise ``ConnectionClosed``."""

    @property
    def close_reason(self) -> str | None:
        """Why we closed it, if we did."""

    @property
    def protocol_errors(self) -> int:
        """How many invalid messages the peer sent."""

    @property
    def last_protocol_error(self) -> str | None:
        """The last of them."""

    @property
    def congested(self) -> bool:
        """True when a producer should ``await drain()`` now (one attribute test)."""

    # -- registration -------------------------------------------------------------------

    @overload
    def on(
        self, spec: MethodSpec[P, None], handler: Callable[[P], Awaitable[None] | None]
    ) -> None: ...
    @overload
    def on(
        self, spec: MethodSpec[P, R], handler: Callable[[P], Awaitable[R | Later[R]]]
    ) -> None: ...
    def on(self, spec: MethodSpec[P, Any], handler: Callable[[P], Any]) -> None:
        """Handle the method ``spec``; replaces any handler for it."""

    def on_request(
        self, method: str, params_type: type[P], handler: Callable[[P], Awaitable[Any]]
    ) -> None:
        """Serve request ``method`` with ``handler``; replaces any handler for it."""

    @overload
    def on_notification(
        self,
        method: str,
        params_type: type[P],
        handler: Callable[[P], Awaitable[None] | None],
        *,
        raw: Literal[False] = False,
    ) -> None: ...
    @overload
    def on_notification(
        self,
        method: str,
        params_type: type[P],
        handler: Callable[[P, bytes], Awaitable[None] | None],
        *,
        raw: Literal[True],
    ) -> None: ...
    def on_notification(
        self,
        method: str,
        params_type: type[P],
        handler: Callable[..., Awaitable[None] | None],
        *,
        raw: bool = False,
    ) -> None:
        """Handle notification ``method`` in arrival order (with ``raw``, as
        ``handler(params, params_bytes)``); replaces any handler for it."""

    def on_unknown_request(self, handler: Callable[[str, Raw | None], Awaitable[Any]]) -> None:
        """Serve every request without a handler (default: ``-32601``)."""

    def on_unknown_notification(
        self, handler: Callable[[str, Raw | None], Awaitable[None] | None]
    ) -> None:
        """Receive every notification without a handler (default: ignored)."""

    # -- outgoing -----------------------------------------------------------------------

    async def call(self, spec: MethodSpec[P, R], params: P, *, waiter: Any = None) -> R:
        """The peer's typed result for request ``spec``; its error as a ``RequestError``."""

    async def request(self, method: str, params: Any, result_type: type[R]) -> R:
        """The peer's result for request ``method``, read as ``result_type``."""

    async def notify(self, method: str | MethodSpec[Any, None], params: Any) -> None:
        """Send a notification, waiting while the peer reads slower than we write."""

    def send_notification_nowait(self, method: str | MethodSpec[Any, None], params: Any) -> None:
        """Send a notification now (no backpressure)."""

    def send_frame_nowait(self, frame: bytes) -> None:
        """Send one notification frame acp2's encoder wrote (no trailing newline)."""

    # -- flow and end -------------------------------------------------------------------

    async def drain(self) -> None:
        """Return once a producer may go on (see ``congested``)."""

    def coalesce_output(self) -> None:
        """Hold output until the ready tasks ran once (a hint; may do nothing)."""

    def add_flush_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` right before each write of our output."""

    def abandon(self, reason: str) -> None:
        """Give up on the peer now; the link closes with ``close_reason`` = ``reason``."""

    async def wait_closed(self) -> None:
        """Return once the link has closed."""

    async def aclose(self) -> None:
        """Close the link (idempotent)."""
