"""How long ``acp2 check`` waits, and how many agents it runs at once, on this machine.

Fixed defaults flake: ten-second waits and six agents at once on a two-core machine fail
the timing rows of a slow agent. So the checker picks them from the machine and from the
agent: ``jobs`` defaults to the CPUs this process may use, and the per-wait bound to a
multiple of the agent's start-up time, measured once by the preflight::

    timeout = min(MAX_TIMEOUT, max(DEFAULT_TIMEOUT, STARTUP_FACTOR * startup))

(10 s floor, today's fixed default; 120 s ceiling, so that a start-up measured under a
burst of load cannot make one wait, and so the whole check, unreasonably long).
Explicit ``--timeout`` / ``--jobs`` are used as given.

The start-up time is measured to the answer of a *second* request (an unknown method),
not to the ``initialize`` answer: an agent may answer ``initialize`` before it has loaded
what serves everything else (acp2's own agents do, see :mod:`acp2.agent.early`), and
scaling from that early answer would leave too little for the first real request.

A probe rerun alone after a failure gets :data:`RERUN_FACTOR` times every wait: it was
rerun because a wait may have been too short under load, so the same wait again would
only repeat the verdict of the parallel run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from acp2.check.options import CheckOptions

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_TIMEOUT",
    "PREFLIGHT_LIMIT",
    "RERUN_FACTOR",
    "STARTUP_FACTOR",
    "Timing",
    "cpu_count",
    "resolve",
    "scaled_timeout",
]

#: The smallest per-wait bound picked automatically, in seconds.
DEFAULT_TIMEOUT = 10.0
#: The largest per-wait bound picked automatically, in seconds.
MAX_TIMEOUT = 120.0
#: The per-wait bound is at least this many times the measured start-up time.
STARTUP_FACTOR = 6.0
#: How long the preflight waits for the first ``initialize`` answer without ``--timeout``.
PREFLIGHT_LIMIT = 30.0
#: A probe rerun alone after a failure waits this many times as long, every wait.
RERUN_FACTOR = 2.0
#: The grace period (listening for frames that must not come) grows with a slow start,
#: up to this many seconds.
MAX_GRACE = 2.0


def cpu_count() -> int:
    """The CPUs this process may run on (its affinity where known), at least 1."""
    # Python 3.13+ answers this itself (affinity, and PYTHON_CPU_COUNT when set).
    process_cpu_count = getattr(os, "process_cpu_count", None)
    if process_cpu_count is not None:
        return max(1, int(process_cpu_count() or 1))
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)  # pragma: no cover - platforms without affinity


def scaled_timeout(startup: float) -> float:
    """The per-wait bound for an agent that took ``startup`` seconds to answer
    ``initialize`` alone: :data:`STARTUP_FACTOR` times that, at least the default
    (:data:`DEFAULT_TIMEOUT`) and at most :data:`MAX_TIMEOUT`."""
    return round(min(MAX_TIMEOUT, max(DEFAULT_TIMEOUT, STARTUP_FACTOR * startup)), 1)


@dataclass
class Timing:
    """The waits and parallelism one run used, and the probes it reran alone."""

    timeout: float
    jobs: int
    grace: float
    startup: float
    scaled: bool = False
    reruns: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the report header."""
        how = "scaled from the start-up time" if self.scaled else "--timeout"
        if self.scaled and self.timeout >= MAX_TIMEOUT:
            how += f", capped at {MAX_TIMEOUT:g}s"
        return (
            f"waits: {self.timeout:g}s each ({how}; agent start-up {self.startup:.2f}s), "
            f"{self.jobs} agent(s) at once"
        )


def resolve(options: CheckOptions, startup: float) -> Timing:
    """The :class:`Timing` for ``options`` once the agent's start-up time is known."""
    scaled = options.timeout is None
    timeout = scaled_timeout(startup) if options.timeout is None else options.timeout
    jobs = options.jobs if options.jobs is not None else cpu_count()
    grace = min(MAX_GRACE, max(options.grace, startup / 4))
    return Timing(timeout, max(1, jobs), grace, startup, scaled)
