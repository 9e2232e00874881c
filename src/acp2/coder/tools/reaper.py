"""No orphaned commands: every running command's process group is known, and killed when
the agent stops -- also when it dies without running any code.

Three layers (see ``docs/sandbox.md``):

- :func:`kill_all` signals every registered group; the agent calls it when it shuts down
  (SIGTERM, SIGINT, end of stdin) after cancelling its turns.
- :func:`set_parent_death_signal` runs in each command's child before exec: the kernel
  sends it SIGKILL when the agent's thread that started it dies (``PR_SET_PDEATHSIG``).
  That reaches the command's first process only, so:
- a small watchdog process (started on first use, in its own session) is told each
  unconfined command's group; when the agent dies, even by SIGKILL, its pipe to the
  watchdog reaches end-of-file and the watchdog SIGKILLs the groups still listed.

A process that leaves its group (``setsid``) escapes the last two; under bubblewrap the
command is in its own pid namespace, which the kernel empties when the sandbox dies.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
from typing import IO

__all__ = ["forget", "kill_all", "live_groups", "remember", "set_parent_death_signal"]

_PR_SET_PDEATHSIG = 1
_LIVE: dict[int, bool] = {}  # pgid -> watched by the watchdog
_WATCHDOG: list[subprocess.Popen[bytes]] = []  # kept referenced: never collected

_WATCHDOG_SOURCE = """
import os, signal, sys
live = set()
for line in sys.stdin.buffer:
    sign, pgid = line[:1], int(line[1:] or 0)
    if sign == b"+":
        live.add(pgid)
    else:
        live.discard(pgid)
for pgid in live:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""


def _load_prctl() -> object | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - no libc symbols
        return None


_PRCTL = _load_prctl()


def set_parent_death_signal(parent: int) -> None:
    """(in the child, before exec) Ask for SIGKILL when the parent dies; if ``parent`` is
    already gone (it died between fork and here), exit at once."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # type: ignore[operator]
    if os.getppid() != parent:
        os._exit(125)


def remember(pgid: int, *, watch: bool) -> None:
    """Register a started command's group (``watch``: also tell the watchdog)."""
    _LIVE[pgid] = watch
    if watch:
        _tell(b"+%d\n" % pgid)


def forget(pgid: int) -> None:
    """Unregister a group whose processes are all gone."""
    if _LIVE.pop(pgid, False):
        _tell(b"-%d\n" % pgid)


def live_groups() -> list[int]:
    """The process groups of the commands still registered."""
    return list(_LIVE)


def kill_all(sig: signal.Signals = signal.SIGKILL) -> None:
    """Send ``sig`` to every registered command group."""
    for pgid in list(_LIVE):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)


def _tell(line: bytes) -> None:
    pipe = _watchdog()
    if pipe is None:
        return
    try:
        pipe.write(line)
        pipe.flush()
    except OSError:  # the watchdog died: the other layers remain
        pass


def _watchdog() -> IO[bytes] | None:
    if _WATCHDOG or os.name != "posix":
        return _WATCHDOG[0].stdin if _WATCHDOG else None
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WATCHDOG_SOURCE],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={"PATH": os.defpath},
            start_new_session=True,
        )
    except OSError:
        return None
    _WATCHDOG.append(process)
    return process.stdin
