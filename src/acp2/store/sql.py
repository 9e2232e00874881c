"""The SQL both session stores speak, written once and rendered per dialect.

SQLite and PostgreSQL read the same statements for sessions, stored rows, the ledger's
lookups, leases and stream cursors; they differ only in the table prefix (PostgreSQL's tables are
``acp2_*`` so they can share a database), the parameter mark (``?`` / ``%s``) and two
spellings (a false boolean, a NULL-safe equality). :class:`Dialect` names exactly those
differences; :func:`statements` renders the shared statements from one. What really
differs -- the schemas, the flush (SQLite numbers rows with a subquery, PostgreSQL with
a counter upsert), the lease upsert and clock -- stays in each backend's own module
(:mod:`acp2.store.sqlite`, :mod:`acp2.store.pg_sql`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from acp2.store.base import ANYONE, Batches, Owner, PromptEntry, SessionRecord

__all__ = [
    "POSTGRES",
    "SESSION_COLUMNS",
    "SQLITE",
    "Dialect",
    "Statements",
    "list_query",
    "prompt_entry",
    "record",
    "row_batches",
    "statements",
]

#: The columns of a session record, in :func:`record`'s order.
SESSION_COLUMNS: Final = (
    "id, cwd, additional_directories, title, created_at, updated_at, data, principal"
)


@dataclass(frozen=True)
class Dialect:
    """What one database spells differently in the shared statements."""

    prefix: str
    mark: str
    live: str
    same_principal: str


SQLITE: Final = Dialect(prefix="", mark="?", live="deleted = 0", same_principal="principal IS ?")
POSTGRES: Final = Dialect(
    prefix="acp2_",
    mark="%s",
    live="NOT deleted",
    same_principal="principal IS NOT DISTINCT FROM %s",  # NULL: the local user's
)


@dataclass(frozen=True)
class Statements:
    """The shared statements, rendered for one :class:`Dialect` (see :func:`statements`)."""

    dialect: Dialect
    insert_session: str
    get_session: str
    last_seq: str
    rows: str
    find_key: str
    trim_keys: str
    delete_updates: str
    delete_keys: str
    drop_lease: str
    delete_cursor: str

    def update_session(self, columns: Sequence[str]) -> str:
        """``UPDATE`` of ``columns`` (from :func:`~acp2.store.base.session_changes`) by id."""
        mark = self.dialect.mark
        sets = ", ".join(f"{column} = {mark}" for column in columns)
        return f"UPDATE {self.dialect.prefix}sessions SET {sets} WHERE id = {mark}"


def statements(d: Dialect) -> Statements:
    """Render the shared statements for dialect ``d``."""
    p, m = d.prefix, d.mark
    return Statements(
        dialect=d,
        insert_session=(
            f"INSERT INTO {p}sessions"
            " (id, cwd, additional_directories, created_at, updated_at, principal)"
            f" VALUES ({m}, {m}, {m}, {m}, {m}, {m})"
        ),
        get_session=f"SELECT {SESSION_COLUMNS} FROM {p}sessions WHERE id = {m} AND {d.live}",
        last_seq=f"SELECT MAX(seq) FROM {p}updates WHERE session_id = {m}",
        rows=(
            f"SELECT seq, body FROM {p}updates WHERE session_id = {m} AND seq > {m}"
            f" AND seq <= {m} ORDER BY seq LIMIT {m}"
        ),
        find_key=(
            f"SELECT digest, message_id, response FROM {p}prompt_keys"
            f" WHERE session_id = {m} AND key = {m}"
        ),
        # What is older than the session's ``keep``-th newest key (nothing if fewer).
        trim_keys=(
            f"DELETE FROM {p}prompt_keys WHERE session_id = {m} AND created < (SELECT created"
            f" FROM {p}prompt_keys WHERE session_id = {m} ORDER BY created DESC LIMIT 1 OFFSET {m})"
        ),
        delete_updates=f"DELETE FROM {p}updates WHERE session_id = {m}",
        delete_keys=f"DELETE FROM {p}prompt_keys WHERE session_id = {m}",
        drop_lease=f"DELETE FROM {p}leases WHERE session_id = {m} AND owner = {m}",
        delete_cursor=f"DELETE FROM {p}stream_cursors WHERE id = {m}",
    )


def list_query(
    sql: Statements,
    *,
    cwd: str | None,
    after: tuple[str, str] | None,
    limit: int,
    principal: Owner,
) -> tuple[str, list[Any]]:
    """The ``session/list`` page query and its parameters: live sessions, newest update
    first, after the ``(updated_at, id)`` cursor key, of one principal unless ANYONE."""
    d, m = sql.dialect, sql.dialect.mark
    where, args = [d.live], list[Any]()
    if principal is not ANYONE:
        where.append(d.same_principal)
        args.append(principal)
    if cwd is not None:
        where.append(f"cwd = {m}")
        args.append(cwd)
    if after is not None:
        where.append(f"(updated_at < {m} OR (updated_at = {m} AND id > {m}))")
        args.extend([after[0], after[0], after[1]])
    query = (
        f"SELECT {SESSION_COLUMNS} FROM {d.prefix}sessions WHERE {' AND '.join(where)}"
        f" ORDER BY updated_at DESC, id ASC LIMIT {m}"
    )
    return query, [*args, limit]


def record(row: Sequence[Any]) -> SessionRecord:
    """The :class:`SessionRecord` of a row selected with :data:`SESSION_COLUMNS`."""
    return SessionRecord(
        id=row[0],
        cwd=row[1],
        additional_directories=list(json.loads(row[2])),
        title=row[3],
        created_at=row[4],
        updated_at=row[5],
        data=dict(json.loads(row[6] or "{}")),
        principal=row[7],
    )


def prompt_entry(session_id: str, key: str, row: Sequence[Any] | None) -> PromptEntry | None:
    """The ledger entry of a row selected by :attr:`Statements.find_key`, or None."""
    if row is None:
        return None
    return PromptEntry(session_id, key, row[0], row[1], bytes(row[2]))


#: ``execute(statement, parameters)`` of a DB-API connection (sqlite3 or psycopg).
Execute = Callable[[str, Sequence[Any]], Any]


def row_batches(execute: Execute, sql: Statements, session_id: str, rows: int) -> Batches:
    """The session's rows in batches of ``rows``, oldest first, up to the last row stored
    when it starts; each batch is one complete statement (none stays open between)."""
    found = execute(sql.last_seq, (session_id,)).fetchone()
    last = found[0] if found else None
    after = -1
    while last is not None and after < last:
        batch = execute(sql.rows, (session_id, after, last, rows)).fetchall()
        if not batch:
            return
        after = batch[-1][0]
        yield [bytes(body) for _, body in batch]
