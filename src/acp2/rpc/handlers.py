"""Handlers registered from a method table, checked once at start-up (sans-IO).

A runtime does not call ``connection.on(...)`` for each method it serves. It hands
:func:`register` a mapping from table entries to handlers, and the methods it leaves
unhandled on purpose; :func:`register` walks the table (v2's, acp2's extensions or v1's)
filtered by direction -- an agent serves what the client sends, a client what the agent
sends, both ``"either"`` methods -- and refuses to start, with
:class:`~acp2.errors.MissingHandler`, when

* a method of that direction is neither handled nor listed as unhandled (a method added
  to the table must be decided on by every runtime);
* a handler is given for a method that is not in the table, or that the other side does
  not send;
* a method the runtime advertises (a capability's methods, :mod:`acp2.schema.capability_methods`)
  is listed as unhandled.

An unhandled method is answered ``-32601`` by the connection (a notification is ignored),
as for any method with no handler. ``$/cancel_request`` is the connection's own
(:data:`CORE`): it is never a runtime's to handle. The check runs once per registration;
dispatching a message afterwards costs what it did before (one dict lookup).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, overload

from acp2.errors import MissingHandler
from acp2.schema.methods import CANCEL_REQUEST, MethodSpec

__all__ = ["CORE", "Decoded", "Receiver", "Registrar", "expected", "register"]

#: The side that serves: the agent serves the methods the client sends, and vice versa.
Receiver = Literal["agent", "client"]

#: Methods the connection itself serves (the method name of every table agrees).
CORE: Final = frozenset({CANCEL_REQUEST.name})


@dataclass(frozen=True, slots=True)
class Decoded:
    """A notification handler that wants its params decoded as ``params_type`` (a faster
    or narrower type than the table's), and with ``raw`` also the params' exact bytes:
    ``handler(params, raw_params)``."""

    params_type: Any
    handler: Callable[..., Awaitable[None] | None]
    raw: bool = False


class Registrar(Protocol):
    """What :func:`register` installs handlers on: an :class:`acp2.rpc.Connection` or an
    in-process end with the same registration methods."""

    def on(self, spec: MethodSpec[Any, Any], handler: Callable[[Any], Any]) -> None:
        """Serve ``spec`` with ``handler``."""

    @overload
    def on_notification(
        self,
        method: str,
        params_type: Any,
        handler: Callable[..., Any],
        *,
        raw: Literal[False] = ...,
    ) -> None: ...
    @overload
    def on_notification(
        self, method: str, params_type: Any, handler: Callable[..., Any], *, raw: Literal[True]
    ) -> None: ...
    def on_notification(
        self, method: str, params_type: Any, handler: Callable[..., Any], *, raw: bool = False
    ) -> None:
        """Handle notification ``method``, decoded as ``params_type``."""


Handler = Callable[[Any], Any] | Decoded


def expected(table: Mapping[str, MethodSpec[Any, Any]], receiver: Receiver) -> frozenset[str]:
    """The names of ``table``'s methods that ``receiver`` must decide on: those the other
    side (or either side) sends, but for :data:`CORE`."""
    return frozenset(
        name for name, spec in table.items() if spec.sender != receiver and name not in CORE
    )


def register(
    conn: Registrar,
    table: Mapping[str, MethodSpec[Any, Any]],
    receiver: Receiver,
    handlers: Mapping[MethodSpec[Any, Any], Handler],
    *,
    unhandled: Iterable[MethodSpec[Any, Any]] = (),
    advertised: Collection[MethodSpec[Any, Any]] = (),
) -> None:
    """Check ``handlers`` against ``table`` (see the module), then install each on
    ``conn``. Raises :class:`~acp2.errors.MissingHandler` naming every offending method
    before installing anything."""
    skipped = {spec.name for spec in unhandled}
    problems = _problems(table, receiver, handlers, skipped, advertised)
    if problems:
        raise MissingHandler(f"{receiver} handlers do not match the method table: " + problems)
    for spec, handler in handlers.items():
        if isinstance(handler, Decoded) and handler.raw:
            conn.on_notification(spec.name, handler.params_type, handler.handler, raw=True)
        elif isinstance(handler, Decoded):
            conn.on_notification(spec.name, handler.params_type, handler.handler)
        else:
            conn.on(spec, handler)


def _problems(
    table: Mapping[str, MethodSpec[Any, Any]],
    receiver: Receiver,
    handlers: Mapping[MethodSpec[Any, Any], Handler],
    skipped: set[str],
    advertised: Collection[MethodSpec[Any, Any]],
) -> str:
    """What is wrong, one clause per kind of fault ('' when nothing is)."""
    due = expected(table, receiver)
    given = {spec.name for spec in handlers}
    faults = {
        "not in the table or not sent to the " + receiver: sorted(
            spec.name
            for spec in handlers
            if table.get(spec.name) is not spec or spec.name not in due
        ),
        "neither handled nor listed as unhandled": sorted(due - given - skipped),
        "both handled and listed as unhandled": sorted(given & skipped),
        "advertised but unhandled": sorted(
            spec.name for spec in advertised if spec.name not in given
        ),
    }
    return "; ".join(f"{what}: {', '.join(names)}" for what, names in faults.items() if names)
