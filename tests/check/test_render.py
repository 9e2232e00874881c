"""The printed report: a row per requirement, evidence for failures, the verdict last."""

from __future__ import annotations

import io

import pytest

from acp2.check.render import print_report, render_plain
from acp2.check.results import Findings, Report, Status


def sample(draft: str = "aug") -> Report:
    findings = Findings()
    findings.add("TR-03", Status.FAIL, "a log line", ["+0.1s [start] <- INFO hello"], probe="audit")
    findings.add("PL-07", Status.PASS, "idle with end_turn")
    findings.add("IN-04:1:nov", Status.FAIL, "answered 2")
    findings.add("IN-04:1:aug", Status.PASS, "answered 2")
    agent = {"info": {"name": "demo", "version": "1.0"}, "protocolVersion": 2}
    return Report(draft, ["demo-agent", "--stdio"], findings.rows(), agent, 1.5)


def test_the_plain_report_shows_rows_reasons_evidence_and_ends_with_the_verdict() -> None:
    text = render_plain(sample())
    lines = text.splitlines()
    assert lines[0] == "acp2 check -- demo-agent --stdio"
    assert "agent: demo 1.0, protocol 2" in lines
    assert any(line.startswith("TR-03") and "MUST" in line and "FAIL" in line for line in lines)
    assert "INFO hello" in text
    assert "a log line [audit]" in text
    assert "IN-04:1:nov" not in text  # a Nov row is not judged under aug
    assert lines[-1] == "VERDICT: NOT CONFORMANT (1 MUST failure)"


def test_under_the_other_draft_the_report_says_which_failures_are_draft_differences() -> None:
    text = render_plain(sample("nov"))
    assert "IN-04:1:nov          MUST   nov+*   FAIL" in text
    assert "under aug (IN-04:1:aug) it is PASS" in text
    assert text.splitlines()[-1] == "VERDICT: NOT CONFORMANT (2 MUST failures)"


def test_the_preview_judges_the_nov_rules_and_its_own_schema_row() -> None:
    findings = Findings()
    findings.add("IN-04:1:nov", Status.FAIL, "answered 2")
    findings.add("IN-04:1:aug", Status.PASS, "answered 2")
    findings.add("SCHEMA:preview", Status.FAIL, "SubagentUpdate at sessionId: not a string")
    findings.add("SCHEMA:nov", Status.PASS, "12 frames valid")
    findings.add("SS-16:nov", Status.FAIL, "no state_update before the resume response")
    report = Report("preview", ["demo"], findings.rows(), {}, 0.2)
    text = render_plain(report)
    assert "judged against preview: ACP v2 Preview (2026-11-20) -- modelled:" in text
    assert "IN-04:1:nov          MUST   nov+*   FAIL" in text
    assert "SCHEMA:preview       MUST   preview FAIL" in text
    assert "SCHEMA:nov " not in text
    assert "SCHEMA:aug " not in text
    notes = report.draft_notes()
    assert any("under aug (IN-04:1:aug) it is PASS" in n for n in notes)
    assert any("under nov (SCHEMA:nov) it is PASS" in n for n in notes)
    assert any(
        n.startswith("SS-16:nov: a rule of nov and preview only (D-14); aug has no such rule")
        for n in notes
    )
    assert "DRAFT: all = every draft, nov+ = nov and preview" in text
    assert report.to_json()["draft_name"] == "ACP v2 Preview (2026-11-20)"
    assert text.splitlines()[-1] == "VERDICT: NOT CONFORMANT (3 MUST failures)"


def test_passing_reasons_appear_only_when_verbose() -> None:
    assert "idle with end_turn" not in render_plain(sample())
    assert "idle with end_turn" in render_plain(sample(), verbose=True)


@pytest.mark.parametrize("plain", [True, False])
def test_printing_works_with_and_without_rich(plain: bool) -> None:
    out = io.StringIO()
    print_report(sample(), out, plain=plain)
    assert out.getvalue().rstrip().splitlines()[-1] == "VERDICT: NOT CONFORMANT (1 MUST failure)"
    assert "TR-03" in out.getvalue()


def test_drafts_are_named_by_what_they_are_and_nothing_outside_is_cited() -> None:
    aug, nov, preview = (render_plain(sample(d)) for d in ("aug", "nov", "preview"))
    assert "judged against aug: ACP v2 alpha.3 (Aug 2026) -- schema 2.0.0-alpha.3" in aug
    assert "judged against nov: TypeScript SDK 2.4.0 (Nov 2026) -- the v2 schema of" in nov
    assert "judged against preview: ACP v2 Preview (2026-11-20) -- modelled" in preview
    for text in (aug, nov, preview):
        assert "seed" not in text
        assert "CHECKLIST" not in text
        assert "ACP v2 specification: https://agentclientprotocol.com/protocol/v2/" in text
    # the difference a draft note points at is explained in the report itself
    assert "D-05 an unsupported protocolVersion: aug answers a result" in nov
    assert "to work with clients of both drafts: answer session/prompt with {messageId}" in nov


def test_a_partial_report_without_failures_is_not_called_conformant() -> None:
    findings = Findings()
    findings.add("PL-07", Status.PASS, "idle with end_turn")
    report = Report("aug", ["demo"], findings.rows(), {}, 0.1, only=("prompt",))
    last = render_plain(report).splitlines()[-1]
    assert last == "VERDICT: no failures in the probes run (prompt; a partial check)"
    assert report.conformant


def test_a_v1_report_explains_its_draft_column_without_the_v2_draft_legend() -> None:
    findings = Findings()
    findings.add("V1-PL-04", Status.PASS, "answered cancelled")
    agent = {"info": {"name": "old", "version": "0.1"}, "protocolVersion": 1}
    text = render_plain(Report("v1", ["old-agent"], findings.rows(), agent, 1.0))
    assert "DRAFT: v1 = a row of ACP v1" in text
    assert "nov+" not in text
    assert "drafts differ" not in text
