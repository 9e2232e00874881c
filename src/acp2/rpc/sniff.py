"""Classify a frame that cannot be parsed from its first and last bytes (sans-IO).

An oversized line is never held in memory whole (see :mod:`acp2.rpc.framing`), and a line
nested deeper than the decoder can follow cannot be decoded at all. To reject such a frame
*alone* -- answering a request with ``-32600`` and its own id, failing our waiter when it
was a response, staying silent for a notification -- the top-level keys are read from its
head (a small tokenizer that tracks nesting) and from its tail (serializers that put
``id`` last, after a huge ``params``).
"""

from __future__ import annotations

import re
from typing import Final

from acp2.rpc.framing import HEAD_SIZE, TAIL_SIZE, Oversized
from acp2.rpc.messages import INVALID_REQUEST, Invalid, RequestId, is_request_id
from acp2.schema.codec import DecodeError, decode_any

__all__ = ["classify_line", "classify_oversized"]

_TOKEN: Final = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')
_TAIL_KEY: Final = re.compile(
    rb'(?<![\\])"(id|method)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)'
    rb'((?:\s*,\s*"[A-Za-z_]+"\s*:\s*(?:"(?:[^"\\]|\\.)*"|-?\d+))*)\s*}\s*$'
)
_FOLLOWING_KEY: Final = re.compile(rb'"(id|method)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')
_ID_KEY: Final = b"id"
_CALL_KEYS: Final = frozenset({b"method"})
_RESPONSE_KEYS: Final = frozenset({b"result", b"error"})


def classify_oversized(event: Oversized, limit: int) -> Invalid:
    """Return how to reject an oversized frame.

    A request gets ``-32600`` with its id; a response names our request in
    ``response_to``; a frame that looks like a notification gets no reply; anything
    else gets ``-32600`` with ``id: null``.
    """
    message = f"Invalid request: message of {event.size} bytes exceeds the {limit}-byte limit"
    return _classify(event.head, event.tail, message)


def classify_line(line: bytes, message: str) -> Invalid:
    """Return how to reject a complete ``line`` that could not be parsed or handled.

    Same rules as :func:`classify_oversized`, with ``message`` as the error message; only
    the line's first and last bytes are read, so it costs the same for any size or depth.
    """
    return _classify(line[:HEAD_SIZE], line[-TAIL_SIZE:], message)


def _classify(head: bytes, tail: bytes, message: str) -> Invalid:
    keys = _head_keys(head)
    keys.update(_tail_keys(tail))
    rid = _decode_id(keys.get(_ID_KEY))
    if _RESPONSE_KEYS & keys.keys():
        return Invalid(INVALID_REQUEST, message, None, True, rid)
    if _CALL_KEYS & keys.keys():
        if rid is None and _ID_KEY not in keys:
            return Invalid(INVALID_REQUEST, message, reply=False)
        return Invalid(INVALID_REQUEST, message, rid)
    return Invalid(INVALID_REQUEST, message, rid)


def _head_keys(head: bytes) -> dict[bytes, bytes]:
    """Top-level ``key -> raw scalar value`` pairs (b"" for structured values)."""
    keys: dict[bytes, bytes] = {}
    depth = 0
    tokens = [m.group() for m in _TOKEN.finditer(head)]
    for i, tok in enumerate(tokens):
        if tok in (b"{", b"["):
            depth += 1
        elif tok in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and _is_key(tokens, i):
            value = tokens[i + 2]
            keys[tok[1:-1]] = b"" if value in (b"{", b"[") else value
    return keys


def _is_key(tokens: list[bytes], i: int) -> bool:
    return (
        tokens[i][:1] == b'"'
        and i + 2 < len(tokens)
        and tokens[i + 1] == b":"
        and tokens[i - 1] in (b"{", b",")
    )


def _tail_keys(tail: bytes) -> dict[bytes, bytes]:
    match = _TAIL_KEY.search(tail)
    if match is None:
        return {}
    keys = {match.group(1): match.group(2)}
    for follow in _FOLLOWING_KEY.finditer(match.group(3)):
        keys[follow.group(1)] = follow.group(2)
    return keys


def _decode_id(token: bytes | None) -> RequestId | None:
    if not token:
        return None
    try:
        value = decode_any(token)
    except DecodeError:
        return None
    return value if is_request_id(value) else None
