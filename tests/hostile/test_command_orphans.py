"""Attack: a model starts a long command (with a background child), then the agent goes
away -- SIGTERM, SIGKILL or the end of its stdin.

Before the fix the commands kept running (their own session, no signal handling). Now
SIGTERM/SIGINT/EOF stop every command's process group before the agent exits; SIGKILL is
covered by the kernel's parent-death signal plus the reaper's watchdog (unconfined,
Landlock) or by bubblewrap's pid namespace (which also takes daemons that ``setsid``).
"""

from __future__ import annotations

import os
import signal
import sys
import uuid
from pathlib import Path

import anyio
import pytest

from acp2.schema import TerminalOutputChunk
from hostile.command_agent import (
    SANDBOXED,
    TIMEOUT,
    agent_argv,
    agent_env,
    pids_running,
    running_agent,
    serve,
    tool_reply,
    wait_gone,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux processes and /proc"),
]

MODES = ["none", *SANDBOXED]


def long_command(marker: str, *, daemon: bool = False) -> str:
    """A command of three long background sleeps (one maybe in a new session), marked so
    the test finds them on the host; it says ``ready`` once all three have started."""
    sleep = f"sleep 600.{marker}"
    third = f"setsid {sleep}" if daemon else sleep
    # comm, not cmdline: a forked child shows the whole command line (which names sleep)
    # until it execs, so only comm says the sleep itself runs.
    started = 'until [ "$(cat /proc/$p/comm 2>/dev/null)" = sleep ]; do :; done'
    return (
        f"{sleep} & a=$!; {sleep} & b=$!; {third} & c=$!; "
        f"for p in $a $b $c; do {started}; done; echo ready; wait"
    )


async def start_and_stop(tmp_path: Path, sandbox: str, stop: str, *, daemon: bool = False) -> int:
    """Run the long command in a real agent, stop the agent the ``stop`` way once the
    command runs; return the agent's exit status. Leaves the command's pids to check."""
    project = tmp_path / "project"
    project.mkdir()
    marker = str(uuid.uuid4().int)[:12]
    with serve() as fake:
        command = long_command(marker, daemon=daemon)
        fake.add(tool_reply([("c1", "run_command", {"command": command})]))
        argv = agent_argv(fake, tmp_path / "h.db", "--command-sandbox", sandbox)
        with anyio.fail_after(TIMEOUT):
            async with running_agent(argv, agent_env(), project, grace=15) as (proc, client):
                session = await client.new_session(str(project))
                work = await session.prompt("run it")
                async for update in work:
                    if isinstance(update, TerminalOutputChunk):
                        break  # "ready": the sleeps have started
                pids = pids_running("sleep", f"600.{marker}")
                assert len(pids) == 3
                if stop != "eof":
                    os.kill(proc.pid, signal.SIGTERM if stop == "sigterm" else signal.SIGKILL)
            # leaving the block closed the agent's stdin and waited for it to exit
            await wait_gone(pids)
    assert not pids_running("sleep", f"600.{marker}")
    assert proc.returncode is not None
    return proc.returncode


@pytest.mark.parametrize("sandbox", MODES)
async def test_sigterm_to_the_agent_stops_its_running_command(tmp_path: Path, sandbox: str) -> None:
    assert await start_and_stop(tmp_path, sandbox, "sigterm") == 128 + signal.SIGTERM


@pytest.mark.parametrize("sandbox", MODES)
async def test_end_of_input_stops_the_running_command(tmp_path: Path, sandbox: str) -> None:
    assert await start_and_stop(tmp_path, sandbox, "eof") == 0


@pytest.mark.parametrize("sandbox", MODES)
async def test_sigkill_of_the_agent_still_kills_its_command(tmp_path: Path, sandbox: str) -> None:
    assert await start_and_stop(tmp_path, sandbox, "sigkill") == -signal.SIGKILL


@pytest.mark.parametrize("sandbox", SANDBOXED[:1])
async def test_under_bubblewrap_even_a_setsid_daemon_dies_with_the_agent(
    tmp_path: Path, sandbox: str
) -> None:
    assert await start_and_stop(tmp_path, sandbox, "sigkill", daemon=True) == -signal.SIGKILL
