"""Printing a :class:`Report`: a table (rich when importable, plain text otherwise),
the draft notes, and the verdict line (always the last line: ``VERDICT: ...``)."""

from __future__ import annotations

import shlex
import sys
from typing import Any, TextIO

from acp2.check.requirements import (
    BOTH_DRAFTS_ADVICE,
    DRAFT_NAMES,
    DRAFT_SOURCES,
    SPEC_URL,
    V1,
    V1_SPEC_URL,
)
from acp2.check.results import Report, Row, Status
from acp2.check.timing import RERUN_FACTOR

__all__ = ["DRAFT_TITLES", "print_report", "render_plain"]

DRAFT_TITLES = {
    draft: f"{draft}: {name} -- {DRAFT_SOURCES[draft]}" for draft, name in DRAFT_NAMES.items()
}
_WIDTHS = (20, 6, 7, 6)


def _header(report: Report) -> list[str]:
    info: Any = report.agent.get("info") or {}
    who = f"{info.get('name', '?')} {info.get('version', '')}".strip() if info else "unknown"
    version = report.agent.get("protocolVersion")
    lines = [
        f"acp2 check -- {shlex.join(report.argv)}",
        f"agent: {who}" + (f", protocol {version}" if version is not None else ""),
        f"judged against {DRAFT_TITLES[report.draft]}"
        if report.draft != V1
        else f"judged as ACP v1 (the agent answered protocol version {version or 1})",
    ]
    if report.timing is not None:
        lines.append(report.timing.summary())
    if report.only is not None:
        lines.append(f"partial check: only {', '.join(report.only)} (--only)")
    return lines


def _draft(row: Row) -> str:
    req = row.requirement
    return req.draft_label + ("*" if req.diff and req.diff != "schema" else "")


def _details(row: Row, verbose: bool) -> list[str]:
    lines = []
    if row.reason and (verbose or row.status is not Status.PASS or row.requirement.level == "INFO"):
        lines.append(row.reason)
    if row.status is Status.FAIL:
        lines.extend(f"  {e}" for e in row.evidence)
    return lines


def _footer(report: Report) -> list[str]:
    rows = report.judged()
    counts = {s: sum(1 for r in rows if r.status is s) for s in Status}
    lines = [
        f"PASS {counts[Status.PASS]}  FAIL {counts[Status.FAIL]}  SKIP {counts[Status.SKIP]}"
        f"  ({report.duration:.1f}s)",
        "DRAFT: v1 = a row of ACP v1 (the agent answered protocol version 1); "
        "CAP = MUST once advertised"
        if report.draft == V1
        else "DRAFT: all = every draft, nov+ = nov and preview; * = a row where the drafts "
        "differ (failures are explained below); CAP = MUST once advertised",
    ]
    reruns = report.timing.reruns if report.timing is not None else []
    if reruns and report.timing is not None:
        waits = report.timing.timeout * RERUN_FACTOR
        lines.append(
            f"timing-sensitive probes rerun alone after a failure (waits {waits:g}s each):"
        )
        lines.extend(f"  - {r}" for r in reruns)
    notes = report.draft_notes()
    if notes:
        lines.append("failures where the drafts contradict each other:")
        lines.extend(f"  - {n}" for n in notes)
        lines.append(f"  ({BOTH_DRAFTS_ADVICE})")
    lines.append(
        f"ACP v2 specification: {SPEC_URL}"
        if report.draft != V1
        else f"ACP v1 specification: {V1_SPEC_URL}"
    )
    return lines


def render_plain(report: Report, *, verbose: bool = False) -> str:
    """The whole report as plain text, ending with the verdict line."""
    w = _WIDTHS
    lines = [*_header(report), ""]
    lines.append(
        f"{'ID':<{w[0]}} {'LEVEL':<{w[1]}} {'DRAFT':<{w[2]}} {'RESULT':<{w[3]}} REQUIREMENT"
    )
    indent = " " * (sum(w) + 4)
    for row in report.judged():
        req = row.requirement
        lines.append(
            f"{req.key:<{w[0]}} {req.level.value:<{w[1]}} {_draft(row):<{w[2]}} "
            f"{row.status.value:<{w[3]}} {req.text}"
        )
        lines.extend(indent + d for d in _details(row, verbose))
    lines += ["", *_footer(report), f"VERDICT: {report.verdict}"]
    return "\n".join(lines) + "\n"


def _print_rich(report: Report, file: TextIO, verbose: bool) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(file=file, width=max(120, Console(file=file).width), soft_wrap=False)
    for line in _header(report):
        console.print(escape(line), highlight=False)
    table = Table(show_lines=False, header_style="bold")
    for name in ("ID", "Level", "Draft", "Result", "Requirement"):
        table.add_column(name, no_wrap=name != "Requirement", overflow="fold")
    style = {Status.PASS: "green", Status.FAIL: "bold red", Status.SKIP: "yellow"}
    for row in report.judged():
        req = row.requirement
        text = escape(req.text)
        extra = _details(row, verbose)
        if extra:
            text += "\n[dim]" + escape("\n".join(extra)) + "[/dim]"
        result = f"[{style[row.status]}]{row.status.value}[/]"
        table.add_row(req.key, req.level.value, _draft(row), result, text)
    console.print(table)
    for line in _footer(report):
        console.print(escape(line), highlight=False)
    colour = "bold green" if report.conformant else "bold red"
    console.print(f"[{colour}]VERDICT: {escape(report.verdict)}[/]", highlight=False)


def print_report(
    report: Report, file: TextIO | None = None, *, plain: bool = False, verbose: bool = False
) -> None:
    """Print the report to ``file`` (stdout): rich if importable and not ``plain``."""
    out = file or sys.stdout
    if not plain:
        try:
            _print_rich(report, out, verbose)
            return
        except ImportError:
            pass
    out.write(render_plain(report, verbose=verbose))
