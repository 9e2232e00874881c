"""The store seam (src/acp2/store): which store a spec opens, the layer rule, the shared
lease settings. The behaviour of each backend is tested on both in tests/agent and
tests/hostile (the ``store_backend`` fixture)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import acp2.store
from acp2.agent import Agent, HistoryStore
from acp2.agent.runtime import open_store
from acp2.store import SessionStore, is_database_url
from acp2.store.leasing import LEASE_TTL, LEASE_TTL_ENV, NODE_ENV, default_lease_ttl, node_name
from helpers import timeouts

STORE = Path(acp2.store.__file__).parent


def test_only_postgresql_urls_select_the_database_store() -> None:
    assert is_database_url("postgresql://u@host/db")
    assert is_database_url("postgres://u@host/db")
    assert not is_database_url("/tmp/postgresql://x")
    assert not is_database_url(Path("postgresql:/x"))
    assert not is_database_url(None)


def test_a_path_opens_sqlite_and_a_store_object_is_used_as_it_is(tmp_path: Path) -> None:
    opened = open_store(str(tmp_path / "h.sqlite3"), "a")
    assert isinstance(opened, HistoryStore)
    opened.close()
    mine = HistoryStore(":memory:")
    assert open_store(mine, "a") is mine
    assert Agent("x", store=mine).history() is mine


def test_the_sqlite_store_is_a_session_store() -> None:
    store: SessionStore = HistoryStore(":memory:")  # mypy checks the protocol here
    assert store.on_disk is False


def test_the_lease_ttl_and_node_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(LEASE_TTL_ENV, "2.5")
    assert default_lease_ttl() == 2.5
    store = open_store(str(tmp_path / "h.sqlite3"), "a")
    assert isinstance(store, HistoryStore)
    assert store.leases.ttl == 2.5
    store.close()
    for bad in ("-1", "0", "soon"):
        monkeypatch.setenv(LEASE_TTL_ENV, bad)
        assert default_lease_ttl() == LEASE_TTL
    monkeypatch.setenv(NODE_ENV, "node-7")
    assert node_name() == "node-7"
    assert HistoryStore(":memory:").leases.owner.startswith("node-7:")


def test_a_postgresql_store_without_psycopg_says_which_extra_to_install() -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None\n"  # as if it were not installed
        "from acp2.agent.runtime import open_store\n"
        "try:\n"
        "    open_store('postgresql://u@/db?host=/nowhere', 'a')\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeouts.RUN_TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    assert "postgres extra" in done.stdout


def _acp2_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("acp2.")}


@pytest.mark.parametrize("path", sorted(STORE.glob("*.py")), ids=lambda p: p.name)
def test_the_store_layer_imports_no_layer_above_it(path: Path) -> None:
    # acp2.rpc.guarded: the sans-IO core's bounded decode (below store, tests/test_layers.py).
    allowed = ("acp2.store", "acp2.errors", "acp2.schema", "acp2.rpc.guarded")
    assert {m for m in _acp2_imports(path) if not m.startswith(allowed)} == set()
