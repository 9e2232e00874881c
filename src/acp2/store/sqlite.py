"""Session history in SQLite: sessions, their metadata, and every update sent.

The store is synchronous on purpose: each call is a few microseconds of work on a local
file, and the runtime calls :meth:`HistoryStore.flush` right before the bytes of the
updates it holds go out on the wire, so an update is committed before it is sent -- a
crash mid-turn loses nothing the client already saw. Updates are stored as the exact JSON
bytes of the ``update`` object, in order; replay folds them (see :mod:`acp2.agent.replay`).

Several processes may share one file (``acp2 agent`` uses one per user):

* a row's sequence number is computed by SQLite in the insert itself, inside a
  ``BEGIN IMMEDIATE`` transaction (``MAX(seq) + 1``), never cached in memory, so two
  writers cannot collide;
* a flush that meets a locked database waits (``busy_timeout``) and is retried with
  backoff; one that still fails keeps its updates queued for the next flush, logs an
  error, and makes the next :meth:`HistoryStore.append` raise :class:`HistoryWriteError`
  (failing the turn) until a flush succeeds -- updates are never dropped silently;
* a session is served by one process at a time (:mod:`acp2.store.sqlite_lease`);
* a keyed prompt's ledger entry (:mod:`acp2.store.ledger`) is queued with its user message
  and committed in the same transaction, so a retry after a crash finds both or neither;
* a new session's row and lease are queued too (:meth:`HistoryStore.open_session`): the
  ``session/new`` requests read together share one commit;
* ``updated_at`` is rewritten at most once a second per session (:mod:`acp2.store.stamps`).

Errors of SQLite never leave the store: every public method maps them to
:class:`~acp2.errors.StoreUnusable` naming the file (:func:`acp2.store.failures.store_boundary`).

The file is private to its owner (:mod:`acp2.store.private`). A row of a megabyte or more
(a huge prompt) is written in place through incremental blob I/O, without a copy; that
needs rowids, so a file made when ``updates`` was ``WITHOUT ROWID`` is migrated once on
open (:func:`acp2.store.sqlite_tools.migrate_updates`).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp2.errors import HistoryWriteError, SessionInUse
from acp2.store.base import (
    ANYONE,
    Batches,
    Body,
    Owner,
    PromptEntry,
    SessionRecord,
    now_text,
    session_changes,
)
from acp2.store.failures import boundary_batches, store_boundary, unusable
from acp2.store.leasing import LEASE_TTL
from acp2.store.private import COMPANIONS, prepare_private_file, tighten
from acp2.store.queued import Queued, QueuedStore
from acp2.store.sql import SQLITE, list_query, record, row_batches, statements
from acp2.store.sqlite_lease import LEASE_SCHEMA, LeaseKeeper
from acp2.store.sqlite_ledger import (
    LEDGER_SCHEMA,
    find_entry,
    forget_session,
    insert_entries,
    trim_sessions,
)
from acp2.store.sqlite_tools import (
    BIG_ROW,
    UPDATES_TABLE,
    Checkpointer,
    Transaction,
    closing_batches,
    insert_in_place,
    is_busy,
    migrate_principal,
    migrate_updates,
)
from acp2.store.stamps import Stamps, Writes, stamp_text

__all__ = [
    "HistoryStore",
    "HistoryWriteError",
    "SessionInUse",
    "SessionRecord",
    "default_store_path",
]

log = logging.getLogger("acp2.agent")  # the name users configure; kept across the move

#: How long one statement waits for another process's write lock, in milliseconds.
BUSY_TIMEOUT_MS = 1000
#: Pauses before the retries of a flush that found the database locked, in seconds.
RETRY_BACKOFF = (0.05, 0.1, 0.2)

#: One row per flush per session; its sequence number comes from the database. (A scalar
#: subquery: ``INSERT ... SELECT`` from the same table would copy each row through a
#: temporary table, 25% slower per flush.)
_INSERT = (
    "INSERT INTO updates (session_id, seq, body) VALUES"
    " (?, (SELECT COALESCE(MAX(seq), -1) + 1 FROM updates WHERE session_id = ?), ?)"
)

#: The statements SQLite shares with PostgreSQL (:mod:`acp2.store.sql`).
_SQL = statements(SQLITE)

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    additional_directories TEXT NOT NULL DEFAULT '[]',
    title TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0,
    data TEXT NOT NULL DEFAULT '{}',
    principal TEXT
);
CREATE INDEX IF NOT EXISTS sessions_by_update ON sessions (deleted, updated_at DESC, id);
"""
    + UPDATES_TABLE.format(name="updates")
    + ";\n"
    + LEASE_SCHEMA
    + LEDGER_SCHEMA
)


def default_store_path(app_name: str) -> Path:
    """Return the default SQLite file for an agent named ``app_name``.

    ``$ACP2_DATA_DIR`` wins; else ``$XDG_DATA_HOME/acp2``; else ``~/.local/share/acp2``.
    """
    base = os.environ.get("ACP2_DATA_DIR")
    if base:
        root = Path(base)
    else:
        xdg = os.environ.get("XDG_DATA_HOME")
        root = (Path(xdg) if xdg else Path.home() / ".local" / "share") / "acp2"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in app_name) or "agent"
    return root / f"{safe}.sqlite3"


class HistoryStore(QueuedStore):
    """SQLite-backed session history (``":memory:"`` for tests): the default
    :class:`~acp2.store.base.SessionStore`.

    Appended updates are held in memory until :meth:`flush`, which commits them all in
    one transaction; the runtime flushes right before writing them to the peer.
    """

    write_errors = (sqlite3.Error,)

    def __init__(
        self, path: str | os.PathLike[str] = ":memory:", *, lease_ttl: float = LEASE_TTL
    ) -> None:
        super().__init__()
        self.path = str(path)
        self._checkpoints = Checkpointer(self.path) if self.on_disk else None
        try:
            self._open(on_disk=self.path not in (":memory:", ""))
        except (sqlite3.Error, OSError) as exc:
            raise unusable(self, exc) from exc
        self.leases = LeaseKeeper(self._db, self.path, lease_ttl)
        self._stamps = Stamps()

    def _open(self, *, on_disk: bool) -> None:
        """Open, migrate and probe the file; raises what SQLite or the OS said."""
        if on_disk:
            prepare_private_file(Path(self.path))
        self._db = sqlite3.connect(
            self.path,
            isolation_level=None,
            check_same_thread=False,
            timeout=BUSY_TIMEOUT_MS / 1000,
        )
        try:
            self._db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            if on_disk:  # checkpoints run in a thread of their own (Checkpointer)
                self._db.execute("PRAGMA wal_autocheckpoint=0")
            self._db.executescript(_SCHEMA)
            if self._retrying(lambda: migrate_updates(self._db)):  # another process may be at it
                log.info("history %s: the updates table now has rowids", self.path)
            if self._retrying(lambda: migrate_principal(self._db)):
                log.info("history %s: sessions now record their principal", self.path)
            self._retrying(self._probe)
        except BaseException:
            self._db.close()
            raise
        if on_disk:
            for suffix in COMPANIONS:
                tighten(Path(f"{self.path}{suffix}"))

    def _probe(self) -> None:
        """Fail now, not at the first ``session/new``, on a file that is corrupt where
        every session needs it (the tables' pages) or that cannot be written: a few page
        reads and an empty write transaction, whatever the history's size."""
        self._db.execute("SELECT COUNT(*) FROM sessions").fetchone()
        self._db.execute("SELECT MAX(rowid) FROM updates").fetchone()
        with self._transaction():
            self._db.execute("UPDATE sessions SET id = id WHERE 0")

    def close(self) -> None:
        """Flush what is pending, release this store's leases and close the database."""
        try:
            self.flush()
            self._write_stamps(self._stamps.take_all())
        finally:
            self.leases.stop()
            if self._checkpoints is not None:
                self._checkpoints.stop()
            for session_id in self.leases.held():
                self._drop_lease(session_id)
            self._db.close()

    # -- leases -------------------------------------------------------------------

    @store_boundary
    def acquire(self, session_id: str) -> None:
        """Hold ``session_id`` for this process; :class:`SessionInUse` if another has it."""
        self._retrying(lambda: self._lease_tx(session_id))
        self.leases.hold(session_id)

    def _lease_tx(self, session_id: str) -> None:
        with self._transaction():
            self.leases.check(session_id)
            self.leases.take(session_id)

    def release(self, session_id: str) -> None:
        """Drop one hold on ``session_id``; the lease ends with the last."""
        if self.leases.release(session_id):
            self.forget_created(session_id)
            self._drop_lease(session_id)
            try:
                self._write_stamps(self._stamps.take(session_id))
            except sqlite3.Error as exc:
                log.warning("could not store when %s was last updated: %s", session_id, exc)

    def _drop_lease(self, session_id: str) -> None:
        try:
            self._retrying(
                lambda: self._db.execute(_SQL.drop_lease, (session_id, self.leases.owner))
            )
        except sqlite3.Error as exc:
            log.warning("could not release the lease of %s: %s", session_id, exc)

    # -- sessions -----------------------------------------------------------------

    @store_boundary
    def create_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: Sequence[str],
        principal: str | None = None,
    ) -> SessionRecord:
        """Insert a new session owned by ``principal`` and return its record."""
        now = now_text()
        dirs = list(additional_directories)
        self._db.execute(
            _SQL.insert_session, (session_id, cwd, _dirs_text(dirs), now, now, principal)
        )
        self.note_created(session_id)  # the insert succeeded: the id is new to the file
        self._committed()
        return SessionRecord(session_id, cwd, dirs, None, now, now, principal=principal)

    def open_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: Sequence[str],
        principal: str | None = None,
    ) -> SessionRecord:
        """Create and hold a session whose id nobody else can know yet: its row and its
        lease are queued, committed by the next :meth:`flush` (which ``session/new``
        awaits before it answers). No lease check: nobody can hold a new id."""
        now = now_text()
        dirs = list(additional_directories)
        self._opened[session_id] = (session_id, cwd, _dirs_text(dirs), now, now, principal)
        self.note_created(session_id)
        self.leases.hold(session_id)
        self._stamps.wrote(session_id)
        return SessionRecord(session_id, cwd, dirs, None, now, now, principal=principal)

    def discard_open(self, session_id: str) -> bool:
        """Forget a queued :meth:`open_session` no flush committed (and its hold)."""
        if not super().discard_open(session_id):
            return False
        self.forget_created(session_id)
        self.leases.release(session_id)
        self._stamps.take(session_id)
        return True

    @store_boundary
    def get_session(self, session_id: str) -> SessionRecord | None:
        """Return the record of a live (not deleted) session, or None."""
        row = self._db.execute(_SQL.get_session, (session_id,)).fetchone()
        return record(row) if row else None

    @store_boundary
    def update_session(
        self,
        session_id: str,
        *,
        title: str | None = None,
        clear_title: bool = False,
        additional_directories: Sequence[str] | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        """Change a session's title, extra roots or author data, and bump ``updated_at``."""
        columns, args = session_changes(
            title=title,
            clear_title=clear_title,
            additional_directories=additional_directories,
            data=data,
        )
        self.flush()
        self._db.execute(_SQL.update_session(columns), (*args, session_id))

    @store_boundary
    def delete_session(self, session_id: str) -> None:
        """Mark a session deleted and drop its history. Unknown ids are ignored.

        Raises :class:`SessionInUse` while another live process serves the session.
        """
        self.flush()
        self.forget_created(session_id)
        self._stamps.take(session_id)
        with self._transaction():
            self.leases.check(session_id)
            self._db.execute("UPDATE sessions SET deleted = 1 WHERE id = ?", (session_id,))
            self._db.execute(_SQL.delete_updates, (session_id,))
            forget_session(self._db, session_id)

    @store_boundary
    def list_sessions(
        self,
        *,
        cwd: str | None = None,
        after: tuple[str, str] | None = None,
        limit: int = 50,
        principal: Owner = ANYONE,
    ) -> list[SessionRecord]:
        """Return live sessions, most recently updated first, optionally after a cursor key.

        ``after`` is the ``(updated_at, id)`` of the last session of the previous page;
        only ``principal``'s sessions unless :data:`~acp2.store.base.ANYONE`.
        """
        self.flush()
        self._write_stamps(self._stamps.take_all())
        query, args = list_query(_SQL, cwd=cwd, after=after, limit=limit, principal=principal)
        return [record(r) for r in self._db.execute(query, args).fetchall()]

    # -- updates ------------------------------------------------------------------

    @store_boundary
    def find_stored_prompt(self, session_id: str, key: str) -> PromptEntry | None:
        """The committed ledger entry of ``key`` in ``session_id``, or None."""
        found: PromptEntry | None = self._retrying(lambda: find_entry(self._db, session_id, key))
        return found

    def commit(self, work: Queued, trim: list[str]) -> None:
        """Commit ``work`` in one ``BEGIN IMMEDIATE`` transaction; a locked database is
        retried (:data:`RETRY_BACKOFF`)."""
        self._retrying(lambda: self._commit(*work, trim))
        self._committed()

    def _commit(
        self,
        pending: dict[str, list[Body]],
        touched: dict[str, str],
        titles: dict[str, str | None],
        keys: dict[tuple[str, str], PromptEntry],
        opened: dict[str, Any],
        trim: list[str],
    ) -> None:
        writes = self._stamps.due(pending) if pending else []
        if touched:  # a new title: ``updated_at`` now
            writes += [(time.time(), s) for s in touched]
        try:
            with Transaction(self._db):
                if opened:  # first: the updates and keys below may belong to them
                    self._insert_opened(opened)
                if pending:
                    self._insert(pending)
                if keys:  # with the user messages they belong to: both or neither (ledger)
                    insert_entries(self._db, keys.values())
                    if trim:
                        trim_sessions(self._db, trim, self.keys_per_session)
                if writes:
                    self._update_stamps(writes)
                if titles:
                    self._db.executemany(
                        "UPDATE sessions SET title = ? WHERE id = ?",
                        [(title, s) for s, title in titles.items()],
                    )
        except BaseException:
            self._stamps.put_back(writes)
            raise

    def _insert_opened(self, opened: dict[str, Any]) -> None:
        """The rows of the sessions :meth:`open_session` queued, and their leases."""
        self._db.executemany(_SQL.insert_session, opened.values())
        for session_id in opened:
            self.leases.take(session_id)

    def _update_stamps(self, writes: Writes) -> None:
        self._db.executemany(
            "UPDATE sessions SET updated_at = ? WHERE id = ?",
            [(stamp_text(when), s) for when, s in writes],
        )

    def _write_stamps(self, writes: Writes) -> None:
        """Write owed ``updated_at`` values now, in a transaction of their own."""
        if writes:
            with self._transaction():
                self._update_stamps(writes)

    def _insert(self, pending: dict[str, list[Body]]) -> None:
        """One row per session: bound in one ``executemany``, or written in place when it
        is big (:data:`BIG_ROW`; no copy of a huge prompt in SQLite's memory)."""
        small = []
        for session_id, bodies in pending.items():
            if len(bodies) == 1 and len(bodies[0]) < BIG_ROW:
                small.append((session_id, session_id, bodies[0]))
            elif sum(map(len, bodies)) < BIG_ROW:
                small.append((session_id, session_id, b"\n".join(bodies)))
            else:
                insert_in_place(self._db, session_id, bodies)
        self._db.executemany(_INSERT, small)

    def _retrying(self, work: Any) -> Any:
        """Run ``work()``; retry it after a pause while the database is busy or locked."""
        for pause in (*RETRY_BACKOFF, None):
            try:
                return work()
            except sqlite3.OperationalError as exc:
                if pause is None or not is_busy(exc):
                    raise
                log.warning("history database busy, retrying in %.2f s", pause)
                time.sleep(pause)
        return None

    @property
    def on_disk(self) -> bool:
        """True for a database file (then :meth:`row_batches` may run in a worker thread)."""
        return self.path not in (":memory:", "")

    @store_boundary
    def row_batches(self, session_id: str, rows: int = 64) -> Batches:
        """Yield the session's stored rows (each one flush's bodies, newline-joined) in
        batches of ``rows``, oldest first, up to the last row stored when called.

        No statement stays open between batches, so the caller may let other work (that
        writes to the store) run between them. A database file is read through a
        connection of its own, so the batches may be fetched in a worker thread, one at a
        time (the reads of a huge row then do not hold the event loop).
        """
        self.flush()  # now, in the caller's thread
        if not self.on_disk:
            return boundary_batches(self, row_batches(self._db.execute, _SQL, session_id, rows))
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        batches = closing_batches(db, row_batches(db.execute, _SQL, session_id, rows))
        return boundary_batches(self, batches)

    def _transaction(self) -> Transaction:
        self._committed()  # a little early: the thread checkpoints what is there by then
        return Transaction(self._db)

    def _committed(self) -> None:
        if self._checkpoints is not None:
            self._checkpoints.touch()


def _dirs_text(dirs: list[str]) -> str:
    """The stored form of a session's additional directories (most have none)."""
    return json.dumps(dirs) if dirs else "[]"
