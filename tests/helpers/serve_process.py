"""Starting an ``acp2 serve`` subprocess and waiting for it to listen, with its stderr
kept for failures."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from helpers.timeouts import PROCESS_TIMEOUT

__all__ = ["listening_port", "serving"]

_LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)/acp")


def listening_port(
    process: subprocess.Popen[str],
    sink: list[str],
    name: str = "acp2 serve",
    *,
    lines: queue.Queue[str] | None = None,
) -> int:
    """The port ``process`` (an ``acp2 serve`` with ``stderr=PIPE``, text) says it listens
    on. A thread keeps draining its stderr into ``sink`` for the process's life, so a
    failure message can quote it; fails the test if the process exits first or says
    nothing within :data:`PROCESS_TIMEOUT`. ``lines``, when given, gets every line too
    (``""`` once stderr ends): a test waits on it for what the server logs later."""
    found_lines: queue.Queue[str] = queue.Queue() if lines is None else lines

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            sink.append(line)
            found_lines.put(line)
        found_lines.put("")

    threading.Thread(target=drain, daemon=True).start()
    deadline = time.monotonic() + PROCESS_TIMEOUT
    while True:
        line = found_lines.get(timeout=max(0.0, deadline - time.monotonic()))
        found = _LISTENING.search(line)
        if found:
            return int(found.group(1))
        assert line, f"{name} exited: {''.join(sink)[-2000:]}"


@contextlib.contextmanager
def serving(cwd: Path, *args: str, sink: list[str] | None = None) -> Iterator[int]:
    """``acp2 serve --no-token --port 0 ARGS`` on 127.0.0.1, run in ``cwd`` with its data
    under ``cwd/data`` and no ``ACP2_TOKEN`` inherited; yields its port. Its stderr lines
    go to ``sink`` when given. Stopped (and awaited) when the block ends."""
    env = dict(os.environ, ACP2_DATA_DIR=str(cwd / "data"))
    env.pop("ACP2_TOKEN", None)
    argv = [sys.executable, "-m", "acp2", "serve", "--no-token", "--port", "0", *args]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    try:
        yield listening_port(process, [] if sink is None else sink)
    finally:
        process.terminate()
        process.wait(PROCESS_TIMEOUT)
