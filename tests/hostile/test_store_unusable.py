"""Attack: a corrupt, read-only or full history store (issue 24, item 9). The agent
answered ``initialize``, then died at ``session/new`` with "unexpected error ... bug in
acp2"; exiting while it could not write lost every queued update without a word. Now an
unusable store stops ``acp2 agent`` / ``acp2 test-agent`` at start-up with one line
naming the file and the reason (exit 2); a failure met later answers the request with a
JSON-RPC error naming the store; and updates that could not be stored by the exit are
counted on stderr (exit 1). The disk is made "full" for real: the agent's file-size limit
(``RLIMIT_FSIZE``) is lowered under it, so its writes fail in the kernel."""

from __future__ import annotations

import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp2.agent import HistoryStore
from acp2.errors import RequestError
from hostile.command_agent import running_agent
from hostile.store_helpers import TIMEOUT, agent_argv, raw_agent

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux resource limits"),
]

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "hostile", "version": "1"}},
}


def make_store(path: Path, sessions: int = 3) -> None:
    store = HistoryStore(path)
    for index in range(sessions):
        store.create_session(f"s{index}", "/tmp", [])
        for update in range(200):
            store.append(f"s{index}", b'{"sessionUpdate":"x","n":%d}' % update)
    store.flush()
    store.close()


def overwrite_page(path: Path, page: int, size: int = 1) -> None:
    """Fill ``size`` pages from the 1-based ``page`` with garbage (the header page kept)."""
    page_size = sqlite3.connect(path).execute("PRAGMA page_size").fetchone()[0]
    with path.open("r+b") as handle:
        handle.seek((page - 1) * page_size)
        handle.write(b"\xa5" * page_size * size)


def root_page(path: Path, table: str) -> int:
    db = sqlite3.connect(path)
    try:
        return int(
            db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
        )
    finally:
        db.close()


async def start(command: str, store: Path) -> subprocess.CompletedProcess[bytes]:
    """Run ``acp2 <command> --store store`` with an ``initialize`` on its stdin."""
    argv = [sys.executable, "-m", "acp2", command, "--store", str(store)]
    if command == "agent":
        argv += ["--model", "scripted"]
    with anyio.fail_after(TIMEOUT):
        return await anyio.run_process(
            argv, input=(json.dumps(INITIALIZE) + "\n").encode(), check=False
        )


def assert_one_clear_line(
    done: subprocess.CompletedProcess[bytes], store: Path, reason: str
) -> None:
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert str(store) in err
    assert reason in err
    assert "bug in acp2" not in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert done.stdout == b""  # nothing was promised before the store was known to work


@pytest.mark.parametrize("command", ["test-agent", "agent"])
async def test_a_corrupt_store_stops_the_agent_at_start_up_with_one_clear_line(
    tmp_path: Path, command: str
) -> None:
    store = tmp_path / "history.sqlite3"
    make_store(store)
    overwrite_page(store, 2, size=4)
    assert_one_clear_line(await start(command, store), store, "malformed")


@pytest.mark.parametrize("command", ["test-agent", "agent"])
async def test_a_file_that_is_not_a_database_is_refused_at_start_up(
    tmp_path: Path, command: str
) -> None:
    store = tmp_path / "notes.sqlite3"
    store.write_bytes(b"these are my notes, not a database\n" * 200)
    assert_one_clear_line(await start(command, store), store, "not a database")


@pytest.fixture(params=["file", "directory"])
def read_only_store(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """A store file, or the directory of a store not made yet, that nobody may write,
    root included (``chattr +i``); undone after."""
    folder = tmp_path / "data"
    folder.mkdir()
    store = folder / "frozen.sqlite3"
    frozen = store if request.param == "file" else folder
    if request.param == "file":
        make_store(store)
    if shutil.which("chattr") is None:
        pytest.skip("needs chattr")
    done = subprocess.run(["chattr", "+i", str(frozen)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip("this filesystem or user cannot set the immutable attribute")
    try:
        yield store
    finally:
        subprocess.run(["chattr", "-i", str(frozen)], capture_output=True, check=False)


async def test_a_read_only_store_is_refused_at_start_up(read_only_store: Path) -> None:
    done = await start("test-agent", read_only_store)
    assert_one_clear_line(done, read_only_store, "not permitted")


async def test_a_store_failing_after_start_answers_session_new_with_a_clear_error(
    tmp_path: Path,
) -> None:
    store = tmp_path / "history.sqlite3"
    make_store(store)
    overwrite_page(store, root_page(store, "leases"))  # passes the start-up probe
    async with raw_agent(agent_argv(store)) as agent:
        with anyio.fail_after(TIMEOUT), pytest.raises(RequestError) as caught:
            await agent.call("session/new", {"cwd": str(tmp_path), "additionalDirectories": []})
        listed = await agent.call("session/list", {})  # the agent still serves
    assert caught.value.code == -32603
    assert f"The session store {store} cannot be used" in caught.value.message
    assert "malformed" in caught.value.message
    assert "Internal error" not in caught.value.message
    assert {"s0", "s1", "s2"} <= {s["sessionId"] for s in listed["sessions"]}
    assert "bug in acp2" not in agent.process.stderr_tail()


async def test_updates_that_cannot_be_stored_by_the_exit_are_counted(tmp_path: Path) -> None:
    store = tmp_path / "full.sqlite3"
    with anyio.fail_after(TIMEOUT):
        async with running_agent(agent_argv(store), dict(os.environ), tmp_path) as (proc, client):
            session = await client.new_session(str(tmp_path))
            resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (4096, 4096))  # the disk is full
            flooded = await flood_or_refused(session, store)
        assert await proc.wait_stderr(TIMEOUT)
    err = proc.stderr_tail()
    assert proc.returncode == 1, err
    assert f"could not be written to the session store {store} and are lost" in err
    assert "bug in acp2" not in err
    count = int(err.split(" session update(s) could not be written")[0].rsplit(None, 1)[-1])
    assert count >= (4 * 300 if flooded else 1)  # the whole flood: four updates a round


async def flood_or_refused(session: Any, store: Path) -> bool:
    """Prompt ``flood 300``; True when the turn ran, False when the prompt was refused
    because the store had already failed (on the notifications that follow
    ``session/new``, if they were flushed after the limit was set)."""
    refused = ""
    try:
        await (await session.prompt("flood 300")).wait()
    except RequestError as exc:
        refused = exc.message
    assert not refused or f"The session store {store} cannot be used" in refused
    return not refused
