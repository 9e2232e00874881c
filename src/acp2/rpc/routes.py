"""Notification routes and the hot-path matcher for canonical notification lines (sans-IO).

A :class:`Route` is one registered notification: its params type, its handler and a
strict msgspec decoder for that type. :class:`Routes` finds the route of a line *without
parsing the envelope* when the line has the canonical layout every compact encoder
(acp2's, the TypeScript SDK's) writes::

    {"jsonrpc":"2.0","method":"<method>","params":<params>}

The params are then decoded straight from the line, once. The match is exact: the line
must start with the route's whole prefix (``jsonrpc``, ``method`` and the ``params`` key)
and end with the closing brace, and the params must decode strictly and be valid UTF-8,
so nothing but ``<params>`` is left for other keys. Anything else is ``None`` here and
goes through the general parser, which gives the same result for every line accepted.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

import msgspec

from acp2.rpc.messages import NOTIFICATION_HEAD, notification_prefix

__all__ = ["HEAD", "Route", "Routes"]

#: How every canonical notification line starts (:data:`acp2.rpc.messages.NOTIFICATION_HEAD`).
HEAD: Final = NOTIFICATION_HEAD
_HEAD_LEN: Final = len(HEAD)
_ANY: Final[msgspec.json.Decoder[Any]] = msgspec.json.Decoder()


class Route:
    """One registered notification (see the module docstring).

    ``raw``: the handler also gets the exact JSON bytes of the params, as a second argument.
    """

    __slots__ = ("decoder", "handler", "method", "params_type", "prefix", "prefix_len", "raw")

    def __init__(
        self,
        method: str,
        params_type: Any,
        handler: Callable[..., Awaitable[None] | None],
        raw: bool,
    ) -> None:
        self.method = method
        self.params_type = params_type
        self.handler = handler
        self.raw = raw
        #: The bytes a canonical line of this method starts with, up to its params; empty
        #: when the method needs JSON escapes or the type has no msgspec decoder (such
        #: lines always take the general path, which reports what is wrong).
        self.prefix = b""
        self.decoder: msgspec.json.Decoder[Any] = _ANY
        encoded = msgspec.json.encode(method)
        plain = method.encode()
        if encoded == b'"' + plain + b'"':
            try:
                self.decoder = msgspec.json.Decoder(params_type)
            except TypeError:
                pass
            else:
                self.prefix = notification_prefix(method)
        self.prefix_len = len(self.prefix)


class Routes:
    """The notification routes of one connection, by method (see the module docstring)."""

    __slots__ = ("_by_method", "_by_name", "hot")

    def __init__(self) -> None:
        self._by_method: dict[str, Route] = {}
        #: Routes that have a prefix, by method name bytes.
        self._by_name: dict[bytes, Route] = {}
        #: The route matched last (always one with a prefix): a busy stream repeats one
        #: method, so callers try it first.
        self.hot: Route | None = None

    def add(self, route: Route) -> None:
        """Register ``route``, replacing any route for its method."""
        self._by_method[route.method] = route
        name = route.method.encode()
        self._by_name.pop(name, None)
        if route.prefix:
            self._by_name[name] = route
        self.hot = None

    def get(self, method: str) -> Route | None:
        """Return the route of ``method``, if registered."""
        return self._by_method.get(method)

    def match(self, line: bytes) -> Route | None:
        """Return the route whose canonical prefix ``line`` starts with (and ends with a
        closing brace), or None. UTF-8 validity is the caller's check."""
        if line[-1] != 125:  # b"}"; the framer never yields an empty line
            return None
        hot = self.hot
        if hot is not None and line.startswith(hot.prefix):
            return hot
        if not line.startswith(HEAD):
            return None
        end = line.find(b'"', _HEAD_LEN)
        route = self._by_name.get(line[_HEAD_LEN:end]) if end > 0 else None
        if route is None or not line.startswith(route.prefix):
            return None
        self.hot = route
        return route
