"""A throwaway PostgreSQL cluster for the tests of the PostgreSQL store.

:func:`find_binaries` looks for ``initdb`` / ``pg_ctl`` / ``postgres`` (on PATH, else in
Debian's ``/usr/lib/postgresql/<version>/bin``). :class:`Cluster` runs one in a fresh
temporary folder, listening only on a unix socket there (no TCP port to collide on), and
stops it at the end. initdb refuses to run as root, so as root the cluster belongs to
``nobody`` (its folder is handed over with ``chown`` and the programs run through
``runuser``); any other user runs it as itself. The cluster is tuned for tests (no fsync):
a crashed machine may lose it, which is fine for data thrown away at the end.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["Cluster", "find_binaries"]

#: The database superuser the tests connect as (initdb -U).
SUPERUSER = "acp2"
#: The database the tests' schemas are made in.
TEST_DATABASE = "acp2_tests"
_SETTINGS = (
    "fsync=off",
    "synchronous_commit=off",
    "full_page_writes=off",
    "listen_addresses=''",
    "max_connections=200",
    "shared_buffers=16MB",
)


def find_binaries() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres, or None when PostgreSQL is absent."""
    on_path = shutil.which("initdb")
    candidates = [str(Path(on_path).parent)] if on_path else []
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for folder in candidates:
        if all(os.access(Path(folder, n), os.X_OK) for n in ("initdb", "pg_ctl", "postgres")):
            return Path(folder)
    return None


class Cluster:
    """One running cluster: :meth:`start`, :meth:`create_database` (one per test),
    :meth:`stop`."""

    def __init__(self, binaries: Path) -> None:
        self.binaries = binaries
        self.root = Path(tempfile.mkdtemp(prefix="acp2-pg-"))
        self.data = self.root / "data"
        self.socket_dir = self.root
        self._as_nobody = os.geteuid() == 0
        self._databases = 0  # how many create_database made

    def _run(self, *argv: str) -> None:
        command = [str(self.binaries / argv[0]), *argv[1:]]
        if self._as_nobody:
            command = ["runuser", "-u", "nobody", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed ({result.returncode}): {result.stderr[-2000:]}")

    def start(self) -> None:
        """initdb and start the server; returns once it accepts connections."""
        if self._as_nobody:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.root, nobody.pw_uid, nobody.pw_gid)
        self._run(
            "initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "-N"
        )
        options = " ".join(f"-c {s}" for s in _SETTINGS)
        options += f" -k {self.socket_dir}"
        log = str(self.root / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-l", log, "-o", options, "-w", "start")
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(f"CREATE DATABASE {TEST_DATABASE}")

    def url(self, database: str = "postgres") -> str:
        """The libpq URL of ``database`` on this cluster (over its unix socket)."""
        return f"postgresql://{SUPERUSER}@/{database}?host={self.socket_dir}"

    def create_database(self) -> str:
        """Return the URL of a new, empty database of its own: a schema of its own in the
        cluster's one test database (``CREATE DATABASE`` copies a template and takes a
        second on a busy machine; a schema takes milliseconds and isolates as well: the
        URL puts it first on the ``search_path``, so the store's tables land in it)."""
        import psycopg

        self._databases += 1
        name = f"test_{self._databases}"
        with psycopg.connect(self.url(TEST_DATABASE), autocommit=True) as db:
            db.execute(f"CREATE SCHEMA {name}")
        return f"{self.url(TEST_DATABASE)}&options=-csearch_path%3D{name}"

    def stop(self) -> None:
        """Stop the server at once and delete its folder."""
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
