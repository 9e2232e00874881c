"""Session leases: at most one live agent process serves a session of a shared history file.

``acp2 agent`` keeps every user's sessions in one SQLite file, so two editors each running
an agent process can both try to resume the same session. Two processes writing one
conversation interleave turns the user never saw together, so the second is refused: a
session being served holds a row in the ``leases`` table (owner id, host, pid, expiry).

* Acquiring (``session/new``, ``session/resume``) succeeds when there is no row, the row
  is ours, its expiry has passed, or its owner ran on this node and its pid is gone
  (:mod:`acp2.store.leasing`: the rules every backend shares).
* Otherwise :class:`SessionInUse` (JSON-RPC ``-32010``, ``data.sessionId``, ``pid``,
  ``host``) tells the client which process has it.
* A heartbeat thread renews this owner's rows every ``ttl / 3`` seconds (a thread, so a
  busy event loop does not let the lease lapse); releasing deletes them (session/close,
  the end of the connection, closing the store).

Rows carry no conversation data, so a lapsed lease cannot lose history: sequence numbers
come from the database inside each insert (see :mod:`acp2.store.sqlite`).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time

from acp2.errors import SessionInUse
from acp2.store.leasing import LEASE_TTL, LeaseBook, in_use, still_held

__all__ = ["LEASE_TTL", "LeaseKeeper", "SessionInUse"]

log = logging.getLogger("acp2.agent")

LEASE_SCHEMA = """
CREATE TABLE IF NOT EXISTS leases (
    session_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    expires_at REAL NOT NULL
) WITHOUT ROWID;
"""


class LeaseKeeper(LeaseBook):
    """The leases one :class:`~acp2.store.sqlite.HistoryStore` holds on its file.

    ``db`` is the store's connection (leases are taken inside its transactions); the
    heartbeat opens its own connection to ``path``. A session may be held several times
    by the same owner (two connections of one process); it is released at the last.
    """

    def __init__(self, db: sqlite3.Connection, path: str, ttl: float = LEASE_TTL) -> None:
        super().__init__(ttl, heartbeat=path != ":memory:")
        self._db = db
        self._path = path

    def holder(self, session_id: str) -> tuple[int, str] | None:
        """``(pid, host)`` of another live owner of ``session_id``, or None (call in a tx)."""
        row = self._db.execute(
            "SELECT owner, host, pid, expires_at FROM leases WHERE session_id = ?", (session_id,)
        ).fetchone()
        if row is None:
            return None
        owner, node, pid = str(row[0]), str(row[1]), int(row[2])
        return (
            (pid, node) if still_held(owner, node, pid, row[3] < time.time(), self.owner) else None
        )

    def check(self, session_id: str) -> None:
        """Raise :class:`SessionInUse` if another live owner holds ``session_id``."""
        holder = self.holder(session_id)
        if holder is not None:
            raise in_use(session_id, *holder)

    def take(self, session_id: str) -> None:
        """Hold ``session_id`` (call inside a write transaction, after :meth:`check`)."""
        self._db.execute(
            "INSERT OR REPLACE INTO leases VALUES (?, ?, ?, ?, ?)",
            (session_id, self.owner, self.node, os.getpid(), time.time() + self.ttl),
        )

    # -- heartbeat ------------------------------------------------------------------

    def renew(self, db: sqlite3.Connection) -> None:
        """Push the expiry of every lease of this owner ``ttl`` seconds ahead."""
        try:
            db.execute(
                "UPDATE leases SET expires_at = ? WHERE owner = ?",
                (time.time() + self.ttl, self.owner),
            )
        except sqlite3.Error as exc:
            log.warning("could not renew the session leases: %s", exc)

    def beat(self, stop: threading.Event) -> None:
        """The heartbeat thread: renew through a connection of its own until ``stop``."""
        db = sqlite3.connect(self._path, timeout=5.0, isolation_level=None)
        try:
            while not stop.wait(self.ttl / 3):
                self.renew(db)
        finally:
            db.close()
