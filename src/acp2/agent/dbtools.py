"""SQLite helpers of the history store: the write transaction, busy errors, row batches."""

from __future__ import annotations

import sqlite3
from collections.abc import Generator

__all__ = ["Batches", "Transaction", "closing_batches", "is_busy", "row_batches"]

#: Batches of stored rows, as ``HistoryStore.row_batches`` yields them.
Batches = Generator[list[bytes], None, None]


class Transaction:
    """``BEGIN IMMEDIATE`` (the write lock first, so a read-then-write cannot deadlock
    with another process) ... ``COMMIT``, or ``ROLLBACK`` on an exception."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        if not self._db.in_transaction:
            return  # SQLite already rolled it back (e.g. after SQLITE_FULL)
        if exc_type is None:
            try:
                self._db.execute("COMMIT")
                return
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
        self._db.execute("ROLLBACK")


def closing_batches(db: sqlite3.Connection, batches: Batches) -> Batches:
    """Yield from ``batches``, then close ``db`` (also when the consumer stops early)."""
    try:
        yield from batches
    finally:
        db.close()


def row_batches(db: sqlite3.Connection, session_id: str, rows: int) -> Batches:
    """The session's rows in batches of ``rows``, oldest first, up to the last row stored
    when it starts; each batch is one complete statement (none stays open between)."""
    last = db.execute("SELECT MAX(seq) FROM updates WHERE session_id = ?", (session_id,))
    last_seq = last.fetchone()[0]
    after = -1
    while last_seq is not None and after < last_seq:
        batch = db.execute(
            "SELECT seq, body FROM updates WHERE session_id = ? AND seq > ? AND seq <= ?"
            " ORDER BY seq LIMIT ?",
            (session_id, after, last_seq, rows),
        ).fetchall()
        if not batch:
            return
        after = batch[-1][0]
        yield [bytes(body) for _, body in batch]


def is_busy(exc: sqlite3.OperationalError) -> bool:
    """True for SQLITE_BUSY / SQLITE_LOCKED (another connection holds the lock)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    text = str(exc)
    return "locked" in text or "busy" in text
