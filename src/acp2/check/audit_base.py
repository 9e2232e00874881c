"""One audit row's collected failures, shared by the transcript-wide checks."""

from __future__ import annotations

from acp2.check.driver import ClientCore
from acp2.check.frames import Frame
from acp2.check.probes.base import Shared
from acp2.check.results import Status

__all__ = ["MAX_SHOWN", "Row", "evidence"]

#: How many offending frames a failing row shows.
MAX_SHOWN = 4


def evidence(link: ClientCore, frame: Frame, note: str = "") -> str:
    """One evidence line: ``note :: [link] frame`` (the frame cut to 200 characters)."""
    prefix = f"{note} :: " if note else ""
    return f"{prefix}[{link.label}] {frame.evidence(200)}"


class Row:
    """Failures collected for one row across every link."""

    def __init__(self, shared: Shared, key: str) -> None:
        self.shared, self.key = shared, shared.key(key)
        self.bad: list[str] = []
        self.reasons: list[str] = []

    def add(self, reason: str, evidence: str) -> None:
        """Record one offending frame and why it offends."""
        if reason not in self.reasons:
            self.reasons.append(reason)
        self.bad.append(evidence)

    def finish(self, passed: str, *, checked: int = 1) -> None:
        """FAIL with the first reason when a frame offended; else PASS with ``passed``, or
        SKIP when ``checked`` is 0 (nothing to judge)."""
        findings = self.shared.findings
        if self.bad:
            more = f" (+{len(self.reasons) - 1} other kinds)" if len(self.reasons) > 1 else ""
            reason = f"{len(self.bad)} offending frame(s); first: {self.reasons[0]}{more}"
            findings.add(self.key, Status.FAIL, reason, self.bad[:MAX_SHOWN], probe="audit")
        elif checked:
            findings.add(self.key, Status.PASS, passed, probe="audit")
        else:
            findings.add(self.key, Status.SKIP, "nothing to check", probe="audit")
