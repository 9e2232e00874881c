"""SQLite helpers of the history store: the write transaction, busy errors, closing batches,
the ``updates`` table (its schema, the migration of old files, big rows written in place),
and the thread that checkpoints the write-ahead log."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Sequence
from typing import Final

from acp2.store.base import Batches, Body

__all__ = [
    "BIG_ROW",
    "CHECKPOINT_INTERVAL",
    "PRINCIPAL_INDEX",
    "UPDATES_TABLE",
    "Batches",
    "Body",
    "Checkpointer",
    "Transaction",
    "closing_batches",
    "insert_in_place",
    "is_busy",
    "migrate_principal",
    "migrate_updates",
]

log = logging.getLogger("acp2.agent")

#: Rows at least this big are written in place (:func:`insert_in_place`), not bound.
BIG_ROW = 1024 * 1024

#: Seconds between two looks of the checkpoint thread for newly committed pages.
CHECKPOINT_INTERVAL: Final = 0.2

#: The ``updates`` table: a rowid table (until schema 1 it was ``WITHOUT ROWID``), so
#: that a big row can be written through incremental blob I/O.
UPDATES_TABLE = """
CREATE TABLE IF NOT EXISTS {name} (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (session_id, seq)
)"""

#: ``session/list`` of one principal reads its own rows only: without it a user with few
#: sessions on a busy store scans everyone's (2.5 ms for a page among 20 000 rows).
PRINCIPAL_INDEX = (
    "CREATE INDEX IF NOT EXISTS sessions_by_principal"
    " ON sessions (principal, deleted, updated_at DESC, id)"
)

#: The next sequence number of a session comes from the database, inside the insert.
_NEXT_SEQ = "(SELECT COALESCE(MAX(seq), -1) + 1 FROM updates WHERE session_id = ?)"
_INSERT_SIZED = f"INSERT INTO updates (session_id, seq, body) VALUES (?, {_NEXT_SEQ}, zeroblob(?))"


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


def is_busy(exc: sqlite3.OperationalError) -> bool:
    """True for SQLITE_BUSY / SQLITE_LOCKED (another connection holds the lock)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    text = str(exc)
    return "locked" in text or "busy" in text


def insert_in_place(db: sqlite3.Connection, session_id: str, bodies: Sequence[Body]) -> None:
    """Store ``bodies`` newline-joined as the session's next row, without joining them:
    the row is inserted as a zero blob of the right size and the bodies are written into
    it (binding a big blob makes SQLite copy it two or three times; this copies none).
    Runs inside the caller's transaction."""
    size = sum(map(len, bodies)) + len(bodies) - 1
    rowid = db.execute(_INSERT_SIZED, (session_id, session_id, size)).lastrowid
    assert rowid is not None
    with db.blobopen("updates", "body", rowid) as blob:
        for index, body in enumerate(bodies):
            if index:
                blob.write(b"\n")
            blob.write(body)


def _without_rowid(db: sqlite3.Connection) -> bool:
    row = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'updates'")
    found = row.fetchone()
    return found is not None and "WITHOUT ROWID" in found[0].upper()


def migrate_updates(db: sqlite3.Connection) -> bool:
    """Give an ``updates`` table made by an older acp2 (``WITHOUT ROWID``) rowids: copy
    its rows into a new table and swap the two, in one transaction (another process
    opening the file at the same time waits for it, then finds nothing to do). Returns
    True if this call migrated the table."""
    if not _without_rowid(db):
        return False
    with Transaction(db):
        if not _without_rowid(db):
            return False
        db.execute(UPDATES_TABLE.format(name="updates_migrated"))
        db.execute(
            "INSERT INTO updates_migrated (session_id, seq, body)"
            " SELECT session_id, seq, body FROM updates ORDER BY session_id, seq"
        )
        db.execute("DROP TABLE updates")
        db.execute("ALTER TABLE updates_migrated RENAME TO updates")
    return True


def migrate_principal(db: sqlite3.Connection) -> bool:
    """Give a ``sessions`` table made by an older acp2 its ``principal`` column (who
    created each session; NULL, the local user, for the rows already there), in one
    transaction that re-checks, so two processes opening the file at once add it once.
    Returns True if this call added it."""
    if _has_principal(db):
        db.execute(PRINCIPAL_INDEX)  # a no-op once made; files of this version have it
        return False
    with Transaction(db):
        if _has_principal(db):
            return False
        db.execute("ALTER TABLE sessions ADD COLUMN principal TEXT")
        db.execute(PRINCIPAL_INDEX)
    return True


def _has_principal(db: sqlite3.Connection) -> bool:
    return any(row[1] == "principal" for row in db.execute("PRAGMA table_info(sessions)"))


class Checkpointer:
    """Copies the pages committed to the write-ahead log into the database file, in a
    thread of its own, so the event loop never does it.

    With ``synchronous=NORMAL`` a commit only appends to the WAL (no fsync); the fsyncs
    happen when the WAL is checkpointed, which SQLite otherwise does inside the commit
    that crosses 1,000 pages -- a stall of milliseconds in the middle of a prompt (issue
    25: the prompt round trip's p99, and ~100 us of every ``session/new``). The store turns
    SQLite's automatic checkpoints off on its connection and calls :meth:`touch` after
    writing; this thread then runs a passive checkpoint (it never blocks a writer) at
    most every :data:`CHECKPOINT_INTERVAL` seconds. What a crash or a power loss can lose
    does not change: the WAL is the same file, checkpointed or not.
    """

    __slots__ = ("_dirty", "_path", "_stop", "_thread")

    def __init__(self, path: str) -> None:
        self._path = path
        self._dirty = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def touch(self) -> None:
        """Something was committed: checkpoint it soon (starts the thread the first time)."""
        self._dirty = True
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="acp2-checkpoint", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Checkpoint what was committed since the last look, then stop the thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _run(self) -> None:
        db = sqlite3.connect(self._path, timeout=1.0, isolation_level=None)
        try:
            while not self._stop.wait(CHECKPOINT_INTERVAL):
                if self._dirty:
                    self._dirty = False
                    self._checkpoint(db)
            if self._dirty:  # stopped: what was committed since the last look
                self._checkpoint(db)
        finally:
            db.close()

    @staticmethod
    def _checkpoint(db: sqlite3.Connection) -> None:
        try:
            db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error as exc:  # retried at the next touch; SQLite stays consistent
            log.warning("could not checkpoint the history's write-ahead log: %s", exc)
