"""What decoding a message ignored: the object keys a model has no field for.

msgspec decodes a known object by its fields and skips every other key, which is what
"accept what any draft may send" needs, but it says nothing about what it skipped.
:func:`unmodelled_keys` walks a message's JSON against the model it was decoded as and
names each skipped key by its path (``update.usage.reasoningTokens``); ``_meta`` objects
and ``msgspec.Raw`` (unknown variants, kept whole) are never walked, since nothing in
them is skipped. :class:`IgnoredFields` counts those paths for one connection and logs
each the first time at debug level.

The walk costs a second, untyped decode of the message, so the connection runs it only
while debug logging is on for its logger (``acp2 --debug``); otherwise the check is one
cached level lookup per message.
"""

from __future__ import annotations

import logging
from collections import Counter
from functools import cache
from typing import Any, Final

import msgspec
import msgspec.inspect as mi

from acp2.schema.codec import decode_any

__all__ = ["MAX_NAMES", "IgnoredFields", "unmodelled_keys"]

#: Distinct ignored paths remembered (and logged) per connection; later ones are counted
#: under ``"(more)"`` so a peer that invents keys cannot grow memory.
MAX_NAMES: Final = 256
#: Paths reported for one message at most.
_PER_MESSAGE: Final = 32
_MORE: Final = "(more)"


@cache
def _info(tp: Any) -> mi.Type:
    return mi.type_info(tp)


def unmodelled_keys(data: bytes | msgspec.Raw, tp: Any) -> list[str]:
    """The dotted paths of the keys in JSON ``data`` that decoding it as ``tp`` skips
    (list items as ``[]``), at most 32, in document order. Raises ``msgspec.DecodeError``
    when ``data`` is not JSON."""
    found: list[str] = []
    _walk(decode_any(data), _info(tp), "", found)
    return found


def _walk(value: Any, info: Any, path: str, found: list[str]) -> None:
    if len(found) >= _PER_MESSAGE:
        return
    if isinstance(info, mi.Metadata):
        _walk(value, info.type, path, found)
    elif isinstance(info, mi.StructType) and isinstance(value, dict):
        _struct(value, info, path, found)
    elif isinstance(info, mi.UnionType):
        member = _member(value, info)
        if member is not None:
            _walk(value, member, path, found)
    elif isinstance(info, mi.ListType | mi.SetType | mi.FrozenSetType) and isinstance(value, list):
        for item in value:
            _walk(item, info.item_type, f"{path}[]", found)


def _struct(value: dict[str, Any], info: mi.StructType, path: str, found: list[str]) -> None:
    fields = _fields(info)
    for key, item in value.items():
        if key in fields:
            _walk(item, fields[key], f"{path}.{key}" if path else key, found)
        elif key != info.tag_field and len(found) < _PER_MESSAGE:
            found.append(f"{path}.{key}" if path else key)


def _fields(info: mi.StructType) -> dict[str, Any]:
    return {f.encode_name: f.type for f in info.fields}


def _member(value: Any, info: mi.UnionType) -> Any:
    """The union member ``value`` decoded as: a struct by its tag, else the first
    struct (an untagged one) for an object, the list member for a list."""
    for member in info.types:
        inner = member.type if isinstance(member, mi.Metadata) else member
        if isinstance(value, dict) and isinstance(inner, mi.StructType):
            if inner.tag_field is None or value.get(inner.tag_field) == inner.tag:
                return inner
        elif isinstance(value, list) and isinstance(inner, mi.ListType):
            return inner
    return None


class IgnoredFields:
    """The keys one connection's peer sent that acp2 decoded away, counted by
    ``"method path"``; each new path is logged once at debug level on ``logger``."""

    def __init__(self, logger: logging.Logger, name: str) -> None:
        self._logger = logger
        self._name = name
        #: ``"method path"`` -> how many messages carried it (``"(more)"`` past the bound).
        self.counts: Counter[str] = Counter()

    @property
    def enabled(self) -> bool:
        """Whether checks run: debug logging is on for the connection's logger."""
        return self._logger.isEnabledFor(logging.DEBUG)

    def check(self, method: str, data: bytes | msgspec.Raw, tp: Any) -> None:
        """Count and log what decoding ``data`` (a ``method``'s params or result) as
        ``tp`` ignored. Never raises: a message that does not walk is not counted."""
        try:
            paths = unmodelled_keys(data, tp)
        except Exception:  # a diagnostic: it must never fail the message it looks at
            return
        fresh = []
        for path in paths:
            key = f"{method} {path}"
            if key not in self.counts and len(self.counts) >= MAX_NAMES:
                key = _MORE
            elif key not in self.counts:
                fresh.append(path)
            self.counts[key] += 1
        if fresh:
            self._logger.debug(
                "%s: %s: ignored fields acp2 does not model: %s", self._name, method, fresh
            )
