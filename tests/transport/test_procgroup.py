"""The one process-group shutdown, against real subprocesses and their grandchildren."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process

from acp2.transport.procgroup import StopOutcome, group_alive, stop_group
from helpers.timeouts import PROCESS_TIMEOUT as TIMEOUT

pytestmark = pytest.mark.anyio


#: Exits as soon as its stdin is closed.
POLITE = "import sys; print('ready', flush=True); sys.stdin.read()"
#: Outlives the end of its stdin; SIGTERM ends it.
DEAF = "import sys, time; print('ready', flush=True); sys.stdin.read(); time.sleep(60)"
#: Outlives the end of its stdin and ignores SIGTERM: only SIGKILL ends it.
STUBBORN = (
    "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('ready', flush=True); sys.stdin.read(); time.sleep(60)"
)
#: Starts a helper in its group that outlives it (see the script).
HELPER_PARENT = [sys.executable, str(Path(__file__).parents[1] / "support" / "helper_parent.py")]


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


async def start(argv: list[str], *, own_group: bool = True) -> Process:
    return await anyio.open_process(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=own_group,
    )


async def first_line(process: Process) -> bytes:
    assert process.stdout is not None
    data = b""
    while not data.endswith(b"\n"):
        data += await process.stdout.receive()
    return data.strip()


async def stop(process: Process, **timings: float) -> tuple[StopOutcome, float]:
    assert process.stdin is not None
    started = time.monotonic()
    outcome = await stop_group(process, process.stdin.aclose, **timings)
    return outcome, time.monotonic() - started


def live(pid: int) -> bool:
    """True while ``pid`` runs (a zombie left to an adoptive parent does not run)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def assert_reaped(pid: int) -> None:
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    assert not Path(f"/proc/{pid}").exists(), "the child is still around (zombie?)"


async def test_a_child_that_exits_at_end_of_stdin_is_reaped_without_any_signal() -> None:
    with anyio.fail_after(TIMEOUT):
        process = await start(python(POLITE))
        await first_line(process)
        outcome, took = await stop(process, grace=5.0)
    assert outcome == "exited"
    assert process.returncode == 0
    assert took < 5.0
    assert_reaped(process.pid)
    assert not group_alive(process.pid)


async def test_a_child_that_ignores_end_of_stdin_gets_sigterm_after_the_grace() -> None:
    with anyio.fail_after(TIMEOUT):
        process = await start(python(DEAF))
        await first_line(process)
        outcome, took = await stop(process, grace=0.3, term_grace=5.0)
    assert outcome == "terminated"
    assert process.returncode == -15
    assert 0.3 <= took < 5.0
    assert_reaped(process.pid)


async def test_a_child_that_ignores_sigterm_is_killed_within_the_bounded_total() -> None:
    with anyio.fail_after(TIMEOUT):
        process = await start(python(STUBBORN))
        await first_line(process)
        outcome, took = await stop(process, grace=0.2, term_grace=0.3, kill_wait=5.0)
    assert outcome == "killed"
    assert process.returncode == -9
    assert 0.5 <= took < 0.5 + 5.0
    assert_reaped(process.pid)
    assert not group_alive(process.pid)


@pytest.mark.parametrize(("ignores_term", "expected"), [(False, "terminated"), (True, "killed")])
async def test_a_helper_left_in_the_group_is_stopped_as_soon_as_the_child_has_exited(
    ignores_term: bool, expected: StopOutcome
) -> None:
    with anyio.fail_after(TIMEOUT):
        flags = ["--helper-ignores-term"] if ignores_term else []
        process = await start([*HELPER_PARENT, *flags])
        helper = int(await first_line(process))
        outcome, took = await stop(process, grace=5.0, term_grace=0.3)
    assert outcome == expected
    assert process.returncode == 0
    assert took < 5.0, "the group is signalled once the child is gone, not after the grace"
    assert_reaped(process.pid)
    assert not live(helper)
    assert not group_alive(process.pid)


async def test_a_stdin_close_that_never_completes_still_counts_against_the_grace() -> None:
    with anyio.fail_after(TIMEOUT):
        process = await start(python(DEAF))
        await first_line(process)
        started = time.monotonic()
        outcome = await stop_group(process, anyio.sleep_forever, grace=0.3, term_grace=5.0)
        took = time.monotonic() - started
    assert outcome == "terminated"
    assert 0.3 <= took < 5.0
    assert_reaped(process.pid)


async def test_stopping_a_child_that_already_exited_returns_at_once() -> None:
    with anyio.fail_after(TIMEOUT):
        process = await start(python("pass"))
        await process.wait()
        outcome, took = await stop(process)
    assert outcome == "exited"
    assert took < 1.0


async def test_the_shutdown_completes_inside_a_cancelled_scope() -> None:
    with anyio.fail_after(TIMEOUT):
        process = await start(python(DEAF))
        await first_line(process)
        with anyio.CancelScope() as scope:
            scope.cancel()
            outcome, _ = await stop(process, grace=0.1, term_grace=5.0)
    assert outcome == "terminated"
    assert_reaped(process.pid)


async def test_a_child_in_our_own_process_group_is_refused_not_signalled() -> None:
    with anyio.fail_after(TIMEOUT):
        process = await start(python(POLITE), own_group=False)
        await first_line(process)
        with pytest.raises(ValueError, match="own process group"):
            await stop_group(process)
        assert process.stdin is not None
        await process.stdin.aclose()
        assert await process.wait() == 0


def test_a_group_whose_only_member_is_a_zombie_counts_as_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    try:
        # Wait for the exit but leave the zombie in place (WNOWAIT does not reap).
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
        os.killpg(child.pid, 0)  # the kernel still lists the group
        assert not group_alive(child.pid)
    finally:
        child.wait()
    assert not group_alive(child.pid)
