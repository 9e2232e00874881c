"""Stopping a child and its whole process group in bounded time (TR-06), the one way.

Every place that starts an agent in its own process group -- the stdio transport
(:func:`acp2.transport.stdio.spawn_agent`) and the conformance checker
(:mod:`acp2.check`) -- ends it with :func:`stop_group`:

1. close the child's stdin (end of the connection) and wait ``grace`` seconds for the
   child to exit by itself;
2. SIGTERM the process group and wait ``term_grace`` seconds for the child *and* every
   other live member of the group (helpers it started) to be gone;
3. SIGKILL the group and wait ``kill_wait`` seconds more.

A child that exits in step 1 but leaves helpers behind skips the rest of step 1's wait:
its group gets SIGTERM at once. The child is always reaped (``wait()`` is what every step
awaits), so it never stays a zombie. The total time is bounded by
``grace + term_grace + kill_wait``; only a process stuck in the kernel outlives it, and
then the outcome says ``"stuck"``.

POSIX only: the child must lead its own process group (``start_new_session=True``).
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Awaitable, Callable
from typing import Final, Literal, Protocol

import anyio

__all__ = [
    "DEFAULT_GRACE",
    "DEFAULT_KILL_WAIT",
    "DEFAULT_TERM_GRACE",
    "GroupLeader",
    "StopOutcome",
    "group_alive",
    "signal_group",
    "stop_group",
]

logger = logging.getLogger("acp2.transport")

#: Seconds a child gets to exit by itself after its stdin is closed (TR-06's clean path).
DEFAULT_GRACE: Final = 2.0
#: Seconds the group gets to be gone after SIGTERM before SIGKILL.
DEFAULT_TERM_GRACE: Final = 2.0
#: Seconds to wait after SIGKILL: only a process in uninterruptible sleep takes this long.
DEFAULT_KILL_WAIT: Final = 5.0

#: How :func:`stop_group` ended: the group was gone after closing stdin (``"exited"``),
#: after SIGTERM (``"terminated"``), after SIGKILL (``"killed"``), or not even then.
StopOutcome = Literal["exited", "terminated", "killed", "stuck"]

# Members of the group other than our child cannot be awaited (they are not our
# children, and /proc has no change notification), so their end is polled, briefly.
_POLL_FIRST: Final = 0.005
_POLL_MAX: Final = 0.05
#: A plain string, not a ``Path``: pathlib is not otherwise imported by a served agent
#: before it answers ``initialize`` (start-up time).
_PROC: Final = "/proc"


class GroupLeader(Protocol):
    """What :func:`stop_group` needs of a child process: ``asyncio.subprocess.Process``
    and ``anyio.abc.Process`` both fit."""

    @property
    def pid(self) -> int:
        """The child's pid, which is also its process group id."""
        ...

    @property
    def returncode(self) -> int | None:
        """The exit status once reaped, else None."""
        ...

    async def wait(self) -> int:
        """Wait until the child has exited and been reaped; its exit status."""
        ...


async def stop_group(
    leader: GroupLeader,
    close_stdin: Callable[[], Awaitable[object]] | None = None,
    *,
    grace: float = DEFAULT_GRACE,
    term_grace: float = DEFAULT_TERM_GRACE,
    kill_wait: float = DEFAULT_KILL_WAIT,
) -> StopOutcome:
    """Close stdin (``close_stdin``, if given), then escalate SIGTERM -> SIGKILL on the
    leader's process group until the leader is reaped and no live process is left in
    the group. Returns how it ended (see :data:`StopOutcome`).

    Takes at most ``grace + term_grace + kill_wait`` seconds (closing stdin counts
    against ``grace``: it may wait on a flush the child never reads), is shielded from
    cancellation (a half-done shutdown would leak processes), and is safe to call on a
    child that has already exited. Raises ``ValueError`` if the leader is in our own
    process group (signalling it would hit us).
    """
    pgid = leader.pid
    _refuse_own_group(leader)
    with anyio.CancelScope(shield=True):
        if await _closed_and_reaped(leader, close_stdin, grace) and not group_alive(pgid):
            return "exited"
        steps: tuple[tuple[signal.Signals, float, StopOutcome], ...] = (
            (signal.SIGTERM, term_grace, "terminated"),
            (signal.SIGKILL, kill_wait, "killed"),
        )
        for sig, seconds, outcome in steps:
            # SIGKILL is worth a warning: the agent ignored both polite requests.
            level = logging.WARNING if sig is signal.SIGKILL else logging.INFO
            logger.log(level, "stopping process group %d with %s", pgid, sig.name)
            signal_group(pgid, sig)
            if await _gone(leader, pgid, seconds):
                return outcome
    logger.warning("process group %d survived SIGKILL for %gs", pgid, kill_wait)
    return "stuck"


def signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Send ``sig`` to process group ``pgid``; False when the group is gone (or not ours
    to signal), never raises for that."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def group_alive(pgid: int) -> bool:
    """True while process group ``pgid`` has a member that is not a zombie.

    Zombies are skipped: an orphaned helper's zombie belongs to whoever adopted it (which
    in a container may never reap it), and it runs nothing. Without ``/proc`` any member
    counts."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not os.path.isdir(_PROC):  # pragma: no cover - non-Linux POSIX
        return True
    return any(_live_member(entry.name, pgid) for entry in os.scandir(_PROC))


def _live_member(name: str, pgid: int) -> bool:
    if not name.isdigit():
        return False
    try:
        with open(f"{_PROC}/{name}/stat", "rb") as file:
            stat = file.read()
    except OSError:  # gone meanwhile, or not readable
        return False
    # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    fields = stat[stat.rfind(b")") + 2 :].split()
    return len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X")


def _refuse_own_group(leader: GroupLeader) -> None:
    if leader.returncode is not None:
        return
    try:
        shared = os.getpgid(leader.pid) == os.getpgrp()
    except ProcessLookupError:  # already reaped
        return
    if shared:
        raise ValueError(f"process {leader.pid} does not lead its own process group")


async def _closed_and_reaped(
    leader: GroupLeader, close_stdin: Callable[[], Awaitable[object]] | None, seconds: float
) -> bool:
    # Closing counts against the grace: it can wait on a flush the child never reads.
    with anyio.move_on_after(seconds):
        if close_stdin is not None:
            await close_stdin()
        await leader.wait()
    return leader.returncode is not None


async def _gone(leader: GroupLeader, pgid: int, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        await leader.wait()
        delay = _POLL_FIRST
        while group_alive(pgid):
            await anyio.sleep(delay)
            delay = min(2 * delay, _POLL_MAX)
        return True
    return False
