"""``acp2 check`` against the acp2 test agent: CONFORMANT under the seed's revision, and
under the Nov draft every failure is a row where the drafts contradict each other.

One check run serves both tests: the probes do not depend on the draft, only the judging.
"""

from __future__ import annotations

import pytest
from check_support import TEST_AGENT, check, checker_errors, failing

from acp2.check import Report, Status

pytestmark = pytest.mark.anyio

_RUNS: dict[str, Report] = {}


async def _test_agent_report() -> Report:
    """The report of one check of the test agent (made once per test session)."""
    if "aug" not in _RUNS:
        _RUNS["aug"] = await check(TEST_AGENT)
    return _RUNS["aug"]


async def test_the_test_agent_is_conformant_under_the_seed_revision() -> None:
    report = await _test_agent_report()
    assert checker_errors(report) == []
    assert report.verdict == "CONFORMANT", failing(report)
    unsettled = {r.requirement.key for r in report.judged() if r.status is not Status.PASS}
    # Every scenario is exercised: nothing failed, and only what the test agent does not
    # offer is skipped (it has no model providers and reports no token usage).
    assert unsettled == {"IN-19", "US-05"}


async def test_the_version_1_probe_gets_a_v1_answer_judged_against_the_v1_schema() -> None:
    # An acp2 agent answers a v1 client in v1 (the probe's request is valid under both
    # versions, and the bridge peek no longer routes it to v2).
    report = await _test_agent_report()
    assert "IN-04:1:aug" in report.rows
    assert report.rows["IN-04:1:aug"].reason.startswith("answered version 1")
    assert "1 frames of v1 answers valid under acp-v1.json" in report.rows["SCHEMA:aug"].reason


async def test_under_the_nov_draft_only_rows_where_the_drafts_differ_can_fail() -> None:
    report = (await _test_agent_report()).under("nov")
    failed = [r for r in report.judged() if r.status is Status.FAIL]
    assert all(r.requirement.diff is not None for r in failed), failed
    assert len(report.draft_notes()) == len(failed)
