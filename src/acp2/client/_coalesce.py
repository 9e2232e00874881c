"""Runs: consecutive updates of one thing, merged into one entry of a :class:`Work`'s log.

A flood of tiny updates must cost a :class:`~acp2.client.work.Work` what it says, not one
object per update. Three kinds of runs merge consecutive updates:

* :class:`TextRun`: plain text chunks (no ``_meta``, no annotations) of one message, kept
  as UTF-8 bytes in one ``bytearray``;
* :class:`TerminalRun`: output chunks (no ``_meta``) of one terminal, kept as the decoded
  bytes;
* :class:`ToolCallRun`: ``tool_call_update`` patches of one tool call, kept as one merged
  patch (omitted fields keep the earlier value, ``_meta`` key-patches combine), merged only
  until an iterator has taken the patch, and never across a ``status``: every status
  change stays its own update.

An iterator reads a run from an offset (``since(offset)``, then ``size``): only the last
entry of a log grows, so an iterator that caught up with it later gets exactly the new
part -- the very update object when it is one update, else a merged update. Reading the
merged chunks reduces to the same state as the chunks one by one.
"""

from __future__ import annotations

import binascii
from base64 import b64decode, b64encode
from typing import Any, Final

import msgspec
from msgspec import UNSET

from acp2.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    TerminalOutputChunk,
    TextContent,
    ToolCallUpdate,
    UserMessageChunk,
)

__all__ = ["Run", "TerminalRun", "TextRun", "ToolCallRun", "new_run"]

_TEXT_CHUNKS: Final = frozenset({AgentMessageChunk, AgentThoughtChunk, UserMessageChunk})
_PATCH_FIELDS: Final = tuple(
    f for f in ToolCallUpdate.__struct_fields__ if f not in ("tool_call_id", "meta")
)
_NO_MERGE: Final = object()


def _utf8(text: str) -> bytes:
    # A JSON string may hold a lone surrogate; surrogatepass round-trips it exactly.
    try:
        return text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def _plain_chunk(update: Any) -> bool:
    block = update.content
    return (
        update.meta is UNSET
        and type(block) is TextContent
        and block.annotations is UNSET
        and block.meta is UNSET
    )


def _terminal_bytes(update: TerminalOutputChunk) -> bytes | None:
    if update.meta is not UNSET:
        return None
    try:
        return b64decode(update.data, validate=True)
    except (binascii.Error, ValueError):
        return None


class Run:
    """The shared protocol: ``size`` grows as updates merge; ``last`` is the newest one."""

    __slots__ = ("data", "first", "kind", "last")

    def __init__(self, update: Any) -> None:
        #: The update class that may continue the run (checked before :meth:`extend`).
        self.kind = type(update)
        self.first = self.last = update
        #: The merged payload (text as UTF-8, or terminal bytes).
        self.data = bytearray()

    @property
    def size(self) -> int:
        """How far an iterator has read once it took the whole run (0: nothing taken)."""
        return len(self.data) + 1  # the first update counts, even an empty one

    def extend(self, update: Any) -> bool:
        """Merge ``update`` (of :attr:`kind`) if it continues this run; True if it did."""
        raise NotImplementedError

    def since(self, offset: int) -> Any:
        """One update with everything after ``offset`` (an earlier ``size``): the newest
        update itself when that is all, else a merged one."""
        if offset == 0:
            return self.whole()
        start = offset - 1
        if start + self._last_size() == len(self.data):
            return self.last
        return self._merged(start)

    def whole(self) -> Any:
        """The run as one update."""
        return self.first if self.last is self.first else self._merged(0)

    def _last_size(self) -> int:
        raise NotImplementedError

    def _merged(self, offset: int) -> Any:
        raise NotImplementedError


class TextRun(Run):
    """Plain text chunks of one message, as UTF-8 in one ``bytearray``.

    :meth:`Work._push <acp2.client.work.Work._push>` appends to :attr:`data` inline (the
    hot path of a stream); :meth:`extend` is the same step as a method.
    """

    __slots__ = ("message_id",)

    def __init__(self, update: Any) -> None:
        super().__init__(update)
        self.message_id = update.message_id
        self.data = bytearray(_utf8(update.content.text))

    def extend(self, update: Any) -> bool:
        """Append a plain chunk of the same message."""
        if update.message_id != self.message_id or not _plain_chunk(update):
            return False
        self.data += _utf8(update.content.text)
        self.last = update
        return True

    def _last_size(self) -> int:
        return len(_utf8(self.last.content.text))

    def _merged(self, offset: int) -> Any:
        text = self.data[offset:].decode("utf-8", "surrogatepass")
        return self.kind(message_id=self.message_id, content=TextContent(text=text))


class TerminalRun(Run):
    """Output chunks of one terminal."""

    __slots__ = ("terminal_id",)

    def __init__(self, update: TerminalOutputChunk, data: bytes) -> None:
        super().__init__(update)
        self.terminal_id = update.terminal_id
        self.data = bytearray(data)

    def extend(self, update: Any) -> bool:
        """Append a decodable output chunk without ``_meta`` of the same terminal."""
        if update.terminal_id != self.terminal_id:
            return False
        data = _terminal_bytes(update)
        if data is None:
            return False
        self.data += data
        self.last = update
        return True

    def _last_size(self) -> int:
        return len(_terminal_bytes(self.last) or b"")

    def _merged(self, offset: int) -> Any:
        data = b64encode(self.data[offset:]).decode("ascii")
        return TerminalOutputChunk(terminal_id=self.terminal_id, data=data)


class ToolCallRun(Run):
    """Patches of one tool call, merged until an iterator takes the merged patch."""

    __slots__ = ("count", "merged", "taken")

    def __init__(self, update: ToolCallUpdate) -> None:
        super().__init__(update)
        self.merged = update
        self.count = 1
        self.taken = False

    @property
    def size(self) -> int:
        """Patches so far."""
        return self.count

    def extend(self, update: Any) -> bool:
        """Merge a patch of the same call (its set fields win, ``_meta`` key-patches
        combine) while no iterator has taken the merged patch."""
        if self.taken or update.status is not UNSET:
            return False  # a status change is never merged away (PL-13's trail stays visible)
        merged = self.merged
        meta = _merge_meta(merged.meta, update.meta)
        if update.tool_call_id != merged.tool_call_id or meta is _NO_MERGE:
            return False
        changes = {f: getattr(update, f) for f in _PATCH_FIELDS if getattr(update, f) is not UNSET}
        changes["meta"] = meta
        self.merged = msgspec.structs.replace(merged, **changes)
        self.last = update
        self.count += 1
        return True

    def since(self, offset: int) -> Any:
        """The merged patch (an iterator reads a tool-call run once)."""
        self.taken = True
        return self.merged

    def whole(self) -> Any:
        """The merged patch."""
        return self.merged

    def _last_size(self) -> int:  # pragma: no cover - since() is overridden
        return 1

    def _merged(self, offset: int) -> Any:  # pragma: no cover - since() is overridden
        return self.merged


def _merge_meta(first: Any, second: Any) -> Any:
    """One ``_meta`` patch equal to applying ``first`` then ``second`` (or _NO_MERGE)."""
    if second is UNSET:
        return first
    if second is None or first is UNSET:
        return second
    if first is None:
        return _NO_MERGE  # "clear, then set these keys" is not one patch
    return {**first, **second}


def new_run(update: Any) -> Run | None:
    """A run started by ``update``, or None when it does not start one."""
    kind = type(update)
    if kind in _TEXT_CHUNKS:
        return TextRun(update) if _plain_chunk(update) else None
    if kind is ToolCallUpdate:
        return ToolCallRun(update)
    if kind is TerminalOutputChunk:
        data = _terminal_bytes(update)
        return None if data is None else TerminalRun(update, data)
    return None
