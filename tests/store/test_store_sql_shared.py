"""SQLite lives beside PostgreSQL in acp2.store, and the SQL the two read alike is written once.

Every string constant that starts like a statement (SELECT, INSERT, UPDATE, DELETE) is
collected from the SQLite modules and from the PostgreSQL ones, normalized to one dialect
(the ``acp2_`` table prefix dropped, ``%s`` read as ``?``); a statement found on both
sides is a copy that belongs in :mod:`acp2.store.sql`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "acp2"
STATEMENT = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE) ")


def _sqlite_modules() -> list[Path]:
    """Every module of acp2 that talks to SQLite (imports sqlite3)."""
    return [p for p in sorted(SRC.rglob("*.py")) if "import sqlite3" in p.read_text()]


def _postgres_modules() -> list[Path]:
    store = SRC / "store"
    return [store / "postgres.py", *sorted(store.glob("pg_*.py"))]


def _statements(paths: list[Path]) -> dict[str, str]:
    """Normalized statement -> where it is written."""
    found: dict[str, str] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            value = node.value if isinstance(node, ast.Constant) else None
            if isinstance(value, str) and STATEMENT.match(value):
                text = " ".join(value.replace("acp2_", "").replace("%s", "?").split())
                found[text] = f"{path.relative_to(SRC.parent)}:{getattr(node, 'lineno', 0)}"
    return found


def test_every_module_that_opens_sqlite_is_in_the_store_package() -> None:
    outside = [p.relative_to(SRC).as_posix() for p in _sqlite_modules()]
    assert [p for p in outside if not p.startswith("store/")] == []


def test_no_statement_is_written_for_both_databases() -> None:
    sqlite, postgres = _statements(_sqlite_modules()), _statements(_postgres_modules())
    assert sqlite, "no SQLite statement found: the scan is broken"
    twice = {s: (sqlite[s], postgres[s]) for s in sqlite.keys() & postgres.keys()}
    assert twice == {}


@pytest.mark.parametrize("name", ["statements", "list_query", "record", "row_batches"])
def test_both_stores_use_the_shared_sql(name: str) -> None:
    sqlite = (SRC / "store" / "sqlite.py").read_text()
    postgres = (SRC / "store" / "postgres.py").read_text() + (
        SRC / "store" / "pg_sql.py"
    ).read_text()
    assert name in sqlite
    assert name in postgres
