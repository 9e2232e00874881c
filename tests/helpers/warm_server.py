"""The server half of a warm interpreter (see ``warm.py``): imports some modules once,
then forks one child per launch, each running a script as ``python script args`` would.

    python warm_server.py SOCKET MODULE...

Runs in the peer's own interpreter (an SDK venv), so it uses the standard library only.
It listens on the Unix socket ``SOCKET`` (``SOCK_SEQPACKET``: one request is one
message) once the imports are done, says so on stdout, and ends when its stdin closes
(its test process went away), killing the children still running.

One request (from ``warm_launch.py``): a JSON object ``{"argv", "cwd", "env"}`` with the
launcher's stdin, stdout and stderr attached as file descriptors. The server answers
with the child's pid, and when the child ends with its exit code (``-N``: signal N).
When the launcher goes away first (killed with its process group), so does the child.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import io
import json
import os
import runpy
import selectors
import signal
import socket
import sys
import traceback
from typing import Any

REQUEST_BYTES = 1 << 20


def main() -> None:
    path, modules = sys.argv[1], sys.argv[2:]
    for name in modules:
        importlib.import_module(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    sys.stdout.write("listening\n")  # for WarmPython.listening; nobody else reads it
    sys.stdout.flush()
    serve(listener)


def serve(listener: socket.socket) -> None:
    """Accept launches until stdin closes; then kill every child still running and exit."""
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin, selectors.EVENT_READ, "stdin")
    children: dict[int, tuple[socket.socket, int]] = {}  # pidfd -> (launcher, pid)
    while True:
        for key, _ in selector.select():
            if key.data == "stdin":
                for _, pid in children.values():
                    _kill(pid)
                os._exit(0)  # skips tearing the SDK's modules down: seconds under load
            if key.data == "accept":
                _accept(listener, selector, children)
            elif key.data == "launcher":
                _launcher_gone(key.fileobj, selector, children)  # type: ignore[arg-type]
            else:
                _child_ended(key.data, selector, children)


def _accept(
    listener: socket.socket,
    selector: selectors.BaseSelector,
    children: dict[int, tuple[socket.socket, int]],
) -> None:
    conn, _ = listener.accept()
    try:
        payload, fds, _, _ = socket.recv_fds(conn, REQUEST_BYTES, 3)
        request = json.loads(payload)
    except (OSError, ValueError):
        conn.close()
        return
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        conn.close()
        return
    pid = os.fork()
    if pid == 0:
        _close_server_fds(listener, conn, selector, children)
        _child(request, fds)
    for fd in fds:
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    children[pidfd] = (conn, pid)
    selector.register(pidfd, selectors.EVENT_READ, pidfd)
    selector.register(conn, selectors.EVENT_READ, "launcher")
    conn.send(str(pid).encode())


def _launcher_gone(
    conn: socket.socket,
    selector: selectors.BaseSelector,
    children: dict[int, tuple[socket.socket, int]],
) -> None:
    # The launcher sends nothing after its request: readable means it went away.
    selector.unregister(conn)
    for launcher, pid in children.values():
        if launcher is conn:
            _kill(pid)


def _child_ended(
    pidfd: int, selector: selectors.BaseSelector, children: dict[int, tuple[socket.socket, int]]
) -> None:
    conn, pid = children.pop(pidfd)
    selector.unregister(pidfd)
    os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    with contextlib.suppress(KeyError):  # unregistered already when the launcher went
        selector.unregister(conn)
    with contextlib.suppress(OSError):  # the launcher is gone already
        conn.send(str(os.waitstatus_to_exitcode(status)).encode())
    conn.close()


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _close_server_fds(
    listener: socket.socket,
    conn: socket.socket,
    selector: selectors.BaseSelector,
    children: dict[int, tuple[socket.socket, int]],
) -> None:
    # A child holding another launcher's socket would hide that launcher's death.
    selector.close()
    listener.close()
    conn.close()
    for pidfd, (launcher, _) in children.items():
        os.close(pidfd)
        launcher.close()


def _child(request: dict[str, Any], fds: list[int]) -> None:
    """Become ``python script args`` in the launcher's place; never returns."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        _fresh_stdio()
        script = request["argv"][0]
        sys.argv = list(request["argv"])
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        code = _run(script)
    except BaseException:  # report it as an interpreter would, then exit
        traceback.print_exc()
    finally:
        _exit(code)


def _fresh_stdio() -> None:
    # The server's streams were set up for its own stdio: make them as a new interpreter
    # started on the launcher's would (line-buffered stdout under PYTHONUNBUFFERED or on
    # a terminal, stderr always, as Python does).
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), "utf-8")
    out = io.FileIO(1, "w", closefd=False)
    stdout = io.TextIOWrapper(
        io.BufferedWriter(out), "utf-8", line_buffering=unbuffered or out.isatty()
    )
    err = io.BufferedWriter(io.FileIO(2, "w", closefd=False))
    stderr = io.TextIOWrapper(err, "utf-8", "backslashreplace", line_buffering=True)
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = stdin, stdout, stderr


def _run(script: str) -> int:
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        traceback.print_exc()
        return -signal.SIGINT  # as Python exits on an unhandled KeyboardInterrupt
    return 0


def _exit(code: int) -> None:
    try:
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        if code < 0:  # only SIGINT: see _run
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
    finally:
        os._exit(1 if code < 0 else code)


if __name__ == "__main__":
    main()
