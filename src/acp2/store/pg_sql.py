"""The SQL of the PostgreSQL store: its tables, its statements and how it connects.

Every table is prefixed ``acp2_`` so the store can share a database with other
applications. Times that decide between nodes (lease expiry, the ledger's order) come from
the database's clock, not a node's. A lease is checked and taken under a
transaction-scoped advisory lock on the session id (:data:`LOCK_SESSION`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from acp2.store.sql import POSTGRES, statements

if TYPE_CHECKING:
    import psycopg

__all__ = ["MISSING_DRIVER", "SCHEMA", "SHARED", "connect", "create_schema"]

#: The error of a postgresql:// store without psycopg.
MISSING_DRIVER: Final = (
    "a postgresql:// store needs psycopg 3: install acp2's postgres extra"
    " (pip install -e '.[postgres]' in the checkout, or pip install 'psycopg[binary]')"
)

#: The advisory-lock class of acp2 (the first key of the two-key form), so our locks
#: never meet another application's.
_LOCK_CLASS: Final = 0xAC92

#: The database's time now, in Unix seconds.
NOW: Final = "extract(epoch from clock_timestamp())"

#: Serializes the lease takers (and deleters) of one session until the end of the
#: transaction.
LOCK_SESSION: Final = f"SELECT pg_advisory_xact_lock({_LOCK_CLASS}, hashtext(%s))"

#: Serializes the schema set-up of several processes opening one new database.
_LOCK_SCHEMA: Final = f"SELECT pg_advisory_xact_lock({_LOCK_CLASS}, 0)"

SCHEMA: Final = (
    """
CREATE TABLE IF NOT EXISTS acp2_sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    additional_directories TEXT NOT NULL DEFAULT '[]',
    title TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    deleted BOOLEAN NOT NULL DEFAULT FALSE,
    data TEXT NOT NULL DEFAULT '{}'
);
ALTER TABLE acp2_sessions ADD COLUMN IF NOT EXISTS principal TEXT;
CREATE INDEX IF NOT EXISTS acp2_sessions_by_principal
    ON acp2_sessions (principal, deleted, updated_at DESC, id);
CREATE INDEX IF NOT EXISTS acp2_sessions_by_update
    ON acp2_sessions (deleted, updated_at DESC, id);
CREATE TABLE IF NOT EXISTS acp2_updates (
    session_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    body BYTEA NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS acp2_next_seq (
    session_id TEXT PRIMARY KEY,
    next BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS acp2_leases (
    session_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS acp2_prompt_keys (
    session_id TEXT NOT NULL,
    key TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL,
    digest TEXT NOT NULL,
    message_id TEXT NOT NULL,
    response BYTEA NOT NULL,
    PRIMARY KEY (session_id, key)
);
"""
).strip()

#: A session's next sequence number, taken in the flush's statement itself: the upsert
#: locks the counter row, so a second writer of the session waits for the first to commit
#: and then counts on from its number (no collision, no retry, nothing cached).
_NEXT_SEQ: Final = (
    " ON CONFLICT (session_id) DO UPDATE SET next = acp2_next_seq.next + 1"
    " RETURNING session_id, next - 1 AS seq"
)

#: One flush in one statement (one round trip, its own transaction): the batch rows, each
#: numbered by :data:`_NEXT_SEQ`; the keyed prompts' ledger entries with them (both or
#: neither); ``updated_at`` and titles of the sessions touched. A duplicate key cannot
#: reach the ledger insert (the store looks a key up before it queues it); if one did,
#: failing the flush would requeue it forever, so it is ignored.
FLUSH: Final = f"""
WITH seq AS (
    INSERT INTO acp2_next_seq (session_id, next)
    SELECT s, 1 FROM unnest(%(ids)s::text[]) AS s
    {_NEXT_SEQ}
), rows AS (
    INSERT INTO acp2_updates (session_id, seq, body)
    SELECT r.s, seq.seq, r.b
    FROM unnest(%(ids)s::text[], %(bodies)s::bytea[]) AS r(s, b)
    JOIN seq ON seq.session_id = r.s
), keys AS (
    INSERT INTO acp2_prompt_keys (session_id, key, created, digest, message_id, response)
    SELECT k.s, k.k, {NOW}, k.d, k.m, k.r
    FROM unnest(%(key_sessions)s::text[], %(keys)s::text[], %(digests)s::text[],
                %(message_ids)s::text[], %(responses)s::bytea[]) AS k(s, k, d, m, r)
    ON CONFLICT DO NOTHING
)
UPDATE acp2_sessions AS x SET updated_at = %(now)s,
    title = CASE WHEN t.retitle THEN t.title ELSE x.title END
FROM unnest(%(touched)s::text[], %(retitle)s::boolean[], %(titles)s::text[])
    AS t(id, retitle, title)
WHERE x.id = t.id
"""

#: The common flush (one session's rows, no title, no key) as :data:`FLUSH` without the
#: arrays, which cost the client and the planner about twice as much as the statement.
FLUSH_ROW: Final = f"""
WITH seq AS (
    INSERT INTO acp2_next_seq (session_id, next) VALUES (%(id)s, 1)
    {_NEXT_SEQ}
), rows AS (
    INSERT INTO acp2_updates (session_id, seq, body) SELECT %(id)s, seq, %(body)s FROM seq
)
UPDATE acp2_sessions SET updated_at = %(now)s WHERE id = %(id)s
"""
#: The statements PostgreSQL shares with SQLite (:mod:`acp2.store.sql`): sessions, stored
#: rows, ledger lookups and trims, dropping a lease.
SHARED: Final = statements(POSTGRES)

# Leases (acp2.store.leasing): the expiry is the database's clock plus the ttl.
FIND_LEASE: Final = (
    f"SELECT owner, host, pid, expires_at < {NOW} FROM acp2_leases WHERE session_id = %s"
)
TAKE_LEASE: Final = (
    f"INSERT INTO acp2_leases VALUES (%s, %s, %s, %s, {NOW} + %s) ON CONFLICT (session_id)"
    " DO UPDATE SET owner = EXCLUDED.owner, host = EXCLUDED.host, pid = EXCLUDED.pid,"
    " expires_at = EXCLUDED.expires_at"
)
RENEW_LEASES: Final = f"UPDATE acp2_leases SET expires_at = {NOW} + %s WHERE owner = %s"


#: Seconds to wait for a connection, unless the URL says (libpq's default is forever,
#: and a flush runs on the event loop).
CONNECT_TIMEOUT: Final = 10
#: Bounds a wait for another connection's lock (a hung node's transaction), unless the
#: URL's options set one; the error is retried (acp2.store.postgres).
_LOCK_TIMEOUT: Final = (
    "SELECT set_config('lock_timeout', '5s', false) WHERE current_setting('lock_timeout') = '0'"
)


def connect(url: str) -> psycopg.Connection[Any]:
    """A new autocommit connection to ``url`` (transactions are explicit), with bounded
    waits for the connection (:data:`CONNECT_TIMEOUT`) and for locks (5 s)."""
    import psycopg  # here, not at the top: this module is imported before the check

    options: dict[str, Any] = {}
    if "connect_timeout" not in url:
        options["connect_timeout"] = CONNECT_TIMEOUT
    db = psycopg.connect(url, autocommit=True, **options)
    db.execute(_LOCK_TIMEOUT)
    return db


def create_schema(db: psycopg.Connection[Any]) -> None:
    """Create the tables that are missing (one process at a time: ``CREATE TABLE IF NOT
    EXISTS`` run by two at once can fail on the catalog's unique index)."""
    with db.transaction():
        db.execute(_LOCK_SCHEMA)
        for statement in SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
