"""Request bookkeeping per direction (sans-IO), and batch reply assembly.

Each side allocates ids independently, so the same id can be live both ways at once
(TR-10). :class:`PendingRequests` holds *our* requests (ids we allocated: integers,
never reused); :class:`InboundRequests` holds the *peer's* requests we are serving,
keyed by id value and JSON type (``1`` and ``"1"`` are distinct, TR-09).
:class:`BatchReply` collects the answers to one incoming batch (TR-14).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

from acp2.rpc.messages import RequestId, encode_batch

__all__ = ["BatchReply", "InboundRequests", "PendingRequests"]

T = TypeVar("T")


class PendingRequests(Generic[T]):
    """Our requests awaiting a response: ``id -> entry``.

    Ids are consecutive integers starting at ``first_id``; an id is never handed out
    twice, so it cannot be reused while pending.
    """

    __slots__ = ("_entries", "_next")

    def __init__(self, first_id: int = 0) -> None:
        self._next = first_id
        self._entries: dict[int, T] = {}

    def add(self, entry: T) -> int:
        """Store ``entry`` under a fresh id and return that id."""
        rid = self._next
        self._next = rid + 1
        self._entries[rid] = entry
        return rid

    def pop(self, rid: RequestId | None) -> T | None:
        """Remove and return the entry for a response's ``rid``; None when unknown.

        String ids never match: we only allocate integers.
        """
        if type(rid) is not int:
            return None
        return self._entries.pop(rid, None)

    def drain(self) -> list[T]:
        """Remove and return every entry (used when the connection closes)."""
        entries = list(self._entries.values())
        self._entries.clear()
        return entries

    def __contains__(self, rid: object) -> bool:
        return type(rid) is int and rid in self._entries

    def __len__(self) -> int:
        return len(self._entries)


class InboundRequests(Generic[T]):
    """The peer's requests we have not answered yet: ``id -> entry``."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[tuple[type, RequestId], T] = {}

    def add(self, rid: RequestId, entry: T) -> bool:
        """Store ``entry``; return False (storing nothing) if ``rid`` is already live."""
        key = (type(rid), rid)
        if key in self._entries:
            return False
        self._entries[key] = entry
        return True

    def get(self, rid: RequestId) -> T | None:
        """Return the entry for ``rid`` without removing it; None when unknown."""
        return self._entries.get((type(rid), rid))

    def pop(self, rid: RequestId) -> T | None:
        """Remove and return the entry for ``rid``; None when unknown or answered."""
        return self._entries.pop((type(rid), rid), None)

    def values(self) -> Iterator[T]:
        """Iterate over a snapshot of the live entries."""
        return iter(list(self._entries.values()))

    def __len__(self) -> int:
        return len(self._entries)


class BatchReply:
    """Collects the response frames of one incoming batch.

    Call :meth:`expect` once per request entry, :meth:`add` for every frame (request
    answers and ``-32600`` for invalid entries), then :meth:`seal` after the last entry
    was dispatched. :meth:`take` returns the reply array once complete, exactly once;
    a batch of notifications only has no reply (TR-14: never ``[]``).
    """

    __slots__ = ("_frames", "_open", "_sealed", "_sent")

    def __init__(self) -> None:
        self._frames: list[bytes] = []
        self._open = 0
        self._sealed = False
        self._sent = False

    def expect(self) -> None:
        """Count one more request entry whose answer is outstanding."""
        self._open += 1

    def add(self, frame: bytes, *, answers_request: bool) -> None:
        """Add one response frame (``answers_request``: it settles an expected entry)."""
        self._frames.append(frame)
        if answers_request:
            self._open -= 1

    def seal(self) -> None:
        """Mark that every entry of the batch has been dispatched."""
        self._sealed = True

    def take(self) -> bytes | None:
        """Return the reply array when every request is answered; else None."""
        if self._sent or not self._sealed or self._open > 0 or not self._frames:
            return None
        self._sent = True
        return encode_batch(self._frames)
