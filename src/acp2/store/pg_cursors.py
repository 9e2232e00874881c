"""Stream cursors in PostgreSQL (:mod:`acp2.store.cursors`): one row per durable stream,
readable by every node of the database, stamped by the database's clock (nodes' clocks
may differ). A connection of its own, opened again after it broke."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final, TypeVar

import psycopg

from acp2.store import pg_sql as sql
from acp2.store.cursors import StreamCursor, decode_cursor, encode_cursor

__all__ = ["PgCursors"]

log = logging.getLogger("acp2.serve")

T = TypeVar("T")

_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS acp2_stream_cursors ("
    " id TEXT PRIMARY KEY, updated DOUBLE PRECISION NOT NULL, body BYTEA NOT NULL)"
)
_SAVE: Final = (
    f"INSERT INTO acp2_stream_cursors (id, updated, body) VALUES (%s, {sql.NOW}, %s)"
    " ON CONFLICT (id) DO UPDATE SET updated = EXCLUDED.updated, body = EXCLUDED.body"
)
_LOAD: Final = f"SELECT body FROM acp2_stream_cursors WHERE id = %s AND updated >= {sql.NOW} - %s"
_PRUNE: Final = f"DELETE FROM acp2_stream_cursors WHERE updated < {sql.NOW} - %s"


class PgCursors:
    """The cursors of every node on the database at ``url``."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._db: psycopg.Connection[Any] | None = None
        self._run(lambda db: db.execute(_SCHEMA))

    def _run(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """Run ``work`` on the connection; once more on a new one if it was broken."""
        for attempt in (1, 2):
            if self._db is None or self._db.closed:
                self._db = sql.connect(self.url)
            try:
                return work(self._db)
            except psycopg.OperationalError:
                if attempt == 2 or not self._db.broken:
                    raise
                log.warning("the stream cursor connection broke; opening it again")
                self._db = None
        raise AssertionError("unreachable")

    def save(self, cursor: StreamCursor) -> None:
        """Upsert the stream's row, stamped with the database's clock."""
        body = encode_cursor(cursor)
        self._run(lambda db: db.execute(_SAVE, (cursor.id, body)))

    def load(self, stream_id: str, max_age: float) -> StreamCursor | None:
        """The stream's row unless older than ``max_age`` seconds."""
        row = self._run(lambda db: db.execute(_LOAD, (stream_id, max_age)).fetchone())
        return decode_cursor(bytes(row[0])) if row else None

    def delete(self, stream_id: str) -> None:
        """Delete the stream's row."""
        self._run(lambda db: db.execute(sql.SHARED.delete_cursor, (stream_id,)))

    def prune(self, max_age: float) -> int:
        """Delete the rows older than ``max_age`` seconds."""
        return int(self._run(lambda db: db.execute(_PRUNE, (max_age,))).rowcount)

    def close(self) -> None:
        """Close the connection."""
        if self._db is not None:
            self._db.close()
            self._db = None
