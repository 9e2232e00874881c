"""The dedupe ledger of keyed prompts: exactly-once ``session/prompt`` (Preview).

A client sends an ``idempotencyKey`` with a prompt and the same key on every retry of it
(agentclientprotocol.com/rfds/v2/idempotency-keys). The agent inserts the user message
at most once per ``(session id, key)``: the ledger row -- the key, a digest of the
prompt, the original ``messageId`` and the encoded response -- is written by
:class:`acp2.agent.store.HistoryStore` in the same transaction as the user message's
history row, so after a crash either both exist (a retry gets the original answer and
starts no work) or neither does (a retry inserts the prompt as new). A key sent again
with a different prompt is refused with ``-32602`` and changes nothing.

Retention is bounded per session: the newest :data:`KEYS_PER_SESSION` keys are kept, an
older key is forgotten (a retry that late is inserted as a new prompt). Deleting a
session drops its keys.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from acp2.errors import InvalidParams
from acp2.schema.codec import encode

__all__ = [
    "KEYS_PER_SESSION",
    "LEDGER_SCHEMA",
    "PromptEntry",
    "check_same_prompt",
    "find_entry",
    "forget_session",
    "insert_entries",
    "prompt_digest",
]

#: How many prompt keys each session keeps (the newest); older ones are forgotten.
KEYS_PER_SESSION: Final = 1000

#: ``n`` numbers a session's keys in insertion order (for the retention cut).
LEDGER_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS prompt_keys (
    session_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    key TEXT NOT NULL,
    digest TEXT NOT NULL,
    message_id TEXT NOT NULL,
    response BLOB NOT NULL,
    PRIMARY KEY (session_id, n),
    UNIQUE (session_id, key)
) WITHOUT ROWID;
"""

# OR IGNORE: the store looks a key up (queued, then stored) before it queues it, so a
# duplicate cannot reach here; if one did, failing the flush would requeue it forever.
_INSERT = (
    "INSERT OR IGNORE INTO prompt_keys (session_id, n, key, digest, message_id, response)"
    " VALUES (?, (SELECT COALESCE(MAX(n), 0) + 1 FROM prompt_keys WHERE session_id = ?),"
    " ?, ?, ?, ?)"
)
_TRIM = (
    "DELETE FROM prompt_keys WHERE session_id = ?"
    " AND n <= (SELECT MAX(n) FROM prompt_keys WHERE session_id = ?) - ?"
)


@dataclass(frozen=True, slots=True)
class PromptEntry:
    """One keyed prompt as the ledger keeps it: which session and key, the prompt's
    :func:`prompt_digest`, the ``messageId`` it was inserted with and the encoded
    ``PromptResponse`` it was answered with (sent again, as is, to a retry)."""

    session_id: str
    key: str
    digest: str
    message_id: str
    response: bytes


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


def insert_entries(
    db: sqlite3.Connection, entries: Iterable[PromptEntry], keep: int = KEYS_PER_SESSION
) -> None:
    """Store ``entries`` and cut each of their sessions back to its newest ``keep`` keys.
    Runs inside the caller's transaction (the one that inserts the user messages)."""
    sessions: set[str] = set()
    for e in entries:
        db.execute(_INSERT, (e.session_id, e.session_id, e.key, e.digest, e.message_id, e.response))
        sessions.add(e.session_id)
    db.executemany(_TRIM, [(s, s, keep) for s in sessions])


def forget_session(db: sqlite3.Connection, session_id: str) -> None:
    """Drop every key of ``session_id`` (its history is being deleted)."""
    db.execute("DELETE FROM prompt_keys WHERE session_id = ?", (session_id,))
