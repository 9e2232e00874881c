"""What the remote scenario's drivers share (stdlib only): the server subprocess, and the
CPU and memory of a process read from ``/proc``.

``acp2_remote.py`` (acp2's ``connect_url`` against ``acp2 serve``) and ``ts_remote.py``
(the TypeScript SDK's ws-client / http-client against its own experimental server) both
start their server with :func:`serving` and measure it the same way, so the two columns
of the table compare.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

#: The line prefix both servers print on stderr once they accept connections.
LISTENING = "listening on "
#: Lines of stderr a server may print before saying where it listens.
BANNER_LINES = 50


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far (``/proc/<pid>/stat``)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    """The resident set of process ``pid`` in KiB (``/proc/<pid>/status``; 0 if unknown)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _drain(stream: IO[str]) -> None:
    # The server's stderr is a pipe: keep reading it so a chatty server never blocks.
    for _ in stream:
        pass


@contextmanager
def serving(argv: Sequence[str], cwd: Path | None = None) -> Iterator[tuple[str, int]]:
    """Start a server that prints ``listening on URL`` on stderr; yield (URL, pid).

    The server is terminated (then killed) when the block ends. Raises ``RuntimeError``
    when it exits or says nothing of the kind within its first lines.
    """
    proc = subprocess.Popen(list(argv), cwd=cwd, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        url = _url(proc.stderr)
        threading.Thread(target=_drain, args=(proc.stderr,), daemon=True).start()
        yield url, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _url(stderr: IO[str]) -> str:
    seen: list[str] = []
    for _, line in zip(range(BANNER_LINES), stderr, strict=False):
        if LISTENING in line:
            return str(line.split(LISTENING, 1)[1].split()[0])
        seen.append(line.strip())
    raise RuntimeError(f"the server did not say where it listens: {' / '.join(seen[-3:])}")
