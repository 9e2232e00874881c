"""Run every probe (in parallel, each bounded), then the audit; build the :class:`Report`.

A timing-sensitive probe (:attr:`ProbeSpec.timing`) with a failing row is rerun once,
alone, after the parallel run: a row that passes then was a victim of load, and the
report says so (``Timing.reruns``); a row that fails again is a failure. The rerun
waits :data:`~acp2.check.timing.RERUN_FACTOR` times as long, and replaces the first run
entirely: its findings and the frames the audit judges.
"""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager

import anyio

from acp2.check.audit import audit
from acp2.check.driver import AgentStartError
from acp2.check.options import CheckOptions
from acp2.check.preflight import preflight
from acp2.check.probes import PROBES, V1_PROBES
from acp2.check.probes.base import Abort, Probe, ProbeSpec, Shared
from acp2.check.remote import NOT_REMOTE
from acp2.check.requirements import DRAFTS, REQUIREMENTS
from acp2.check.results import Findings, Report, Status
from acp2.check.timing import RERUN_FACTOR, Timing, resolve
from acp2.check.validator import require_jsonschema
from acp2.errors import CheckError

__all__ = ["CheckError", "run_check"]


#: Reasons a probe stops for when the agent did not answer in time (a load symptom).
_STALLED = ("not reached: initialize failed: no answer", "the probe exceeded")


def probe_limit(timing: Timing, patience: float = 1.0) -> float:
    """The hard limit for one probe: many times its per-wait timeout (the run's times
    ``patience``), never infinite."""
    return timing.timeout * patience * 12 + 10


async def run_check(options: CheckOptions) -> Report:
    """Check the agent ``options.argv``; return the report.

    Raises :class:`CheckError` for unusable options or an agent command that cannot be
    started, and :class:`~acp2.check.validator.MissingJsonschema` without ``jsonschema``.
    """
    require_jsonschema()
    if options.draft not in DRAFTS:
        raise CheckError(f"unknown draft {options.draft!r}; use one of {', '.join(DRAFTS)}")
    if not options.argv and options.url is None:
        raise CheckError("no agent command given (acp2 check -- AGENT_COMMAND...)")
    unknown = sorted((options.only or frozenset()) - PROBES.keys() - V1_PROBES.keys())
    if unknown:
        raise CheckError(f"unknown probe(s): {', '.join(unknown)}")
    first = await preflight(options)
    if first.problem is not None:
        raise CheckError(first.problem)
    timing = resolve(options, first.startup)
    started = time.monotonic()
    findings = Findings()
    # An agent that answered our request for 2 in v1's shape is judged as ACP v1.
    probes = V1_PROBES if first.version == 1 else PROBES
    specs = [s for n, s in probes.items() if options.only is None or n in options.only]
    if options.url is not None:
        specs = [s for s in specs if s.name not in NOT_REMOTE]
    with _session_dir(options.cwd) as cwd:
        shared = Shared(options, findings, cwd, timing, version=first.version)
        start_errors: list[str] = []
        limiter = anyio.CapacityLimiter(timing.jobs)
        async with anyio.create_task_group() as tg:
            for spec in specs:
                tg.start_soon(_run_probe, spec, shared, limiter, start_errors)
        if not start_errors:
            await _rerun_alone(specs, shared, start_errors)
    if start_errors:
        raise CheckError(start_errors[0])
    audit(shared)
    only = tuple(s.name for s in specs) if options.only is not None else None
    return Report(
        shared.draft,
        list(options.argv),
        findings.rows(),
        shared.agent,
        time.monotonic() - started,
        only,
        timing,
    )


async def _rerun_alone(specs: list[ProbeSpec], shared: Shared, start_errors: list[str]) -> None:
    """Rerun, one at a time, each timing-sensitive probe that failed and each probe that
    stopped because the agent did not answer in time; note the outcome."""
    for spec in specs:
        failed = _judged_failures(shared, spec.name) if spec.timing else {}
        stalled = shared.stalled.get(spec.name)
        if not failed and stalled is None:
            continue
        shared.forget(spec.name)
        alone = anyio.CapacityLimiter(1)
        await _run_probe(spec, shared, alone, start_errors, patience=RERUN_FACTOR)
        again = _judged_failures(shared, spec.name)
        for key in sorted(failed.keys() - again.keys()):
            why = f"passed when rerun alone; in the parallel run: {failed[key]}"
            shared.findings.add(key, Status.PASS, why, probe=spec.name)
        first = f"{', '.join(sorted(failed))} failed" if failed else f"stopped ({stalled})"
        outcome = (
            "failed again" if again else "stopped again" if spec.name in shared.stalled else ""
        )
        shared.timing.reruns.append(
            f"{spec.name}: {first} in the parallel run; {outcome or 'passed'}"
        )


def _judged_failures(shared: Shared, probe: str) -> dict[str, str]:
    """The rows ``probe`` failed that count under the selected draft (rows of the other
    draft never trigger a rerun: they do not decide this verdict)."""
    draft = shared.draft
    failed = shared.findings.failed_by(probe)
    return {k: why for k, why in failed.items() if REQUIREMENTS[k].applies_to(draft)}


async def _run_probe(
    spec: ProbeSpec,
    shared: Shared,
    limiter: anyio.CapacityLimiter,
    start_errors: list[str],
    patience: float = 1.0,
) -> None:
    async with limiter:
        probe = Probe(spec.name, shared, patience)
        reason = "not reached"
        limit = probe_limit(shared.timing, patience)
        with anyio.move_on_after(limit) as scope:
            try:
                await spec.fn(probe)
            except Abort as exc:
                reason = f"not reached: {exc}"
            except AgentStartError as exc:
                start_errors.append(str(exc))
                return
            except Exception as exc:  # a checker bug must not hide the other probes
                last = traceback.extract_tb(exc.__traceback__)[-1]
                reason = (
                    f"the checker failed in this probe: {type(exc).__name__}: {exc} "
                    f"({os.path.basename(last.filename)}:{last.lineno})"
                )
        if scope.cancelled_caught:
            reason = f"the probe exceeded its {limit:g}s limit"
        if reason.startswith(_STALLED):
            shared.stalled[spec.name] = reason
        else:
            shared.stalled.pop(spec.name, None)
        for key in spec.rows:
            if not shared.findings.judged(key):
                shared.findings.add(key, Status.SKIP, reason, probe=spec.name)


@contextmanager
def _session_dir(cwd: str | None) -> Iterator[str]:
    """The absolute session directory: ``cwd``, or a temporary one removed afterwards."""
    if cwd is not None:
        yield os.path.abspath(cwd)
        return
    with tempfile.TemporaryDirectory(prefix="acp2-check-") as tmp:
        yield os.path.realpath(tmp)
