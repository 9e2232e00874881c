"""The one bound on test waits, scaled for slow machines.

The harness modules (``helpers``, ``agent_harness``, ``coder_helpers``, the hostile and
cli helpers, ...) and the suites built on them bound their waits (``anyio.fail_after``, a
pexpect or subprocess ``timeout=``) by :data:`TIMEOUT` or one of the named multiples
below, instead of a number of their own. On a slow or crowded machine set
``ACP2_TEST_TIMEOUT_SCALE`` (e.g. ``3``) to stretch them all at once: the bounds only
decide how long a broken test takes to fail, never what a passing test checks.
"""

from __future__ import annotations

import os
from typing import Final

__all__ = [
    "PROCESS_TIMEOUT",
    "QUIET_WAIT",
    "RUN_TIMEOUT",
    "SCALE",
    "SCALE_ENV",
    "SCENARIO_TIMEOUT",
    "TIMEOUT",
    "scale",
]

#: The environment variable that multiplies every bound (a positive number; default 1).
SCALE_ENV: Final = "ACP2_TEST_TIMEOUT_SCALE"


def scale(value: str | None) -> float:
    """The factor ``value`` (the variable's text) asks for: 1.0 when unset or empty.

    Raises ``ValueError`` for anything that is not a positive finite number, so a typo
    fails the run at collection instead of silently meaning "no bound".
    """
    if value is None or not value.strip():
        return 1.0
    try:
        factor = float(value)
    except ValueError:
        factor = float("nan")
    if not 0 < factor < float("inf"):
        raise ValueError(f"{SCALE_ENV} must be a positive number, got {value!r}")
    return factor


#: The factor in effect for this run.
SCALE: Final = scale(os.environ.get(SCALE_ENV))
#: Upper bound of any single wait: a frame, an answer, an idle, one short subprocess.
TIMEOUT: Final = 10.0 * SCALE
#: A wait that includes starting Python processes (an ``acp2`` CLI run, an agent spawned
#: with its imports, a pty session): on a loaded two-core machine start-up alone takes
#: seconds, so these get twice the single-wait bound.
PROCESS_TIMEOUT: Final = 2 * TIMEOUT
#: A whole multi-step scenario under one bound (a coder session end to end, a store
#: shared by two agent processes): several process start-ups plus their turns.
SCENARIO_TIMEOUT: Final = 3 * TIMEOUT
#: A whole command run to completion under one ``subprocess.run`` (an ``acp2`` CLI session,
#: a project's test suite, a node or git call): start-up plus all its work, and a timeout
#: there kills the run and loses its output, so it gets the most room.
RUN_TIMEOUT: Final = 6 * TIMEOUT
#: How long a test waits for something that must *not* happen (no idle arrives, no
#: frame is sent) before it checks the state: a negative wait cannot be made longer
#: safely by the scale, and a slow machine only makes it stricter, so it is not scaled.
QUIET_WAIT: Final = 0.5
