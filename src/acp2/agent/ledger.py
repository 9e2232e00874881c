"""The dedupe ledger of keyed prompts: exactly-once ``session/prompt`` (Preview).

A client sends an ``idempotencyKey`` with a prompt and the same key on every retry of it
(agentclientprotocol.com/rfds/v2/idempotency-keys). The agent inserts the user message
at most once per ``(session id, key)``: the ledger row -- the key, a digest of the
prompt, the original ``messageId`` and the encoded response -- is written by
:class:`acp2.agent.store.HistoryStore` in the same transaction as the user message's
history row, so after a crash either both exist (a retry gets the original answer and
starts no work) or neither does (a retry inserts the prompt as new). A key sent again
with a different prompt is refused with ``-32602`` and changes nothing.

Retention is bounded per session: the newest :data:`KEYS_PER_SESSION` keys are kept (and
up to a tenth more between two cuts, :func:`trim_interval`); an older key is forgotten,
and a retry that late is inserted as a new prompt. Deleting a session drops its keys.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Iterable
from typing import Final

from acp2.errors import InvalidParams
from acp2.schema.codec import encode
from acp2.store.base import KEYS_PER_SESSION, PromptEntry, trim_interval

__all__ = [
    "KEYS_PER_SESSION",
    "LEDGER_SCHEMA",
    "PromptEntry",
    "check_same_prompt",
    "find_entry",
    "forget_session",
    "insert_entries",
    "prompt_digest",
    "trim_interval",
    "trim_sessions",
]

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
#: Delete what is older than the session's ``keep``-th newest key (nothing if fewer).
_TRIM = (
    "DELETE FROM prompt_keys WHERE session_id = ? AND created < (SELECT created"
    " FROM prompt_keys WHERE session_id = ? ORDER BY created DESC LIMIT 1 OFFSET ?)"
)


def prompt_digest(prompt: object) -> str:
    """A digest of a prompt's content blocks (their encoded JSON): equal prompts give
    equal digests, so a retry is told from a different prompt under the same key."""
    return hashlib.sha256(encode(prompt)).hexdigest()


def check_same_prompt(entry: PromptEntry, digest: str) -> None:
    """Raise ``-32602`` when ``digest`` is not the digest of the prompt ``entry`` was
    inserted with (the key was reused for another prompt; nothing is inserted)."""
    if entry.digest != digest:
        raise InvalidParams(
            "idempotencyKey was already used for a different prompt in this session",
            {"idempotencyKey": entry.key, "messageId": entry.message_id},
        )


def find_entry(db: sqlite3.Connection, session_id: str, key: str) -> PromptEntry | None:
    """The stored entry of ``key`` in ``session_id``, or None (never seen, or forgotten)."""
    row = db.execute(
        "SELECT digest, message_id, response FROM prompt_keys WHERE session_id = ? AND key = ?",
        (session_id, key),
    ).fetchone()
    if row is None:
        return None
    return PromptEntry(session_id, key, row[0], row[1], bytes(row[2]))


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
    db.executemany(_TRIM, [(s, s, keep - 1) for s in session_ids])


def forget_session(db: sqlite3.Connection, session_id: str) -> None:
    """Drop every key of ``session_id`` (its history is being deleted)."""
    db.execute("DELETE FROM prompt_keys WHERE session_id = ?", (session_id,))
