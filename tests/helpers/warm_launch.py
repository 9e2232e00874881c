"""The launcher half of a warm interpreter (see ``warm.py``): stands in for one
``python script args`` process.

    python -I -S warm_launch.py SOCKET -- PYTHON SCRIPT ARGS...

It hands its stdin, stdout and stderr, working directory, environment and ``SCRIPT
ARGS`` to the server listening on ``SOCKET``, whose fork runs the script; it forwards
the signals it gets to that child and exits as the child did (the same code, or killed by
the same signal). Killed itself, it takes the child with it (the server sees it go).
When no server answers, it becomes ``PYTHON SCRIPT ARGS`` itself (``exec``): the peer
then just starts cold. Standard library only; ``-I -S`` keeps its own start-up cheap.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)


def main() -> None:
    split = sys.argv.index("--")
    path, command = sys.argv[1], sys.argv[split + 1 :]
    server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        server.connect(path)
    except OSError:
        server.close()
        os.execv(command[0], command)
    request = {"argv": command[1:], "cwd": os.getcwd(), "env": dict(os.environ)}
    socket.send_fds(server, [json.dumps(request).encode()], [0, 1, 2])
    pid = int(server.recv(64) or b"0")
    if pid <= 0:
        sys.exit(f"warm_launch: the server at {path} started no child")
    _detach_stdio()
    for number in FORWARDED:
        signal.signal(number, lambda received, _frame: _forward(pid, received))
    answer = server.recv(64)  # interrupted by a signal, the call resumes (PEP 475)
    code = int(answer) if answer else 1
    if code < 0:
        if -code in FORWARDED:  # SIGKILL and SIGSTOP cannot have a handler
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


def _detach_stdio() -> None:
    # The child holds the pipes now; holding them here too would hide it closing them.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def _forward(pid: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, number)


if __name__ == "__main__":
    main()
