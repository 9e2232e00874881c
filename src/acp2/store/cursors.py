"""Stream cursors: what a node must know to resume another node's durable stream.

A durable WebSocket stream of ``acp2 serve`` numbers every message it sends (the *seq*,
:mod:`acp2.transport.durable`). When the node serving it dies, the client's resume reaches
another node, which holds nothing of the stream in memory. A :class:`StreamCursor` is the
part of the stream worth storing so that node can rebuild exactly what the client missed
from the session history instead of refusing:

* who owns it (``principal``), the client's ``initialize`` (to start the agent side as if
  it had been answered) and the last client seq the server took (``received``);
* for every session the stream carries, how many of its history updates the client got
  up to seq ``base`` (``counts``), and for each seq after it, up to ``sent``, what it was
  (``marks``): a run of that session's history updates, in history order, or another
  message (kept as bytes when small; a state snapshot, a response);
* what makes a rebuild impossible: requests either way still unanswered (``pending``),
  sessions this stream joined midway (``lost``: resumed or attached here, so the count of
  their history before the stream is unknown).

A durable Streamable HTTP connection has several streams, each numbered on its own: the
connection's SSE stream is described by the fields above (``kind`` is ``"http"``), each
session's SSE stream by a :class:`Track` in ``streams`` (its own ``base``, ``sent`` and
``marks``). ``counts`` stays one map: a session's history updates go to its own stream
only, so its count belongs to that stream's ``base``. A WebSocket row has no ``streams``
and reads as before.

A stream writes its cursor before it sends any seq that the stored one does not describe;
a run that goes on needs no write (the stored run is open-ended: every seq after
``sent`` up to the client's last continues it). So a long stream of one session's
updates costs no write at all, and the rows stay small (marks before the client's
acknowledgement are folded into ``counts``).

:class:`CursorStore` is the seam; :class:`SqliteCursors` (a table beside the SQLite
history), :class:`MemoryCursors` (a store in memory: nothing to resume after a death) and
:class:`acp2.store.pg_cursors.PgCursors` implement it. :func:`open_cursors` picks the one
that fits a session store. A row is deleted with its stream, and rows older than the
resume grace are pruned.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any, Protocol

import msgspec

from acp2.errors import InvalidRequest
from acp2.rpc.guarded import decode
from acp2.store.sql import SQLITE, statements

__all__ = [
    "NOT_KEPT",
    "CursorStore",
    "MemoryCursors",
    "Other",
    "Run",
    "SqliteCursors",
    "StreamCursor",
    "Track",
    "decode_cursor",
    "encode_cursor",
    "open_cursors",
]


class Run(msgspec.Struct, tag="r", array_like=True):
    """Seqs ``first..last``: consecutive history updates of ``session`` (open-ended when
    it is the stored cursor's last mark)."""

    session: str
    first: int
    last: int


#: The ``message`` of an :class:`Other` that was too big to keep (msgspec cannot put
#: Raw in a union; no JSON-RPC message is ``null``).
NOT_KEPT = msgspec.Raw(b"null")


class Other(msgspec.Struct, tag="o", array_like=True):
    """Seq ``seq``: a message that is not a history update; ``message`` is its bytes, or
    :data:`NOT_KEPT` when it was too big to keep (a rebuild that needs it is impossible)."""

    seq: int
    message: msgspec.Raw = NOT_KEPT

    @property
    def kept(self) -> bool:
        """True when :attr:`message` holds the message."""
        return bytes(self.message) != b"null"


class Track(msgspec.Struct, kw_only=True):
    """One more stream of a connection (a Streamable HTTP session stream): its own seqs,
    the client's acknowledged ``base``, the last seq ``sent`` and the ``marks`` after
    ``base``, as :class:`StreamCursor` has them for the connection's stream."""

    base: int = 0
    sent: int = 0
    marks: list[Run | Other] = msgspec.field(default_factory=list)


class StreamCursor(msgspec.Struct, kw_only=True):
    """The stored state of one durable stream (see the module docstring)."""

    id: str
    principal: str
    initialize: msgspec.Raw
    received: int = 0
    base: int = 0
    sent: int = 0
    counts: dict[str, int] = msgspec.field(default_factory=dict)
    marks: list[Run | Other] = msgspec.field(default_factory=list)
    lost: list[str] = msgspec.field(default_factory=list)
    closed: list[str] = msgspec.field(default_factory=list)
    pending: int = 0
    #: ``"websocket"`` (one stream: the fields above) or ``"http"`` (the fields above
    #: describe the connection's SSE stream, :attr:`streams` each session's).
    kind: str = "websocket"
    streams: dict[str, Track] = msgspec.field(default_factory=dict)


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(StreamCursor)


def encode_cursor(cursor: StreamCursor) -> bytes:
    """The cursor as stored (compact JSON)."""
    return _encoder.encode(cursor)


def decode_cursor(data: bytes) -> StreamCursor | None:
    """The cursor stored as ``data``, or None when it does not decode (a row written by
    another version is ignored rather than trusted)."""
    try:
        return decode(_decoder, data)
    except InvalidRequest:
        return None


class CursorStore(Protocol):
    """Where stream cursors are kept; every node of a deployment shares one."""

    def save(self, cursor: StreamCursor) -> None:
        """Store ``cursor`` (replacing the stream's previous one) and stamp it now."""

    def load(self, stream_id: str, max_age: float) -> StreamCursor | None:
        """The stream's cursor, or None when there is none or it is older than
        ``max_age`` seconds (too old to resume)."""

    def delete(self, stream_id: str) -> None:
        """Forget the stream's cursor (unknown ids are ignored)."""

    def prune(self, max_age: float) -> int:
        """Delete every cursor older than ``max_age`` seconds; return how many."""

    def close(self) -> None:
        """Release the store's database connection."""


class MemoryCursors:
    """Cursors in this process's memory: for stores that no other process can read."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple[float, bytes]] = {}

    def save(self, cursor: StreamCursor) -> None:
        """Keep ``cursor`` (encoded, as a database would)."""
        self._rows[cursor.id] = (time.time(), encode_cursor(cursor))

    def load(self, stream_id: str, max_age: float) -> StreamCursor | None:
        """The cursor kept for ``stream_id`` unless older than ``max_age`` seconds."""
        row = self._rows.get(stream_id)
        if row is None or time.time() - row[0] > max_age:
            return None
        return decode_cursor(row[1])

    def delete(self, stream_id: str) -> None:
        """Forget the stream's cursor."""
        self._rows.pop(stream_id, None)

    def prune(self, max_age: float) -> int:
        """Forget the cursors older than ``max_age`` seconds."""
        horizon = time.time() - max_age
        old = [k for k, (stamp, _) in self._rows.items() if stamp < horizon]
        for key in old:
            del self._rows[key]
        return len(old)

    def close(self) -> None:
        """Nothing to release."""


#: The statements shared with PostgreSQL (:mod:`acp2.store.sql`).
_SQL = statements(SQLITE)

_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS stream_cursors (
    id TEXT PRIMARY KEY,
    updated REAL NOT NULL,
    body BLOB NOT NULL
)
"""


class SqliteCursors:
    """Cursors in a table of the SQLite history file, through a connection of their own
    (a stream's write never waits behind a history transaction of the same process)."""

    def __init__(self, path: str | Path) -> None:
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA busy_timeout=1000")
        self._db.execute(_SQLITE_SCHEMA)

    def save(self, cursor: StreamCursor) -> None:
        """Upsert the stream's row, stamped with this machine's clock."""
        self._db.execute(
            "INSERT INTO stream_cursors (id, updated, body) VALUES (?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET updated = excluded.updated, body = excluded.body",
            (cursor.id, time.time(), encode_cursor(cursor)),
        )

    def load(self, stream_id: str, max_age: float) -> StreamCursor | None:
        """The stream's row unless older than ``max_age`` seconds."""
        row = self._db.execute(
            "SELECT body FROM stream_cursors WHERE id = ? AND updated >= ?",
            (stream_id, time.time() - max_age),
        ).fetchone()
        return decode_cursor(bytes(row[0])) if row else None

    def delete(self, stream_id: str) -> None:
        """Delete the stream's row."""
        self._db.execute(_SQL.delete_cursor, (stream_id,))

    def prune(self, max_age: float) -> int:
        """Delete the rows older than ``max_age`` seconds."""
        cursor = self._db.execute(
            "DELETE FROM stream_cursors WHERE updated < ?", (time.time() - max_age,)
        )
        return int(cursor.rowcount)

    def close(self) -> None:
        """Close the connection."""
        self._db.close()


def open_cursors(store: Any) -> CursorStore:
    """The cursor store beside session store ``store``: the same PostgreSQL database
    (``store.url``), the same SQLite file (``store.path`` on disk), else memory."""
    url = getattr(store, "url", None)
    if isinstance(url, str):
        from acp2.store.pg_cursors import PgCursors

        return PgCursors(url)
    path = getattr(store, "path", None)
    if isinstance(path, str) and path not in ("", ":memory:"):
        return SqliteCursors(path)
    return MemoryCursors()
