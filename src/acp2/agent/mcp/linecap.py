"""``python -I linecap.py MAX -- COMMAND ARGS...``: a stdio MCP server whose output lines
are bounded. It is run as a script with the standard library only, so the server's
environment needs nothing of acp2.

The MCP SDK reads a stdio server's stdout line by line with no length limit, so a server
writing one endless line would grow the agent's memory without bound. This relay starts
``COMMAND`` (stdin and stderr shared, in the same process group), copies its stdout to
ours chunk by chunk without keeping any, and counts the bytes since the last newline. A
line longer than ``MAX`` bytes ends the server (SIGKILL) and the relay, after one line on
stderr saying so: the agent then sees the server end, and says why. Exit status: the
server's, or 3 when it was ended for a long line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

__all__ = ["main"]

_READ = 65536


def main(argv: list[str]) -> int:
    """Relay ``argv`` = ``[MAX, "--", COMMAND, ARGS...]``; return the exit status."""
    if len(argv) < 3 or argv[1] != "--" or not argv[0].isascii() or not argv[0].isdigit():
        print("usage: linecap MAX -- COMMAND ARGS...", file=sys.stderr)
        return 2
    limit = int(argv[0])
    try:
        child = subprocess.Popen(argv[2:], stdout=subprocess.PIPE)
    except OSError as exc:
        print(f"cannot start {argv[2]!r}: {exc}", file=sys.stderr)
        return 127
    assert child.stdout is not None
    if not _relay(child.stdout.fileno(), limit):
        child.send_signal(signal.SIGKILL)
        child.wait()
        print(f"the server wrote a line longer than {limit} bytes; it was stopped", file=sys.stderr)
        return 3
    return child.wait()


def _relay(source: int, limit: int) -> bool:
    """Copy ``source`` to stdout until EOF; False as soon as a line exceeds ``limit``
    (or our reader went away)."""
    run = 0  # bytes of the line still open at the end of the last chunk
    while chunk := os.read(source, _READ):
        first = chunk.find(b"\n")
        if first < 0:
            run += len(chunk)
        elif run + first > limit or (len(chunk) > limit and _longest(chunk) > limit):
            return False
        else:
            run = len(chunk) - chunk.rfind(b"\n") - 1
        if run > limit:
            return False
        try:
            _write_all(chunk)
        except OSError:  # the agent closed our stdout: nobody reads the server any more
            return False
    return True


def _longest(chunk: bytes) -> int:
    """The longest run of bytes between newlines in ``chunk``."""
    return max(len(piece) for piece in chunk.split(b"\n"))


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
