"""Session leases: at most one live agent process serves a session of a shared history file.

``acp2 agent`` keeps every user's sessions in one SQLite file, so two editors each running
an agent process can both try to resume the same session. Two processes writing one
conversation interleave turns the user never saw together, so the second is refused: a
session being served holds a row in the ``leases`` table (owner id, host, pid, expiry).

* Acquiring (``session/new``, ``session/resume``) succeeds when there is no row, the row
  is ours, its expiry has passed, or its owner ran on this host and its pid is gone (a
  process killed with SIGKILL releases nothing, so a pid check gives the session back at
  once; the expiry covers another host and a reused pid).
* Otherwise :class:`SessionInUse` (JSON-RPC ``-32010``, ``data.sessionId``, ``pid``,
  ``host``) tells the client which process has it.
* A heartbeat thread renews this owner's rows every ``ttl / 3`` seconds (a thread, so a
  busy event loop does not let the lease lapse); releasing deletes them (session/close,
  the end of the connection, closing the store).

Rows carry no conversation data, so a lapsed lease cannot lose history: sequence numbers
come from the database inside each insert (see :mod:`acp2.agent.store`).
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import sqlite3
import threading
import time

from acp2.errors import SessionInUse

__all__ = ["LEASE_TTL", "LeaseKeeper", "SessionInUse"]

log = logging.getLogger("acp2.agent")

#: Seconds a lease lasts without a heartbeat.
LEASE_TTL = 30.0

LEASE_SCHEMA = """
CREATE TABLE IF NOT EXISTS leases (
    session_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    expires_at REAL NOT NULL
) WITHOUT ROWID;
"""


def _pid_alive(pid: int) -> bool:
    """True while ``pid`` runs on this host (a zombie, killed but not reaped, is dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


class LeaseKeeper:
    """The leases one :class:`~acp2.agent.store.HistoryStore` holds on its file.

    ``db`` is the store's connection (leases are taken inside its transactions); the
    heartbeat opens its own connection to ``path``. A session may be held several times
    by the same owner (two connections of one process); it is released at the last.
    """

    def __init__(self, db: sqlite3.Connection, path: str, ttl: float = LEASE_TTL) -> None:
        self._db = db
        self._path = path
        self.ttl = ttl
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(6)}"
        self._host = socket.gethostname()
        self._holds: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def holder(self, session_id: str) -> tuple[int, str] | None:
        """``(pid, host)`` of another live owner of ``session_id``, or None (call in a tx)."""
        row = self._db.execute(
            "SELECT owner, host, pid, expires_at FROM leases WHERE session_id = ?", (session_id,)
        ).fetchone()
        if row is None or row[0] == self.owner or row[3] < time.time():
            return None
        if row[1] == self._host and not _pid_alive(int(row[2])):
            return None
        return int(row[2]), str(row[1])

    def check(self, session_id: str) -> None:
        """Raise :class:`SessionInUse` if another live owner holds ``session_id``."""
        holder = self.holder(session_id)
        if holder is not None:
            pid, host = holder
            raise SessionInUse(
                f"The session is in use by another agent process (pid {pid} on {host});"
                " close it there first",
                {"sessionId": session_id, "pid": pid, "host": host},
            )

    def take(self, session_id: str) -> None:
        """Hold ``session_id`` (call inside a write transaction, after :meth:`check`)."""
        self._db.execute(
            "INSERT OR REPLACE INTO leases VALUES (?, ?, ?, ?, ?)",
            (session_id, self.owner, self._host, os.getpid(), time.time() + self.ttl),
        )

    def hold(self, session_id: str) -> None:
        """Count one more hold of ``session_id`` (after :meth:`take` committed)."""
        self._holds[session_id] = self._holds.get(session_id, 0) + 1
        self._start_heartbeat()

    def release(self, session_id: str) -> bool:
        """Drop one hold; True when it was the last (the caller deletes the row then)."""
        count = self._holds.get(session_id, 0)
        if count > 1:
            self._holds[session_id] = count - 1
            return False
        self._holds.pop(session_id, None)
        return count == 1

    def held(self) -> list[str]:
        """The sessions this owner holds."""
        return list(self._holds)

    def stop(self) -> None:
        """Stop the heartbeat thread (the caller deletes the rows)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    # -- heartbeat ------------------------------------------------------------------

    def _start_heartbeat(self) -> None:
        if self._thread is None and self._path != ":memory:":
            self._stop.clear()
            self._thread = threading.Thread(
                target=self._beat, name="acp2-lease-heartbeat", daemon=True
            )
            self._thread.start()

    def renew(self, db: sqlite3.Connection) -> None:
        """Push the expiry of every lease of this owner ``ttl`` seconds ahead."""
        try:
            db.execute(
                "UPDATE leases SET expires_at = ? WHERE owner = ?",
                (time.time() + self.ttl, self.owner),
            )
        except sqlite3.Error as exc:
            log.warning("could not renew the session leases: %s", exc)

    def _beat(self) -> None:
        db = sqlite3.connect(self._path, timeout=5.0, isolation_level=None)
        try:
            while not self._stop.wait(self.ttl / 3):
                self.renew(db)
        finally:
            db.close()
