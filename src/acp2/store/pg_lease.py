"""Session leases in PostgreSQL: one owner per session across every node of a database.

The rules are those of every backend (:mod:`acp2.store.leasing`); here the expiry is
computed by the database's clock (nodes' clocks may differ), a lease is checked and taken
under the session's advisory lock (so two nodes cannot both see "free" and both take it),
and the heartbeat renews through a connection of its own.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

import psycopg

from acp2.store import pg_sql as sql
from acp2.store.leasing import LeaseBook, in_use, still_held

__all__ = ["PgLeases"]

log = logging.getLogger("acp2.agent")


class PgLeases(LeaseBook):
    """The leases one :class:`~acp2.store.postgres.PostgresStore` holds on its database."""

    def __init__(self, url: str, ttl: float) -> None:
        super().__init__(ttl)
        self._url = url

    def check(self, db: psycopg.Connection[Any], session_id: str) -> None:
        """Raise :class:`~acp2.errors.SessionInUse` if another live owner holds
        ``session_id`` (call in a transaction holding the session's lock)."""
        row = db.execute(sql.FIND_LEASE, (session_id,)).fetchone()
        if row is None:
            return
        owner, node, pid, lapsed = str(row[0]), str(row[1]), int(row[2]), bool(row[3])
        if still_held(owner, node, pid, lapsed, self.owner):
            raise in_use(session_id, pid, node)

    def take(self, db: psycopg.Connection[Any], session_id: str) -> None:
        """Write this owner's lease row (in the transaction of :meth:`check`)."""
        db.execute(sql.TAKE_LEASE, (session_id, self.owner, self.node, os.getpid(), self.ttl))

    def drop(self, db: psycopg.Connection[Any], session_id: str) -> None:
        """Delete this owner's lease row of ``session_id`` (another owner's stays)."""
        db.execute(sql.SHARED.drop_lease, (session_id, self.owner))

    def renew(self, db: psycopg.Connection[Any]) -> None:
        """Push the expiry of every lease of this owner ``ttl`` seconds ahead."""
        db.execute(sql.RENEW_LEASES, (self.ttl, self.owner))

    def beat(self, stop: threading.Event) -> None:
        """The heartbeat thread: renew every ``ttl / 3`` seconds until ``stop``; a lost
        connection is opened again at the next beat."""
        db: psycopg.Connection[Any] | None = None
        try:
            while not stop.wait(self.ttl / 3):
                try:
                    if db is None or db.closed:
                        db = sql.connect(self._url)
                    self.renew(db)
                except psycopg.Error as exc:
                    log.warning("could not renew the session leases: %s", exc)
                    if db is not None and db.broken:
                        db.close()
        finally:
            if db is not None:
                db.close()
