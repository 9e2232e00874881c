"""Warm interpreters: peers whose imports cost seconds, started in milliseconds.

The official Python SDKs build their pydantic models on import: ``import
acp.experimental.v2`` (1.0.0rc3) takes about 3.3 s of CPU, ``import acp`` (0.12.1)
1.7 s, and the interop tests and ``acp2 check`` runs start such a peer a few hundred
times. :func:`warm_python` starts one server in that interpreter which imports the SDK
once (``warm_server.py``); :meth:`WarmPython.argv` turns ``[python, script, args...]``
into a launcher command (``warm_launch.py``) that a test or acp2 spawns in its place.
The server forks a child per launch that runs the script on the launcher's stdin,
stdout, stderr, working directory and environment, so the peer still is a separate
process on real pipes, running the SDK's real code; only its imports happened earlier.
The launcher forwards signals to the child and exits as it did; killed, it takes the
child with it.

Only the peers (the SDKs acp2 is tested against) run warm, never acp2 itself: its own
start-up and process handling are what its tests check. ``ACP2_TEST_WARM_PEERS=0``
starts every peer cold, as the command line says; so does a launcher that finds no
server (Linux only: the server needs ``os.pidfd_open``).
"""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from helpers.timeouts import SCENARIO_TIMEOUT

__all__ = ["WARM_ENV", "WarmPython", "warm_python"]

#: ``ACP2_TEST_WARM_PEERS=0`` turns warm peers off.
WARM_ENV = "ACP2_TEST_WARM_PEERS"
HERE = Path(__file__).resolve().parent
SERVER = HERE / "warm_server.py"
LAUNCHER = HERE / "warm_launch.py"


class WarmPython:
    """A running warm server for one interpreter; see the module docstring."""

    def __init__(self, python: Path, socket_path: Path, process: subprocess.Popen[bytes]) -> None:
        self.python = python
        self.socket_path = socket_path
        self.process = process

    def argv(self, command: Sequence[str]) -> list[str]:
        """The launcher command standing in for ``command`` (``[python, script, args...]``
        with this interpreter; any other command comes back unchanged)."""
        if len(command) < 2 or Path(command[0]) != self.python or command[1].startswith("-"):
            return list(command)
        launch = [str(self.python), "-I", "-S", str(LAUNCHER), str(self.socket_path)]
        return [*launch, "--", *command]

    def listening(self, timeout: float) -> bool:
        """Wait at most ``timeout`` seconds for the server to listen; whether it does.
        (Nobody needs to: a launcher that comes early starts its peer cold.)"""
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            readable = selector.select(timeout)
        return bool(readable) and self.process.stdout.readline() == b"listening\n"

    def close(self) -> None:
        """Stop the server (it kills the children still running) and wait for it."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=SCENARIO_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@contextmanager
def warm_python(python: Path, modules: Sequence[str]) -> Iterator[WarmPython | None]:
    """A warm server of ``python`` importing ``modules``, stopped on exit; None when warm
    peers are off or unsupported here. It is not waited for: until it listens (its
    imports take seconds), and if it never does, launchers start their peers cold."""
    if os.environ.get(WARM_ENV) == "0" or not hasattr(os, "pidfd_open"):
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="acp2-warm-"))  # short: a socket path is <= 107
    socket_path = folder / "socket"
    argv = [str(python), str(SERVER), str(socket_path), *modules]
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    warm = WarmPython(python, socket_path, process)
    try:
        yield warm
    finally:
        warm.close()
        shutil.rmtree(folder, ignore_errors=True)
