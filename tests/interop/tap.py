"""A wire tap: run an agent and log every line that crosses its stdio.

    python tap.py --log FILE -- AGENT_ARGV...

Use it as the agent command of any client. It spawns the real agent, copies bytes in
both directions unchanged (as soon as they arrive, not line by line), passes the
agent's stderr through, and appends one JSON object per line to FILE (JSON Lines):

    {"seq": 0, "t": 0.0123, "dir": "client->agent", "line": "{...}"}

``seq`` orders records across both directions: a line is logged before it is
forwarded, so a reply is always logged after the line that caused it. ``t`` is
seconds since the tap started, ``line`` is the line without its newline (decoded as
UTF-8, undecodable bytes replaced; the bytes forwarded are never changed). A final
line without a newline is logged with ``"partial": true``. The tap exits with the
agent's exit code. It depends on the standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import BinaryIO

CLIENT_TO_AGENT = "client->agent"
AGENT_TO_CLIENT = "agent->client"
READ_SIZE = 256 * 1024


class Log:
    """Appends line records from both pump threads to one file, in order."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._lock = threading.Lock()
        self._seq = 0
        self._start = time.monotonic()

    def write_lines(self, direction: str, lines: list[bytes], *, partial: bool = False) -> None:
        with self._lock:
            if self._file.closed:
                return
            records = []
            now = round(time.monotonic() - self._start, 6)
            for raw in lines:
                record = {"seq": self._seq, "t": now, "dir": direction}
                record["line"] = raw.decode("utf-8", errors="replace")
                if partial:
                    record["partial"] = True
                records.append(json.dumps(record, ensure_ascii=False) + "\n")
                self._seq += 1
            self._file.write("".join(records))
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


def pump(source: BinaryIO, sink: BinaryIO, direction: str, log: Log) -> None:
    """Copy ``source`` to ``sink`` until end of file, logging complete lines."""
    pending = b""
    src, dst = source.fileno(), sink.fileno()
    try:
        while chunk := os.read(src, READ_SIZE):
            # Log before forwarding, so that a reply caused by a line can never be
            # logged ahead of it.
            pending += chunk
            if b"\n" in chunk:
                *lines, pending = pending.split(b"\n")
                log.write_lines(direction, [line.removesuffix(b"\r") for line in lines])
            _write_all(dst, chunk)
    except OSError:
        pass  # the other side went away; fall through to close
    finally:
        if pending:
            log.write_lines(direction, [pending], partial=True)
        with contextlib.suppress(OSError):
            sink.close()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", required=True, help="JSON Lines file to append to")
    parser.add_argument("agent", nargs=argparse.REMAINDER, help="-- AGENT_ARGV...")
    args = parser.parse_args(argv)
    command = args.agent[1:] if args.agent[:1] == ["--"] else args.agent
    if not command:
        parser.error("missing the agent command after --")

    log = Log(args.log)
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert child.stdin is not None
    assert child.stdout is not None

    def forward(signum: int, _frame: object) -> None:
        child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)

    upstream = threading.Thread(
        target=pump, args=(sys.stdin.buffer, child.stdin, CLIENT_TO_AGENT, log), daemon=True
    )
    upstream.start()
    pump(child.stdout, sys.stdout.buffer, AGENT_TO_CLIENT, log)
    code = child.wait()
    # The client may keep our stdin open after the agent is gone: don't wait for it
    # forever, only long enough to log what is already in flight.
    upstream.join(timeout=1.0)
    log.close()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
