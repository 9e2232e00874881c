"""One guarded decode for JSON a peer sent, wherever it is read outside the rpc reader (sans-IO).

The rpc reader (:func:`acp2.rpc.messages.parse_frame`) already turns every bad line into
an :class:`~acp2.rpc.messages.Invalid`. Other boundaries peek at a peer's bytes before it
does, or instead of it: the server's routing and durable frames, the remote client's
stream, the bridges' envelope readers. msgspec reports their failures three ways -- a
``DecodeError`` (bad JSON or the wrong shape), a ``RecursionError`` (nesting deeper than
it can follow, from about 1,000 levels: 2 KB of brackets) and a ``UnicodeEncodeError``
(a ``str`` holding a lone surrogate) -- and a boundary that caught only the first let the
others escape as a crash. :func:`decode` maps all three to one
:class:`~acp2.errors.InvalidRequest` (``-32600``), which every such boundary catches.
"""

from __future__ import annotations

from typing import TypeVar

import msgspec

from acp2.errors import InvalidRequest
from acp2.rpc.messages import TOO_DEEP

__all__ = ["decode"]

T = TypeVar("T")


def decode(decoder: msgspec.json.Decoder[T], data: bytes | bytearray | memoryview | str) -> T:
    """``decoder.decode(data)``, or :class:`~acp2.errors.InvalidRequest` for anything a peer
    can get wrong: text that is not JSON, JSON of another shape, invalid UTF-8, or nesting
    too deep to follow. Its message is one short line naming the fault, free of the
    peer's text (safe to log and to send back). Other exceptions are not caught."""
    try:
        return decoder.decode(data)
    except RecursionError:
        raise InvalidRequest(f"Invalid request: {TOO_DEEP}") from None
    except msgspec.DecodeError as exc:
        raise InvalidRequest(f"Invalid request: {exc}") from None
    except UnicodeError:
        raise InvalidRequest("Invalid request: a lone surrogate in a string") from None
