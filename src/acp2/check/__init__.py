"""``acp2 check``: an ACP v2 (and v1) conformance checker for any agent command.

::

    from acp2.check import CheckOptions, run_check
    report = await run_check(CheckOptions(argv=["my-agent", "--acp"]))
    print(report.verdict)

The checker starts the agent (a fresh process per probe where isolation matters),
drives it at the byte level, and judges each requirement row of
:data:`~acp2.check.requirements.REQUIREMENTS` under the selected draft (``preview``, the
ACP v2 Preview of 2026-11-20 as modelled from the TypeScript SDK 2.4.0's schemas, by
default; on request ``nov``, the draft of that SDK of Nov 2026, or ``aug``, ACP v2 alpha.3
of Aug 2026). An agent that answers ``initialize`` with protocol version 1 in v1's shape is
judged as ACP v1 instead: the v1 probes (:data:`~acp2.check.probes.V1_PROBES`) and the
``V1-`` rows, with every frame validated against the shipped v1 schema (the report's
``draft`` is then ``v1``). Waits and parallelism come from the machine and the agent's
measured start-up time (:mod:`acp2.check.timing`) unless given.
Schema validation needs the optional ``jsonschema`` package (``acp2[check]``).

The checker is deliberately an independent observer of the wire: it has its own framer
(:mod:`acp2.check.frames` splits stdout into lines itself and parses each strictly),
its own process spawning and its own request bookkeeping (:mod:`acp2.check.driver`), so
a bug in acp2's runtimes cannot hide itself by being on both ends of the check. It
imports nothing of :mod:`acp2.rpc`, :mod:`acp2.agent` or :mod:`acp2.client` (a test
holds it to that). What it does share is data and one clean-up: the method table and
the wire vocabularies of :mod:`acp2.schema` (so method names are written in one place),
the v1 method table (to probe that a removed v1 method is refused), and
:func:`acp2.transport.procgroup.stop_group`, which ends each agent only after the
checker has judged its exit with its own waits.
"""

from __future__ import annotations

from acp2.check.options import (
    DEFAULT_CANCEL_PROMPT,
    DEFAULT_PERMISSION_PROMPT,
    DEFAULT_PROMPT,
    CheckOptions,
)
from acp2.check.requirements import REQUIREMENTS, Level, Requirement
from acp2.check.results import Report, Row, Status
from acp2.check.runner import CheckError, run_check
from acp2.check.validator import MissingJsonschema

__all__ = [
    "DEFAULT_CANCEL_PROMPT",
    "DEFAULT_PERMISSION_PROMPT",
    "DEFAULT_PROMPT",
    "REQUIREMENTS",
    "CheckError",
    "CheckOptions",
    "Level",
    "MissingJsonschema",
    "Report",
    "Requirement",
    "Row",
    "Status",
    "run_check",
]
