"""``acp2 check``: an ACP v2 conformance checker for any agent command.

::

    from acp2.check import CheckOptions, run_check
    report = await run_check(CheckOptions(argv=["my-agent", "--acp"]))
    print(report.verdict)

The checker starts the agent (a fresh process per probe where isolation matters),
drives it at the byte level, and judges each requirement row of
:data:`~acp2.check.requirements.REQUIREMENTS` under the selected draft (``aug``, ACP v2
alpha.3 of Aug 2026, by default; ``nov``, the draft of the TypeScript SDK 2.4.0 of Nov
2026, on request). Waits and parallelism come from the machine and the agent's measured
start-up time (:mod:`acp2.check.timing`) unless given.
Schema validation needs the optional ``jsonschema`` package (``acp2[check]``).
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
