"""Abandoned worker threads are told to stop, and the long loops of the tools listen."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pytest

from acp2.coder.tools import Sandbox
from acp2.coder.tools.files import list_files, read_file
from acp2.coder.tools.search import search
from acp2.coder.tools.stopping import Stop, StoppedError, run_stoppable
from helpers import timeouts


@pytest.mark.anyio
async def test_cancelling_a_stoppable_run_returns_at_once_and_fires_stop() -> None:
    started, release = threading.Event(), threading.Event()
    stops: list[Stop] = []

    def work(stop: Stop) -> int:
        stops.append(stop)
        started.set()
        release.wait(10)
        return 1

    with anyio.fail_after(timeouts.TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_stoppable, work)
            await anyio.to_thread.run_sync(started.wait, 10)
            assert not stops[0]()
            tg.cancel_scope.cancel()
    assert stops[0]()  # the thread is told; the turn did not wait for it
    release.set()


@pytest.mark.anyio
async def test_a_finished_run_returns_its_result() -> None:
    with anyio.fail_after(timeouts.TIMEOUT):
        assert await run_stoppable(lambda stop: stop()) is False


def test_the_walks_and_the_line_skipping_stop_when_told(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n" * 10)
    sandbox = Sandbox(str(tmp_path))

    def stop() -> bool:
        return True

    with pytest.raises(StoppedError):
        list_files(sandbox, stop=stop)
    with pytest.raises(StoppedError):
        search(sandbox, "x", stop=stop)
    with pytest.raises(StoppedError):
        read_file(sandbox, "a.txt", offset=5, stop=stop)
    assert read_file(sandbox, "a.txt", limit=1, stop=stop).startswith("x\n")  # no skipping
