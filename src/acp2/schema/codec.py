"""The one JSON codec of acp2: compact UTF-8 encoding and typed decoding.

``encode`` writes compact JSON (no spaces, no raw newlines, NaN/Infinity written as
``null`` by msgspec). ``decode`` takes the fast path -- one cached msgspec decoder per
type, strict on every known variant -- and falls back to :func:`acp2.schema._base.convert`
only when the fast path rejects the input, so unknown variants and lenient fields cost
nothing on the hot path.
"""

from __future__ import annotations

from functools import cache
from typing import Any, TypeVar, overload

import msgspec

from acp2.schema._base import convert

__all__ = ["DecodeError", "decode", "decode_any", "encode", "to_builtins"]

T = TypeVar("T")

#: Raised when bytes are not JSON or do not match the requested type.
DecodeError = msgspec.DecodeError

_encoder = msgspec.json.Encoder()
_any_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder()


def encode(value: Any) -> bytes:
    """Encode a model (or plain JSON value) as compact UTF-8 JSON bytes."""
    return _encoder.encode(value)


@cache
def _decoder(tp: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(tp)


@overload
def decode(data: bytes | bytearray | memoryview | msgspec.Raw, tp: type[T]) -> T: ...
@overload
def decode(data: bytes | bytearray | memoryview | msgspec.Raw, tp: Any) -> Any: ...
def decode(data: bytes | bytearray | memoryview | msgspec.Raw, tp: Any) -> Any:
    """Decode JSON ``data`` into ``tp``.

    Unknown open-union variants come back as ``msgspec.Raw``; lenient fields that do not
    validate come back absent. Raises ``msgspec.DecodeError`` (invalid JSON) or
    ``msgspec.ValidationError`` (a subclass: valid JSON of the wrong shape).
    """
    try:
        return _decoder(tp).decode(data)
    except msgspec.ValidationError:
        return convert(_any_decoder.decode(data), tp)


def decode_any(data: bytes | bytearray | memoryview | msgspec.Raw) -> Any:
    """Decode JSON ``data`` into plain Python values (dict, list, str, int, ...)."""
    return _any_decoder.decode(data)


def to_builtins(value: Any) -> Any:
    """Return ``value`` as plain JSON-compatible Python values (unknown variants included)."""
    return _any_decoder.decode(_encoder.encode(value))
