"""Session history in SQLite: sessions, their metadata, and every update sent.

The store is synchronous on purpose: each call is a few microseconds of work on a local
file, and the runtime calls :meth:`HistoryStore.flush` right before the bytes of the
updates it holds go out on the wire, so an update is committed before it is sent -- a
crash mid-turn loses nothing the client already saw. Updates are stored as the exact JSON
bytes of the ``update`` object, in order, one row each; replay folds them (see
:mod:`acp2.agent.replay`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["HistoryStore", "SessionRecord", "default_store_path"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    additional_directories TEXT NOT NULL DEFAULT '[]',
    title TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    next_seq INTEGER NOT NULL DEFAULT 0,
    deleted INTEGER NOT NULL DEFAULT 0,
    data TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS sessions_by_update ON sessions (deleted, updated_at DESC, id);
CREATE TABLE IF NOT EXISTS updates (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
"""


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


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class SessionRecord:
    """One stored session: what ``session/list`` reports and ``session/resume`` restores."""

    id: str
    cwd: str
    additional_directories: list[str]
    title: str | None
    created_at: str
    updated_at: str
    data: dict[str, Any] = field(default_factory=dict)


class HistoryStore:
    """SQLite-backed session history (``":memory:"`` for tests).

    Appended updates are held in memory until :meth:`flush`, which commits them all in
    one transaction; the runtime flushes right before writing them to the peer.
    """

    def __init__(self, path: str | os.PathLike[str] = ":memory:") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        #: Queued update bodies by session; a flush stores each session's batch as one row.
        self._pending: dict[str, list[bytes]] = {}
        self._seq: dict[str, int] = {}
        self._touched: dict[str, str] = {}
        self._titles: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        """Flush what is pending and close the database."""
        self.flush()
        self._db.close()

    # -- sessions -----------------------------------------------------------------

    def create_session(
        self, session_id: str, cwd: str, additional_directories: Sequence[str]
    ) -> SessionRecord:
        """Insert a new session and return its record."""
        now = _now()
        dirs = list(additional_directories)
        self._db.execute(
            "INSERT INTO sessions (id, cwd, additional_directories, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (session_id, cwd, json.dumps(dirs), now, now),
        )
        self._seq[session_id] = 0
        return SessionRecord(session_id, cwd, dirs, None, now, now)

    def get_session(self, session_id: str) -> SessionRecord | None:
        """Return the record of a live (not deleted) session, or None."""
        row = self._db.execute(
            "SELECT id, cwd, additional_directories, title, created_at, updated_at, data"
            " FROM sessions WHERE id = ? AND deleted = 0",
            (session_id,),
        ).fetchone()
        return _record(row) if row else None

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
        sets = ["updated_at = ?"]
        args: list[Any] = [_now()]
        if title is not None or clear_title:
            sets.append("title = ?")
            args.append(title)
        if additional_directories is not None:
            sets.append("additional_directories = ?")
            args.append(json.dumps(list(additional_directories)))
        if data is not None:
            sets.append("data = ?")
            args.append(json.dumps(data))
        self.flush()
        self._db.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", (*args, session_id))

    def delete_session(self, session_id: str) -> None:
        """Mark a session deleted and drop its history. Unknown ids are ignored."""
        self.flush()
        with self._transaction():
            self._db.execute("UPDATE sessions SET deleted = 1 WHERE id = ?", (session_id,))
            self._db.execute("DELETE FROM updates WHERE session_id = ?", (session_id,))
        self._seq.pop(session_id, None)

    def list_sessions(
        self, *, cwd: str | None = None, after: tuple[str, str] | None = None, limit: int = 50
    ) -> list[SessionRecord]:
        """Return live sessions, most recently updated first, optionally after a cursor key.

        ``after`` is the ``(updated_at, id)`` of the last session of the previous page.
        """
        self.flush()
        where = ["deleted = 0"]
        args: list[Any] = []
        if cwd is not None:
            where.append("cwd = ?")
            args.append(cwd)
        if after is not None:
            where.append("(updated_at < ? OR (updated_at = ? AND id > ?))")
            args.extend([after[0], after[0], after[1]])
        rows = self._db.execute(
            "SELECT id, cwd, additional_directories, title, created_at, updated_at, data"
            f" FROM sessions WHERE {' AND '.join(where)}"
            " ORDER BY updated_at DESC, id ASC LIMIT ?",
            (*args, limit),
        ).fetchall()
        return [_record(r) for r in rows]

    # -- updates ------------------------------------------------------------------

    def append(self, session_id: str, body: bytes) -> None:
        """Queue one encoded ``update`` object for ``session_id`` (committed by flush).

        ``body`` must be compact JSON (no raw newline, as on the wire): a flush stores all
        the bodies queued for a session as one newline-joined row -- one SQLite row per
        write instead of one per update.
        """
        batch = self._pending.get(session_id)
        if batch is None:
            batch = self._pending[session_id] = []
        batch.append(body)

    def set_title(self, session_id: str, title: str | None) -> None:
        """Queue a new title (None clears it) for ``session_id``, committed by flush."""
        self._titles[session_id] = title
        self._touched[session_id] = ""

    def flush(self) -> None:
        """Commit every queued update in one transaction. Cheap when nothing is queued."""
        if not self._pending and not self._titles:
            return
        with self._lock:
            pending, self._pending = self._pending, {}
            touched, self._touched = self._touched, {}
            titles, self._titles = self._titles, {}
            rows = [(s, self._next_seq(s), b"\n".join(bodies)) for s, bodies in pending.items()]
            touched.update(dict.fromkeys(pending, ""))
            now = _now()
            with self._transaction():
                if rows:
                    self._db.executemany("INSERT INTO updates VALUES (?, ?, ?)", rows)
                self._db.executemany(
                    "UPDATE sessions SET updated_at = ?, next_seq = ? WHERE id = ?",
                    [(now, self._seq[s], s) for s in touched if s in self._seq],
                )
                if titles:
                    self._db.executemany(
                        "UPDATE sessions SET title = ? WHERE id = ?",
                        [(title, s) for s, title in titles.items()],
                    )

    def _next_seq(self, session_id: str) -> int:
        seq = self._seq.get(session_id)
        if seq is None:
            seq = self._load_seq(session_id)
        self._seq[session_id] = seq + 1
        return seq

    def updates(self, session_id: str) -> Iterator[bytes]:
        """Yield the stored update bodies of a session, oldest first."""
        self.flush()
        cur = self._db.execute(
            "SELECT body FROM updates WHERE session_id = ? ORDER BY seq", (session_id,)
        )
        for (body,) in cur:
            yield from bytes(body).split(b"\n")  # a row holds one flush's batch

    def _load_seq(self, session_id: str) -> int:
        row = self._db.execute(
            "SELECT next_seq FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return int(row[0]) if row else 0

    def _transaction(self) -> _Tx:
        return _Tx(self._db)


class _Tx:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")


def _record(row: tuple[Any, ...]) -> SessionRecord:
    return SessionRecord(
        id=row[0],
        cwd=row[1],
        additional_directories=list(json.loads(row[2])),
        title=row[3],
        created_at=row[4],
        updated_at=row[5],
        data=dict(json.loads(row[6] or "{}")),
    )
