"""Findings from probes, merged into report rows, and the verdict.

A probe records :class:`Finding` values (PASS / FAIL / SKIP, a reason, evidence) against
requirement keys; several probes may judge one row. A row FAILs if any finding failed,
PASSes if at least one passed and none failed, and is SKIPped otherwise.

The verdict only counts rows of the selected draft (``v1`` for an agent judged as ACP
v1): the agent is CONFORMANT when no MUST row and no capability-gated row (of a capability
it advertised) failed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from acp2.check.requirements import (
    DIFFERENCES,
    DRAFT_NAMES,
    DRAFTS,
    REQUIREMENTS,
    V1,
    V1_NAME,
    Level,
    Requirement,
)
from acp2.check.timing import Timing

__all__ = ["Finding", "Findings", "Report", "Row", "Status"]

MAX_EVIDENCE = 6


class Status(StrEnum):
    """The result of one row."""

    PASS = "PASS"
    FAIL = "FAIL"
    SKIP = "SKIP"


@dataclass(frozen=True)
class Finding:
    """One probe's judgement of one row."""

    status: Status
    reason: str = ""
    evidence: tuple[str, ...] = ()
    probe: str = ""


class Findings:
    """Collects findings per requirement key (the probes share one instance)."""

    def __init__(self) -> None:
        self._by_key: dict[str, list[Finding]] = {}

    def add(
        self,
        key: str,
        status: Status,
        reason: str = "",
        evidence: Iterable[str] = (),
        *,
        probe: str = "",
    ) -> None:
        """Record a finding; raises ``KeyError`` if ``key`` is not a known row."""
        if key not in REQUIREMENTS:
            raise KeyError(f"unknown requirement key: {key}")
        self._by_key.setdefault(key, []).append(Finding(status, reason, tuple(evidence), probe))

    def judged(self, key: str) -> bool:
        """True once any finding was recorded for ``key``."""
        return key in self._by_key

    def failed_by(self, probe: str) -> dict[str, str]:
        """The keys ``probe`` recorded a FAIL for, with those reasons."""
        return {
            key: "; ".join(f.reason for f in found if f.probe == probe and f.status is Status.FAIL)
            for key, found in self._by_key.items()
            if any(f.probe == probe and f.status is Status.FAIL for f in found)
        }

    def forget(self, probe: str) -> None:
        """Drop every finding ``probe`` recorded (before it is run again)."""
        for key in list(self._by_key):
            kept = [f for f in self._by_key[key] if f.probe != probe]
            if kept:
                self._by_key[key] = kept
            else:
                del self._by_key[key]

    def rows(self) -> dict[str, Row]:
        """Merge the findings into one row per requirement, in catalogue order."""
        return {key: _merge(req, self._by_key.get(key, [])) for key, req in REQUIREMENTS.items()}


@dataclass(frozen=True)
class Row:
    """One line of the report."""

    requirement: Requirement
    status: Status
    reason: str
    evidence: tuple[str, ...] = ()

    @property
    def blocking(self) -> bool:
        """True for a failure that makes the agent NOT CONFORMANT (MUST or advertised CAP)."""
        return self.status is Status.FAIL and self.requirement.level in (Level.MUST, Level.CAP)

    def to_json(self) -> dict[str, Any]:
        """The row as JSON-ready data."""
        req = self.requirement
        return {
            "key": req.key,
            "id": req.id,
            "level": req.level.value,
            "drafts": list(req.drafts),
            "protocol_version": 1 if req.applies_to(V1) else 2,
            "differs": req.diff,
            "capability": req.capability,
            "description": req.text,
            "result": self.status.value,
            "reason": self.reason,
            "evidence": list(self.evidence),
        }


def _merge(req: Requirement, findings: list[Finding]) -> Row:
    if not findings:
        return Row(req, Status.SKIP, "not probed")
    fails = [f for f in findings if f.status is Status.FAIL]
    if fails:
        evidence = [e for f in fails for e in f.evidence][:MAX_EVIDENCE]
        return Row(req, Status.FAIL, _reasons(fails), tuple(evidence))
    passes = [f for f in findings if f.status is Status.PASS]
    if passes:
        return Row(req, Status.PASS, _reasons(passes))
    return Row(req, Status.SKIP, _reasons(findings))


def _reasons(findings: list[Finding]) -> str:
    seen: list[str] = []
    for f in findings:
        text = f"{f.reason} [{f.probe}]" if f.probe and f.reason else f.reason
        if text and text not in seen:
            seen.append(text)
    return "; ".join(seen)


@dataclass
class Report:
    """The outcome of one ``acp2 check`` run; ``draft`` is what its rows were judged
    under (``aug``, ``nov``, or ``v1`` when the agent answered protocol version 1)."""

    draft: str
    argv: list[str]
    rows: dict[str, Row]
    agent: dict[str, Any] = field(default_factory=dict)
    duration: float = 0.0
    #: The probes run when ``--only`` picked a subset (None: every probe ran).
    only: tuple[str, ...] | None = None
    #: The waits and parallelism used, and the probes rerun alone (None: not recorded).
    timing: Timing | None = None

    def under(self, draft: str) -> Report:
        """The same observations judged under ``draft`` (the probes do not depend on it)."""
        return replace(self, draft=draft)

    def judged(self) -> list[Row]:
        """The rows of the selected draft, in report order."""
        return [r for r in self.rows.values() if r.requirement.applies_to(self.draft)]

    def blocking(self) -> list[Row]:
        """The failures that decide the verdict."""
        return [r for r in self.judged() if r.blocking]

    @property
    def conformant(self) -> bool:
        """True when no MUST and no advertised-capability row failed."""
        return not self.blocking()

    @property
    def verdict(self) -> str:
        """``CONFORMANT`` or ``NOT CONFORMANT (n MUST failures)``; a partial (``--only``)
        run without failures is never called conformant: "no failures in the probes run"."""
        n = len(self.blocking())
        if n:
            return f"NOT CONFORMANT ({n} MUST failure{'s' if n != 1 else ''})"
        if self.only is not None:
            return f"no failures in the probes run ({', '.join(self.only)}; a partial check)"
        return "CONFORMANT"

    def counterpart(self, row: Row) -> Row | None:
        """The row judging the same observation under the other draft, if any."""
        key = row.requirement.counterpart
        return self.rows.get(key) if key else None

    def draft_notes(self) -> list[str]:
        """One sentence per judged failure that comes from a difference between the drafts.

        A failing row counts when it exists in some drafts only and the others either have
        no such rule or judge the same observation differently (it did not fail there).
        """
        notes = []
        for row in self.judged():
            req = row.requirement
            if row.status is not Status.FAIL or req.diff is None:
                continue
            twin = self.counterpart(row)
            what = f" -- {req.diff} {DIFFERENCES[req.diff]}" if req.diff in DIFFERENCES else ""
            if twin is None:
                others = " and ".join(d for d in DRAFTS if d not in req.drafts)
                notes.append(
                    f"{req.key}: a rule of {' and '.join(req.drafts)} only ({req.diff}); "
                    f"{others} has no such rule{what}"
                )
            elif twin.status is not Status.FAIL:
                notes.append(
                    f"{req.key}: the drafts differ here ({req.diff}); under "
                    f"{twin.requirement.drafts[0]} ({twin.requirement.key}) it is "
                    f"{twin.status.value}{what}"
                )
        return notes

    def to_json(self) -> dict[str, Any]:
        """The whole report as JSON-ready data (``--json FILE``)."""
        counts = {s.value: 0 for s in Status}
        for row in self.judged():
            counts[row.status.value] += 1
        return {
            "tool": "acp2 check",
            "draft": self.draft,
            "draft_name": V1_NAME if self.draft == V1 else DRAFT_NAMES[self.draft],
            "agent_command": self.argv,
            "agent": self.agent,
            "verdict": self.verdict,
            "conformant": self.conformant,
            "must_failures": len(self.blocking()),
            "counts": counts,
            "duration_seconds": round(self.duration, 3),
            "partial": self.only is not None,
            "probes_run": list(self.only) if self.only is not None else None,
            "timing": _timing_json(self.timing),
            "draft_notes": self.draft_notes(),
            "rows": [r.to_json() for r in self.judged()],
            "other_draft_rows": [r.to_json() for r in self.other_draft_rows()],
        }

    def other_draft_rows(self) -> list[Row]:
        """The rows of the other v2 draft (measured, not judged); none for a v1 agent,
        and never the v1 rows of a v2 agent (they are not probed)."""
        if self.draft == V1:
            return []
        return [
            r
            for r in self.rows.values()
            if not r.requirement.applies_to(self.draft) and not r.requirement.applies_to(V1)
        ]


def _timing_json(timing: Timing | None) -> dict[str, Any] | None:
    if timing is None:
        return None
    return {
        "timeout_seconds": timing.timeout,
        "timeout_scaled": timing.scaled,
        "startup_seconds": round(timing.startup, 3),
        "jobs": timing.jobs,
        "grace_seconds": timing.grace,
        "reruns": list(timing.reruns),
    }
