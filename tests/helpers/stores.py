"""The two session-store backends, behind one test fixture (``store_backend`` in
tests/conftest.py): the same store tests run on SQLite and on PostgreSQL.

A :class:`Backend` opens stores on one database (:meth:`Backend.open`: a second call is a
second process's view of it), gives the spec an agent subprocess is started with
(``--store``), and runs raw SQL on the database behind the store's back (what another
process, or a failing disk, would do).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from acp2.agent import HistoryStore
from acp2.store import SessionStore

__all__ = ["Backend"]

#: Makes every insert of an update row fail, per backend (a full disk, a broken server).
_FAIL_INSERTS = {
    "sqlite": (
        "CREATE TRIGGER fail BEFORE INSERT ON updates BEGIN SELECT RAISE(ABORT, 'full'); END",
    ),
    "postgres": (
        "CREATE FUNCTION acp2_fail() RETURNS trigger LANGUAGE plpgsql"
        " AS $$ BEGIN RAISE EXCEPTION 'full'; END $$",
        "CREATE TRIGGER fail BEFORE INSERT ON acp2_updates"
        " FOR EACH ROW EXECUTE FUNCTION acp2_fail()",
    ),
}
_HEAL = {"sqlite": ("DROP TRIGGER fail",), "postgres": ("DROP TRIGGER fail ON acp2_updates",)}


class Backend:
    """One database of one backend (``name`` is ``"sqlite"`` or ``"postgres"``)."""

    def __init__(self, name: str, spec: str) -> None:
        self.name = name
        self.spec = spec

    def open(self, **options: Any) -> SessionStore:
        """A new store on this database (``lease_ttl=`` ... as the store takes them)."""
        if self.name == "sqlite":
            return HistoryStore(self.spec, **options)
        from acp2.store.postgres import PostgresStore

        return PostgresStore(self.spec, **options)

    def table(self, name: str) -> str:
        """The name of a store table (``updates``, ``leases`` ...) in this backend."""
        return name if self.name == "sqlite" else f"acp2_{name}"

    def execute(self, *statements: str) -> list[tuple[Any, ...]]:
        """Run ``statements`` on the database through a connection of their own (committed);
        return the rows of the last."""
        if self.name == "sqlite":
            db = sqlite3.connect(self.spec, isolation_level=None)
            try:
                rows: list[tuple[Any, ...]] = []
                for statement in statements:
                    rows = db.execute(statement).fetchall()
                return rows
            finally:
                db.close()
        import psycopg

        with psycopg.connect(self.spec, autocommit=True) as pg:
            result: list[tuple[Any, ...]] = []
            for statement in statements:
                cursor = pg.execute(statement)
                result = cursor.fetchall() if cursor.description else []
            return result

    def expire_leases(self) -> None:
        """Make every lease look lapsed (its owner stopped renewing it)."""
        self.execute(f"UPDATE {self.table('leases')} SET expires_at = 0")

    def fail_inserts(self) -> None:
        """Make every insert of an update row fail until :meth:`heal`."""
        self.execute(*_FAIL_INSERTS[self.name])

    def heal(self) -> None:
        """Undo :meth:`fail_inserts`."""
        self.execute(*_HEAL[self.name])


def sqlite_backend(folder: Path) -> Backend:
    """A SQLite file in ``folder``."""
    return Backend("sqlite", str(folder / "history.sqlite3"))
