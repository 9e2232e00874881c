"""Run every probe (in parallel, each bounded), then the audit; build the :class:`Report`."""

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
from acp2.check.probes import PROBES
from acp2.check.probes.base import Abort, Probe, ProbeSpec, Shared
from acp2.check.requirements import DRAFTS
from acp2.check.results import Findings, Report, Status
from acp2.check.validator import require_jsonschema

__all__ = ["CheckError", "run_check"]


class CheckError(Exception):
    """The check could not run at all (bad options, or the agent cannot be started)."""


def probe_limit(options: CheckOptions) -> float:
    """The hard limit for one probe: many times the per-wait timeout, never infinite."""
    return options.timeout * 12 + 10


async def run_check(options: CheckOptions) -> Report:
    """Check the agent ``options.argv``; return the report.

    Raises :class:`CheckError` for unusable options or an agent command that cannot be
    started, and :class:`~acp2.check.validator.MissingJsonschema` without ``jsonschema``.
    """
    require_jsonschema()
    if options.draft not in DRAFTS:
        raise CheckError(f"unknown draft {options.draft!r}; use one of {', '.join(DRAFTS)}")
    if not options.argv:
        raise CheckError("no agent command given (acp2 check -- AGENT_COMMAND...)")
    unknown = sorted((options.only or frozenset()) - PROBES.keys())
    if unknown:
        raise CheckError(f"unknown probe(s): {', '.join(unknown)}")
    problem = await preflight(options)
    if problem is not None:
        raise CheckError(problem)
    started = time.monotonic()
    findings = Findings()
    with _session_dir(options.cwd) as cwd:
        shared = Shared(options, findings, cwd)
        start_errors: list[str] = []
        limiter = anyio.CapacityLimiter(max(1, options.jobs))
        async with anyio.create_task_group() as tg:
            for name, spec in PROBES.items():
                if options.only is None or name in options.only:
                    tg.start_soon(_run_probe, spec, shared, limiter, start_errors)
    if start_errors:
        raise CheckError(start_errors[0])
    audit(shared)
    return Report(
        options.draft, list(options.argv), findings.rows(), shared.agent, time.monotonic() - started
    )


async def _run_probe(
    spec: ProbeSpec, shared: Shared, limiter: anyio.CapacityLimiter, start_errors: list[str]
) -> None:
    async with limiter:
        probe = Probe(spec.name, shared)
        reason = "not reached"
        limit = probe_limit(shared.options)
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
