"""Session history, the idempotency ledger and session leases in PostgreSQL.

``Agent(store="postgresql://user@host/db")`` (or ``acp2 agent --store URL``) puts every
session in one database that several agent processes on several nodes share. The
semantics are those of the SQLite store (:mod:`acp2.store.base`): updates are committed
by :meth:`PostgresStore.flush` before they are sent, in one transaction with the keyed
prompts' ledger entries; each row's sequence number is taken from a per-session counter
row in the same statement (a second writer waits for the first's commit); a session is
served by one owner at a time, through a lease whose expiry a heartbeat pushes ahead, so
when a node dies another takes the session over once the lease has lapsed
(:mod:`acp2.store.pg_lease`).

psycopg 3's synchronous API, on purpose: the runtime's flush-before-send is synchronous
(it runs right before the bytes are written), and one flush is one statement -- one round
trip to the server, cheaper than a hop to an async driver's event loop task. Transient
errors (a serialization failure, a deadlock, a lock wait past its timeout, a lost
connection) are retried after a pause, on a new connection when the old one broke. A
commit whose answer was lost with its connection is retried too, so such a loss may store
that flush's batch twice; it never loses one.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from acp2.store import pg_sql as sql
from acp2.store.base import (
    ANYONE,
    Batches,
    Owner,
    PromptEntry,
    SessionRecord,
    now_text,
    session_changes,
)
from acp2.store.failures import boundary_batches, store_boundary
from acp2.store.leasing import LEASE_TTL
from acp2.store.queued import Queued, QueuedStore
from acp2.store.sql import list_query, prompt_entry, record, row_batches

try:
    import psycopg
except ImportError as exc:  # the postgres extra is not installed
    raise ImportError(sql.MISSING_DRIVER) from exc

from acp2.store.pg_lease import PgLeases  # after the check: it imports psycopg too

__all__ = ["PostgresStore"]

log = logging.getLogger("acp2.agent")

#: Pauses before the retries of a transaction that met a transient error, in seconds.
RETRY_BACKOFF = (0.05, 0.1, 0.2)
#: Serialization failure, deadlock, lock not available: worth running again.
_TRANSIENT = frozenset({"40001", "40P01", "55P03"})

T = TypeVar("T")
Db = psycopg.Connection[Any]


class PostgresStore(QueuedStore):
    """A :class:`~acp2.store.base.SessionStore` in the PostgreSQL database at ``url``
    (a libpq URL: ``postgresql://user:password@host:port/db``, ``?host=/socket/dir``).
    The tables (``acp2_*``) are created when missing."""

    write_errors = (psycopg.Error,)

    def __init__(self, url: str, *, lease_ttl: float = LEASE_TTL) -> None:
        super().__init__()
        self.url = url
        self._db: Db = sql.connect(url)
        sql.create_schema(self._db)
        self.leases = PgLeases(url, lease_ttl)

    def close(self) -> None:
        """Flush what is pending, release this store's leases and close the connection."""
        try:
            self.flush()
        finally:
            self.leases.stop()
            for session_id in self.leases.held():
                self._drop_lease(session_id)
            self._db.close()

    def _run(self, work: Callable[[Db], T], retried: frozenset[str] = _TRANSIENT) -> T:
        """Run ``work(connection)``; run it again after a pause on an error whose SQLSTATE
        is in ``retried``, or on a new connection when this one broke."""
        for pause in RETRY_BACKOFF:
            try:
                return work(self._connection())
            except psycopg.Error as exc:
                if exc.sqlstate not in retried and not self._db.broken:
                    raise
                log.warning("history database: %s; retrying in %.2f s", exc, pause)
                time.sleep(pause)
        return work(self._connection())

    def _connection(self) -> Db:
        if self._db.closed or self._db.broken:
            self._db.close()
            self._db = sql.connect(self.url)
        return self._db

    # -- leases -------------------------------------------------------------------

    @store_boundary
    def acquire(self, session_id: str) -> None:
        """Hold ``session_id`` for this owner; :class:`SessionInUse` if another has it."""
        self._run(lambda db: self._lease_tx(db, session_id))
        self.leases.hold(session_id)

    def _lease_tx(self, db: Db, session_id: str) -> None:
        with db.transaction():
            db.execute(sql.LOCK_SESSION, (session_id,))
            self.leases.check(db, session_id)
            self.leases.take(db, session_id)

    def release(self, session_id: str) -> None:
        """Drop one hold on ``session_id``; the lease ends with the last."""
        if self.leases.release(session_id):
            self._drop_lease(session_id)

    def _drop_lease(self, session_id: str) -> None:
        try:
            self._run(lambda db: self.leases.drop(db, session_id))
        except psycopg.Error as exc:
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
        now, dirs = now_text(), list(additional_directories)
        args = (session_id, cwd, json.dumps(dirs), now, now, principal)
        self._run(lambda db: db.execute(sql.SHARED.insert_session, args))
        return SessionRecord(session_id, cwd, dirs, None, now, now, principal=principal)

    @store_boundary
    def get_session(self, session_id: str) -> SessionRecord | None:
        """Return the record of a live (not deleted) session, or None."""
        query = sql.SHARED.get_session
        row = self._run(lambda db: db.execute(query, (session_id,)).fetchone())
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
        query = sql.SHARED.update_session(columns)
        self._run(lambda db: db.execute(query, (*args, session_id)))

    @store_boundary
    def delete_session(self, session_id: str) -> None:
        """Mark a session deleted and drop its history and keys. Unknown ids are ignored.

        Raises :class:`SessionInUse` while another live owner serves the session.
        """
        self.flush()
        self._run(lambda db: self._delete_tx(db, session_id))

    def _delete_tx(self, db: Db, session_id: str) -> None:
        with db.transaction():
            db.execute(sql.LOCK_SESSION, (session_id,))
            self.leases.check(db, session_id)
            db.execute("UPDATE acp2_sessions SET deleted = TRUE WHERE id = %s", (session_id,))
            db.execute(sql.SHARED.delete_updates, (session_id,))
            db.execute("DELETE FROM acp2_next_seq WHERE session_id = %s", (session_id,))
            db.execute(sql.SHARED.delete_keys, (session_id,))

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
        query, args = list_query(sql.SHARED, cwd=cwd, after=after, limit=limit, principal=principal)
        rows = self._run(lambda db: db.execute(query, args).fetchall())
        return [record(r) for r in rows]

    # -- updates and the ledger -----------------------------------------------------

    @store_boundary
    def find_stored_prompt(self, session_id: str, key: str) -> PromptEntry | None:
        """The committed ledger entry of ``key`` in ``session_id``, or None."""
        row = self._run(lambda db: db.execute(sql.SHARED.find_key, (session_id, key)).fetchone())
        return prompt_entry(session_id, key, row)

    def commit(self, work: Queued, trim: list[str]) -> None:
        """Commit ``work`` as one statement (:data:`acp2.store.pg_sql.FLUSH`), with the
        ledger's retention cut in the same transaction when one is due."""
        pending, touched, titles, keys, _ = work  # sessions are never queued here
        if len(pending) == 1 and not keys and not titles and touched.keys() <= pending.keys():
            ((session_id, bodies),) = pending.items()
            row = {"id": session_id, "body": b"\n".join(bodies), "now": now_text()}
            self._run(lambda db: db.execute(sql.FLUSH_ROW, row))
            return
        params = _flush_params(work)
        if not trim:
            self._run(lambda db: db.execute(sql.FLUSH, params))
            return
        self._run(lambda db: self._commit_and_trim(db, params, trim))

    def _commit_and_trim(self, db: Db, params: dict[str, Any], trim: list[str]) -> None:
        with db.transaction(), db.cursor() as cur:
            cur.execute(sql.FLUSH, params)
            keep = self.keys_per_session - 1
            cur.executemany(sql.SHARED.trim_keys, [(s, s, keep) for s in trim])

    @property
    def on_disk(self) -> bool:
        """True: :meth:`row_batches` reads through a connection of its own."""
        return True

    @store_boundary
    def row_batches(self, session_id: str, rows: int = 64) -> Batches:
        """Yield the session's stored rows (each one flush's bodies, newline-joined) in
        batches of ``rows``, oldest first, up to the last row stored when called.

        Read through a new connection, one complete statement per batch, so the batches
        may be fetched in a worker thread while the store goes on writing.
        """
        self.flush()  # now, in the caller's thread
        return boundary_batches(self, _batches(sql.connect(self.url), session_id, rows))


def _batches(db: Db, session_id: str, rows: int) -> Batches:
    try:
        yield from row_batches(db.execute, sql.SHARED, session_id, rows)
    finally:
        db.close()


def _flush_params(work: Queued) -> dict[str, Any]:
    """The parameters of :data:`acp2.store.pg_sql.FLUSH` for one flush's work."""
    pending, touched, titles, keys, _ = work
    touched = {**touched, **dict.fromkeys(pending, "")}
    entries = list(keys.values())
    return {
        "ids": list(pending),
        "bodies": [b"\n".join(bodies) for bodies in pending.values()],
        "key_sessions": [e.session_id for e in entries],
        "keys": [e.key for e in entries],
        "digests": [e.digest for e in entries],
        "message_ids": [e.message_id for e in entries],
        "responses": [e.response for e in entries],
        "now": now_text(),
        "touched": list(touched),
        "retitle": [s in titles for s in touched],
        "titles": [titles.get(s) for s in touched],
    }
