"""Before the probes: can the agent be started and does it answer ``initialize`` at all?

When it cannot be started, exits at once, or writes a line that is not JSON and then
stays silent, every probe would fail the same way; the check stops instead with one
message that says what is wrong and what to do (the wording of :mod:`acp2.diagnose`,
the same as ``acp2 run`` and ``acp2 chat``).
"""

from __future__ import annotations

from dataclasses import dataclass

from acp2.check.driver import AgentStartError, ClientCore, open_link
from acp2.check.options import CheckOptions
from acp2.check.timing import PREFLIGHT_LIMIT, scaled_timeout
from acp2.check.versions import initialize_params, is_v1_result
from acp2.diagnose import early_exit, not_answered, quote_line, stray_output
from acp2.schema.methods import INITIALIZE

__all__ = ["Preflight", "preflight"]

#: Seconds to wait for an agent whose stdout ended to exit, to report its status.
EXIT_WAIT = 2.0
#: The second request the start-up is measured to (any answer will do, an error too).
PROBE_METHOD = "_acp2check/startup"


@dataclass(frozen=True)
class Preflight:
    """What the first start showed: why the check cannot run (None: it can), the
    seconds from starting the agent to its ``initialize`` answer (its start-up time), and
    the protocol version the run judges (1 when the answer to our request for 2 was in
    v1's shape, see :mod:`acp2.check.versions`; else 2). ``answered`` is the
    ``protocolVersion`` the agent answered (None: none readable)."""

    problem: str | None
    #: Seconds to the answer of the request after ``initialize`` (see :func:`preflight`).
    startup: float = 0.0
    version: int = 2
    answered: object = None


async def preflight(options: CheckOptions) -> Preflight:
    """Start the agent once and send ``initialize``; say why the check cannot run, or
    measure the start-up time when the agent answered (whatever the answer: judging it
    is the probes' job). Without ``--timeout`` it waits up to :data:`PREFLIGHT_LIMIT`.

    The start-up lasts until the agent answers a second request, :data:`PROBE_METHOD`
    (an agent may answer ``initialize`` before loading the rest of itself); an agent
    that leaves that unanswered for as long as a probe would wait is measured by its
    ``initialize`` answer instead (answering unknown methods is a row of its own)."""
    limit = options.timeout if options.timeout is not None else PREFLIGHT_LIMIT
    try:
        async with open_link(
            options.argv,
            label="preflight",
            wait_limit=limit,
            env=options.env,
            remote=options.remote,
        ) as link:
            answer = await link.call(INITIALIZE.name, initialize_params(2))
            if answer is None:
                return Preflight(await _why(link, options, limit))
            result = answer.value.get("result")
            return _answered(result, await _ready(link, answer.t, options))
    except AgentStartError as exc:
        return Preflight(str(exc))


async def _ready(link: ClientCore, initialized: float, options: CheckOptions) -> float:
    """Seconds from the start to the answer of :data:`PROBE_METHOD`, or ``initialized``
    when it is not answered within the wait a probe would get."""
    within = options.timeout if options.timeout is not None else scaled_timeout(initialized)
    second = await link.call(PROBE_METHOD, {}, within=within)
    return initialized if second is None else max(initialized, second.t)


def _answered(result: object, startup: float) -> Preflight:
    version = 1 if is_v1_result(result) else 2
    said = result.get("protocolVersion") if isinstance(result, dict) else None
    return Preflight(None, startup, version, said)


async def _why(link: ClientCore, options: CheckOptions, limit: float) -> str:
    stray = next((quote_line(f.raw) for f in link.frames if not f.ok and f.raw.strip()), None)
    if link.eof:
        status = await link.wait_exit(EXIT_WAIT)
        return early_exit(options.argv, status, link.stderr_tail(), stray)
    if stray is not None:
        return stray_output(stray, limit)
    return not_answered(limit, link.stderr_tail()) + " (raise the limit with --timeout)"
