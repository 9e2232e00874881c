"""What every backend's session leases share: who owns a lease, when another owner's
lease still counts, the error that says so, and the heartbeat thread.

A lease row holds the owner id, the node it runs on, its pid and an expiry. Another
owner's lease is void once its expiry has passed, or -- on the same node only -- once its
pid is gone (a process killed with SIGKILL releases nothing; the pid check hands the
session back at once, the expiry covers another node and a reused pid). The node is the
host name, or ``$ACP2_NODE_NAME`` where several nodes share one (containers, tests).
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
from typing import Final

from acp2.errors import SessionInUse

__all__ = [
    "LEASE_TTL",
    "LEASE_TTL_ENV",
    "NODE_ENV",
    "LeaseBook",
    "default_lease_ttl",
    "in_use",
    "node_name",
    "pid_alive",
    "still_held",
]

log = logging.getLogger("acp2.agent")

#: Seconds a lease lasts without a heartbeat.
LEASE_TTL: Final = 30.0
#: Overrides :data:`LEASE_TTL` for stores opened from a path or URL (seconds).
LEASE_TTL_ENV: Final = "ACP2_LEASE_TTL"
#: Overrides the host name as the lease's node.
NODE_ENV: Final = "ACP2_NODE_NAME"


def default_lease_ttl() -> float:
    """``$ACP2_LEASE_TTL`` if it is a positive number of seconds, else :data:`LEASE_TTL`."""
    try:
        ttl = float(os.environ.get(LEASE_TTL_ENV, ""))
    except ValueError:
        return LEASE_TTL
    return ttl if ttl > 0 else LEASE_TTL


def node_name() -> str:
    """The node leases are taken on: ``$ACP2_NODE_NAME``, else the host name."""
    return os.environ.get(NODE_ENV) or socket.gethostname()


def pid_alive(pid: int) -> bool:
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


def still_held(owner: str, node: str, pid: int, lapsed: bool, me: str) -> bool:
    """Whether a lease row of ``owner`` still keeps owner ``me`` out."""
    if owner == me or lapsed:
        return False
    return not (node == node_name() and not pid_alive(pid))


def in_use(session_id: str, pid: int, node: str) -> SessionInUse:
    """The ``-32010`` error for a session another live owner serves."""
    return SessionInUse(
        f"The session is in use by another agent process (pid {pid} on {node});"
        " close it there first",
        {"sessionId": session_id, "pid": pid, "host": node},
    )


class LeaseBook:
    """The holds of one store's owner, and the heartbeat thread that renews its rows.

    A session may be held several times by one owner (two connections of one process);
    it is released at the last hold. A backend's :meth:`beat` runs in the heartbeat thread
    (a thread, so a busy event loop cannot let a lease lapse) from the first hold on,
    unless ``heartbeat`` is False (a store in memory: nobody else can see its leases).
    """

    def __init__(self, ttl: float, *, heartbeat: bool = True) -> None:
        self.ttl = ttl
        self.heartbeat = heartbeat
        self.node = node_name()
        self.owner = f"{self.node}:{os.getpid()}:{secrets.token_hex(6)}"
        self._holds: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def hold(self, session_id: str) -> None:
        """Count one more hold of ``session_id`` (after its lease row committed); start
        the heartbeat thread unless it runs already."""
        self._holds[session_id] = self._holds.get(session_id, 0) + 1
        if self._thread is None and self.heartbeat:
            self._stop.clear()
            self._thread = threading.Thread(
                target=self.beat, args=(self._stop,), name="acp2-lease-heartbeat", daemon=True
            )
            self._thread.start()

    def beat(self, stop: threading.Event) -> None:
        """Renew this owner's leases every ``ttl / 3`` seconds until ``stop`` is set (the
        heartbeat thread; each backend brings its own)."""
        raise NotImplementedError

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
