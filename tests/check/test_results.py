"""Merging findings into rows, and the verdict: only MUST and advertised CAP rows count."""

from __future__ import annotations

import pytest

from acp2.check.results import Findings, Report, Status


def report(findings: Findings, draft: str = "aug") -> Report:
    return Report(draft, ["agent"], findings.rows())


def test_a_row_fails_when_any_probe_failed_it_and_keeps_the_evidence() -> None:
    findings = Findings()
    findings.add("PL-07", Status.PASS, "turn 1 ok", probe="prompt")
    findings.add("PL-07", Status.FAIL, "no stop reason", ["<- frame"], probe="cancel")
    row = findings.rows()["PL-07"]
    assert row.status is Status.FAIL
    assert row.reason == "no stop reason [cancel]"
    assert row.evidence == ("<- frame",)


def test_a_row_nobody_judged_is_skipped_as_not_probed() -> None:
    row = Findings().rows()["TR-03"]
    assert (row.status, row.reason) == (Status.SKIP, "not probed")


def test_unknown_keys_are_refused() -> None:
    with pytest.raises(KeyError):
        Findings().add("XX-99", Status.PASS)


def test_must_and_capability_failures_make_the_agent_not_conformant() -> None:
    findings = Findings()
    findings.add("TR-03", Status.FAIL, "garbage")
    findings.add("SS-23", Status.FAIL, "delete failed")
    result = report(findings)
    assert not result.conformant
    assert result.verdict == "NOT CONFORMANT (2 MUST failures)"


def test_should_info_and_skipped_rows_never_change_the_verdict() -> None:
    findings = Findings()
    findings.add("TR-11", Status.FAIL, "wrong code")
    findings.add("D-09:aug", Status.FAIL, "no messageId")
    findings.add("PL-02:image", Status.SKIP, "not advertised")
    assert report(findings).verdict == "CONFORMANT"


def test_rows_of_the_other_draft_do_not_count() -> None:
    findings = Findings()
    findings.add("IN-04:1:nov", Status.FAIL, "answered 2")
    findings.add("IN-04:1:aug", Status.PASS, "answered 2")
    assert report(findings, "aug").conformant
    nov = report(findings, "nov")
    assert nov.verdict == "NOT CONFORMANT (1 MUST failure)"
    (note,) = nov.draft_notes()
    assert note.startswith(
        "IN-04:1:nov: the drafts differ here (D-05); under aug (IN-04:1:aug) it is PASS"
    )
    assert "-- D-05 an unsupported protocolVersion: aug answers a result" in note  # shipped text


def test_a_failure_under_both_drafts_is_not_blamed_on_the_drafts() -> None:
    findings = Findings()
    findings.add("SCHEMA:aug", Status.FAIL, "bad")
    findings.add("SCHEMA:nov", Status.FAIL, "bad")
    assert report(findings).draft_notes() == []


def test_the_json_report_lists_judged_rows_and_the_other_drafts_rows() -> None:
    findings = Findings()
    findings.add("PL-16:nov", Status.FAIL, "no $/cancel_request")
    data = report(findings, "aug").to_json()
    assert data["verdict"] == "CONFORMANT"
    assert data["must_failures"] == 0
    assert "PL-16:nov" not in {r["key"] for r in data["rows"]}
    other = {r["key"]: r for r in data["other_draft_rows"]}
    assert other["PL-16:nov"]["result"] == "FAIL"
    assert other["PL-16:nov"]["differs"] == "D-15"


def test_v1_rows_are_never_other_draft_rows_and_a_v1_report_has_none() -> None:
    findings = Findings()
    findings.add("V1-PL-04", Status.FAIL, "answered end_turn")
    findings.add("PL-16:nov", Status.PASS, "")
    v2 = report(findings, "aug").to_json()
    assert "V1-PL-04" not in {r["key"] for r in v2["rows"] + v2["other_draft_rows"]}
    assert v2["conformant"]
    v1 = report(findings, "v1").to_json()
    assert v1["other_draft_rows"] == []
    assert [r["key"] for r in v1["rows"] if r["result"] == "FAIL"] == ["V1-PL-04"]
    assert {r["protocol_version"] for r in v1["rows"]} == {1}
    assert {r["protocol_version"] for r in v2["rows"]} == {2}
    assert v1["verdict"] == "NOT CONFORMANT (1 MUST failure)"
    assert v1["draft_name"].startswith("ACP v1")
