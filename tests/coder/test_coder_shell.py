"""run_command: streamed output, exit status, time limit, and killing the process group."""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path

import anyio
import pytest
from coder_helpers import group_alive, group_members, wait_gone

from acp2.coder.tools.confine import CommandPolicy
from acp2.coder.tools.shell import run_command

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups"),
]


class Sink:
    """Collects output; ``seen(text)`` waits until ``text`` has arrived."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.exits: list[tuple[int | None, str | None]] = []
        self._changed = anyio.Event()

    async def write(self, data: bytes) -> None:
        self.data.extend(data)
        self._changed.set()
        self._changed = anyio.Event()

    async def exit(self, exit_code: int | None = None, signal: str | None = None) -> None:
        self.exits.append((exit_code, signal))

    async def seen(self, text: str) -> None:
        while text.encode() not in self.data:
            await self._changed.wait()


#: Commands without a sandbox (the process-group behaviour the sandbox builds on).
UNCONFINED = CommandPolicy(sandbox="none")

needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")


async def test_output_streams_while_the_command_runs(tmp_path: Path) -> None:
    fifo = tmp_path / "gate"
    os.mkfifo(fifo)
    sink = Sink()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            results = []

            async def run() -> None:
                results.append(
                    await run_command(
                        "echo first; cat gate; echo second",
                        cwd=str(tmp_path),
                        time_limit=10,
                        sink=sink,
                    )
                )

            tg.start_soon(run)
            await sink.seen("first")
            assert not sink.exits  # still running: the output came live
            await anyio.to_thread.run_sync(fifo.write_text, "go\n")
    result = results[0]
    assert result.ok
    assert result.exit_code == 0
    assert result.output == "first\ngo\nsecond\n"
    assert sink.exits == [(0, None)]


async def test_stderr_is_merged_and_the_exit_status_reported(tmp_path: Path) -> None:
    sink = Sink()
    with anyio.fail_after(10):
        result = await run_command(
            "echo out; echo err >&2; exit 3", cwd=str(tmp_path), time_limit=10, sink=sink
        )
    assert (result.exit_code, result.ok, result.timed_out) == (3, False, False)
    assert set(result.output.split()) == {"out", "err"}
    assert sink.exits == [(3, None)]


async def test_the_command_runs_in_the_given_directory(tmp_path: Path) -> None:
    with anyio.fail_after(10):
        result = await run_command("pwd", cwd=str(tmp_path), time_limit=10, sink=Sink())
    assert result.output == f"{tmp_path}\n"


async def test_a_command_over_its_time_limit_is_stopped(tmp_path: Path) -> None:
    sink = Sink()
    with anyio.fail_after(10):
        result = await run_command("sleep 30", cwd=str(tmp_path), time_limit=0.2, sink=sink)
    assert result.timed_out
    assert result.signal == "SIGTERM"
    assert sink.exits == [(None, "SIGTERM")]


@needs_proc
async def test_a_command_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    sink = Sink()
    with anyio.fail_after(10):
        result = await run_command(
            "trap '' TERM; echo ready; sleep 30",
            cwd=str(tmp_path),
            time_limit=0.3,
            sink=sink,
            grace=0.2,
            policy=UNCONFINED,
        )
    assert result.timed_out
    assert result.signal == "SIGKILL"


@needs_proc
async def test_cancelling_kills_the_whole_process_group(tmp_path: Path) -> None:
    sink = Sink()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                partial(
                    run_command,
                    "sleep 60 & echo pgid $$; wait",
                    cwd=str(tmp_path),
                    time_limit=60,
                    sink=sink,
                    policy=UNCONFINED,
                )
            )
            await sink.seen("pgid ")
            await sink.seen("\n")
            pgid = int(sink.data.decode().split()[1])
            members = group_members(pgid)
            assert len(members) == 2  # the shell and its background sleep
            tg.cancel_scope.cancel()
        await wait_gone(members)
    assert not group_alive(pgid)
    assert len(sink.exits) == 1
    assert sink.exits[0][1] in ("SIGTERM", "SIGKILL")


@needs_proc
async def test_background_leftovers_do_not_outlive_the_command(tmp_path: Path) -> None:
    fifo = tmp_path / "gate"
    os.mkfifo(fifo)
    sink = Sink()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            results = []

            async def run() -> None:
                command = "sleep 60 & echo pgid $$; cat gate > /dev/null"
                results.append(
                    await run_command(
                        command, cwd=str(tmp_path), time_limit=60, sink=sink, policy=UNCONFINED
                    )
                )

            tg.start_soon(run)
            await sink.seen("\n")
            pgid = int(sink.data.decode().split()[1])
            members = group_members(pgid)
            await anyio.to_thread.run_sync(fifo.write_text, "go\n")  # the shell exits: 0
        await wait_gone(members)
    assert results[0].exit_code == 0
    assert not group_alive(pgid)
