"""The idempotency ledger in SQLite: the ``prompt_keys`` table and its statements.

What a ledger entry means and how long it is kept is :mod:`acp2.store.ledger`; the
lookup and retention statements both backends share are :mod:`acp2.store.sql`.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from typing import Final

from acp2.store.base import PromptEntry
from acp2.store.sql import SQLITE, prompt_entry, statements

__all__ = ["LEDGER_SCHEMA", "find_entry", "forget_session", "insert_entries", "trim_sessions"]

_SQL = statements(SQLITE)

#: One B-tree, keyed by what a lookup asks: a second index (an insertion counter) would
#: make every keyed prompt's commit write one more page. ``created`` (Unix time) orders
#: the keys for the retention cut, which scans the session's keys, so it runs only now
#: and then (:func:`trim_interval`).
LEDGER_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS prompt_keys (
    session_id TEXT NOT NULL,
    key TEXT NOT NULL,
    created REAL NOT NULL,
    digest TEXT NOT NULL,
    message_id TEXT NOT NULL,
    response BLOB NOT NULL,
    PRIMARY KEY (session_id, key)
) WITHOUT ROWID;
"""

# OR IGNORE: the store looks a key up (queued, then stored) before it queues it, so a
# duplicate cannot reach here; if one did, failing the flush would requeue it forever.
_INSERT = (
    "INSERT OR IGNORE INTO prompt_keys"
    " (session_id, key, created, digest, message_id, response) VALUES (?, ?, ?, ?, ?, ?)"
)


def find_entry(db: sqlite3.Connection, session_id: str, key: str) -> PromptEntry | None:
    """The stored entry of ``key`` in ``session_id``, or None (never seen, or forgotten)."""
    return prompt_entry(session_id, key, db.execute(_SQL.find_key, (session_id, key)).fetchone())


def insert_entries(db: sqlite3.Connection, entries: Iterable[PromptEntry]) -> None:
    """Store ``entries``, inside the caller's transaction (the one that inserts their
    user messages)."""
    now = time.time()
    db.executemany(
        _INSERT,
        [(e.session_id, e.key, now, e.digest, e.message_id, e.response) for e in entries],
    )


def trim_sessions(db: sqlite3.Connection, session_ids: Iterable[str], keep: int) -> None:
    """Cut each of ``session_ids`` back to its newest ``keep`` keys."""
    db.executemany(_SQL.trim_keys, [(s, s, keep - 1) for s in session_ids])


def forget_session(db: sqlite3.Connection, session_id: str) -> None:
    """Drop every key of ``session_id`` (its history is being deleted)."""
    db.execute(_SQL.delete_keys, (session_id,))
