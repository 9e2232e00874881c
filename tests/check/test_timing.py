"""Waits and parallelism picked from the machine and the agent (``acp2.check.timing``),
and the rerun of a timing-sensitive probe that failed under load."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from check_support import REFERENCE, check

from acp2.check import CheckOptions, Status
from acp2.check.render import render_plain
from acp2.check.timing import DEFAULT_TIMEOUT, MAX_TIMEOUT, cpu_count, resolve, scaled_timeout

pytestmark = pytest.mark.anyio


def test_the_default_jobs_is_the_number_of_cpus_this_process_may_use() -> None:
    assert cpu_count() == len(os.sched_getaffinity(0))
    timing = resolve(CheckOptions(argv=["agent"]), startup=0.1)
    assert timing.jobs == cpu_count()
    assert (timing.timeout, timing.scaled) == (DEFAULT_TIMEOUT, True)


def test_the_wait_grows_with_a_slow_start_and_never_drops_below_the_default() -> None:
    assert scaled_timeout(0.05) == DEFAULT_TIMEOUT
    assert scaled_timeout(3.0) == 18.0
    slow = resolve(CheckOptions(argv=["agent"]), startup=4.0)
    assert slow.timeout == 24.0
    assert slow.grace == 1.0


def test_the_scaled_wait_has_a_ceiling_so_one_slow_start_cannot_stretch_the_check() -> None:
    # The preflight waits up to 30 s; six times that would be a three-minute wait.
    assert scaled_timeout(19.0) == 114.0
    assert scaled_timeout(25.0) == MAX_TIMEOUT == 120.0
    capped = resolve(CheckOptions(argv=["agent"]), startup=29.0)
    assert capped.timeout == MAX_TIMEOUT
    assert "(scaled from the start-up time, capped at 120s; agent start-up 29.00s)" in (
        capped.summary()
    )


def test_explicit_timeout_and_jobs_are_used_as_given() -> None:
    timing = resolve(CheckOptions(argv=["agent"], timeout=2.5, jobs=9), startup=4.0)
    assert (timing.timeout, timing.jobs, timing.scaled) == (2.5, 9, False)


async def test_a_slow_starting_agent_is_measured_once_and_gets_waits_scaled_from_it() -> None:
    # With the old fixed 1s-class waits this agent's probes got "initialize failed: no
    # answer" SKIPs; the preflight now measures its start-up and scales every wait.
    report = await check(
        [*REFERENCE, "--slow-start", "1.5"], timeout=None, only=frozenset({"handshake", "jsonrpc"})
    )
    timing = report.timing
    assert timing is not None
    assert timing.scaled
    assert timing.startup >= 1.5
    assert timing.timeout == scaled_timeout(timing.startup) >= DEFAULT_TIMEOUT
    probed = [r for r in report.judged() if r.requirement.key in ("IN-03", "TR-09", "TR-08")]
    assert [r.status for r in probed] == [Status.PASS] * 3
    assert "(scaled from the start-up time; agent start-up 1." in render_plain(report)


async def test_a_timing_row_that_fails_under_load_passes_when_rerun_alone(tmp_path: Path) -> None:
    # The agent hangs its first prompt after a cancel, once across all its processes: the
    # way an overloaded machine makes PL-22 fail. The rerun alone passes, and says so.
    marker = tmp_path / "flaked"
    report = await check(
        [*REFERENCE, "--flaky-once", str(marker)], timeout=2.0, only=frozenset({"cancel"})
    )
    assert marker.exists()
    row = report.rows["PL-22"]
    assert row.status is Status.PASS
    assert "passed when rerun alone; in the parallel run: the session did not run" in row.reason
    assert report.timing is not None
    assert report.timing.reruns == ["cancel: PL-22 failed in the parallel run; passed"]
    text = render_plain(report)
    assert "timing-sensitive probes rerun alone after a failure (waits 4s each):" in text
    assert report.to_json()["timing"]["reruns"] == report.timing.reruns


async def test_a_real_failure_fails_again_when_rerun_and_stays_a_failure() -> None:
    report = await check([*REFERENCE, "--break", "cancel-as-error"], only=frozenset({"cancel"}))
    assert report.rows["PL-19"].status is Status.FAIL
    assert report.timing is not None
    (note,) = report.timing.reruns
    assert note.startswith("cancel: PL-18, PL-19 failed in the parallel run; failed again")
    assert not report.conformant


async def test_a_probe_that_is_not_timing_sensitive_is_not_rerun() -> None:
    report = await check(
        [*REFERENCE, "--break", "dies-on-invalid-json"], only=frozenset({"invalid-json"})
    )
    assert report.rows["TR-13:json"].status is Status.FAIL
    assert report.timing is not None
    assert report.timing.reruns == []


async def test_a_probe_whose_agent_did_not_answer_initialize_in_time_is_rerun_alone(
    tmp_path: Path,
) -> None:
    # The second agent process (the first after the preflight) never answers initialize,
    # as a slow-starting agent under load did ("initialize failed: no answer" SKIPs).
    marker = str(tmp_path / "init")
    report = await check(
        [*REFERENCE, "--flaky-init", marker], timeout=1.0, only=frozenset({"jsonrpc"})
    )
    assert report.rows["TR-09"].status is Status.PASS
    assert report.timing is not None
    (note,) = report.timing.reruns
    assert note.startswith("jsonrpc: stopped (not reached: initialize failed: no answer")
    assert note.endswith("in the parallel run; passed")


async def test_a_failing_row_of_the_other_draft_triggers_no_rerun() -> None:
    # An Aug agent never sends $/cancel_request: the Nov-only PL-16:nov fails, but it does
    # not decide an Aug verdict, so it is not worth a rerun.
    report = await check(REFERENCE, only=frozenset({"permission-cancel"}))
    assert report.rows["PL-16:nov"].status is Status.FAIL
    assert report.timing is not None
    assert report.timing.reruns == []


async def test_the_start_up_lasts_until_a_request_after_initialize_is_answered() -> None:
    # acp2's agents answer initialize before importing their runtime: measured to that
    # early answer, the start-up looked short while the first real request paid the rest.
    report = await check(
        [*REFERENCE, "--slow-after-init", "1.5"], timeout=None, only=frozenset({"handshake"})
    )
    assert report.timing is not None
    assert report.timing.startup >= 1.5
    assert report.timing.timeout == scaled_timeout(report.timing.startup)


async def test_a_probe_rerun_alone_waits_twice_as_long_as_in_the_parallel_run() -> None:
    # The answer to a request for version 1 takes 2.5 s: past the parallel run's wait
    # (1.5 s plus the start-up), within the rerun's (3 s plus the start-up).
    report = await check(
        [*REFERENCE, "--slow-v1", "2.5"], timeout=1.5, only=frozenset({"version-1"})
    )
    row = report.rows["IN-04:1:aug"]
    assert row.status is Status.PASS
    assert "passed when rerun alone; in the parallel run: no answer" in row.reason
    assert report.timing is not None
    # (IN-04:1:nov is a row of the other draft: it does not decide this rerun.)
    assert report.timing.reruns == ["version-1: IN-04:1:aug failed in the parallel run; passed"]


async def test_the_audit_judges_a_rerun_probe_by_its_last_run_only(tmp_path: Path) -> None:
    # The first v1 answer says version 0 (IN-04:1:aug fails); the rerun's says 1. Both
    # runs' frames used to reach the audit: "2 frames of v1 answers" for one probe.
    marker = str(tmp_path / "zero")
    argv = [*REFERENCE, "--v1-downgrade", "--v1-zero-once", marker]
    report = await check(argv, only=frozenset({"version-1"}))
    assert report.rows["IN-04:1:aug"].status is Status.PASS
    assert report.timing is not None
    (note,) = report.timing.reruns
    assert note.startswith("version-1: IN-04:1:aug")
    assert "1 frames of v1 answers valid under acp-v1.json" in report.rows["SCHEMA:aug"].reason
