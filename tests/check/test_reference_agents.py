"""Whole checks of the hand-written reference agent: conformant as written, and NOT
CONFORMANT -- naming the broken requirement -- once one rule is broken."""

from __future__ import annotations

import pytest
from check_support import REFERENCE, check, checker_errors, failing

from acp2.check import Status

pytestmark = pytest.mark.anyio


async def test_the_reference_agent_is_conformant_under_the_seed_revision() -> None:
    report = await check(REFERENCE)
    assert checker_errors(report) == []
    assert report.verdict == "CONFORMANT", failing(report)
    skipped = {r.requirement.key for r in report.judged() if r.status is Status.SKIP}
    # Not advertised (content types, the Preview's fork / title / providers), or never
    # sent (no usage on idles without --preview).
    assert skipped == {
        "PL-02:image",
        "PL-02:audio",
        "PL-02:resource",
        "SS-27",
        "SS-28",
        "IN-19",
        "US-05",
    }


async def test_an_agent_following_the_nov_draft_gets_an_honest_verdict_under_each_draft() -> None:
    report = await check([*REFERENCE, "--nov"], draft="nov")
    assert report.verdict == "CONFORMANT", failing(report)
    under_aug = report.under("aug")
    assert failing(under_aug) == {"IN-04:1:aug", "TR-14:notifications"}
    notes = " ".join(under_aug.draft_notes())
    assert "(D-05); under nov (IN-04:1:nov) it is PASS" in notes
    assert "(D-01); under nov (D-01:nov) it is PASS" in notes


async def test_a_v1_answer_to_the_version_1_probe_is_validated_against_the_v1_schema() -> None:
    # A dual-version agent answers a request for 1 in v1's shape (agentInfo,
    # agentCapabilities): valid under v1, so no SCHEMA row fails ("'info' is a required
    # property" was a false verdict), and the run still judges the agent as v2.
    report = await check([*REFERENCE, "--v1-downgrade"], only=frozenset({"version-1"}))
    assert report.draft == "aug"
    for key in ("SCHEMA:aug", "SCHEMA:nov", "IN-04:1:aug", "IN-04:1:nov"):
        assert report.rows[key].status is Status.PASS, (key, report.rows[key].reason)
    assert "1 frames of v1 answers valid under acp-v1.json" in report.rows["SCHEMA:aug"].reason


async def test_capability_rows_are_skipped_for_an_agent_without_sessions() -> None:
    report = await check([*REFERENCE, "--no-session"], only=frozenset({"sessions", "content"}))
    assert report.conformant
    assert report.verdict == "no failures in the probes run (sessions, content; a partial check)"
    gated = [r for r in report.judged() if r.requirement.level == "CAP"]
    assert gated
    assert all(r.status is Status.SKIP for r in gated)
    assert "does not advertise capabilities.session" in report.rows["SS-03"].reason


async def test_unsolicited_notifications_are_reported_and_never_counted_as_answers() -> None:
    # Real agents send `_auth/status_update` right after initialize and at random moments;
    # the malformed-input probes used to count them as answers (a false, racy FAIL).
    for _ in range(2):
        report = await check([*REFERENCE, "--notify-auth"])
        assert checker_errors(report) == []
        failed = {r.requirement.key for r in report.judged() if r.status is Status.FAIL}
        assert failed == set(), {k: report.rows[k].reason for k in failed}
        assert report.verdict == "CONFORMANT"
        assert "_auth/status_update x" in report.rows["EX-04:notes"].reason


async def test_a_quiet_agent_has_no_notifications_to_report() -> None:
    report = await check(REFERENCE, only=frozenset({"handshake"}))
    assert report.rows["EX-04:notes"].reason == "none [audit]"


UTF8 = frozenset({"invalid-utf8"})


async def test_a_line_of_invalid_utf8_may_be_rejected_or_decoded_leniently() -> None:
    # The transports page binds the sender ("MUST be UTF-8"), not the receiver, and RFC
    # 8259 lets a parser accept non-JSON forms: dispatching the request with U+FFFD (the
    # TS SDK does) was a false FAIL of the real v2 adapters.
    strict = await check(REFERENCE, only=UTF8)
    lenient = await check([*REFERENCE, "--lenient-utf8"], only=UTF8)
    assert strict.rows["TR-01:utf8"].status is Status.PASS
    assert strict.rows["TR-01:utf8"].reason.startswith("rejected")
    assert lenient.rows["TR-01:utf8"].status is Status.PASS
    assert "decoded leniently (U+FFFD) and answered" in lenient.rows["TR-01:utf8"].reason


async def test_an_agent_that_dies_on_invalid_utf8_fails_the_row() -> None:
    report = await check([*REFERENCE, "--break", "dies-on-invalid-json"], only=UTF8, timeout=2.0)
    assert report.rows["TR-01:utf8"].status is Status.FAIL
    assert "stopped answering" in report.rows["TR-01:utf8"].reason


BROKEN = [
    # (rule broken, the row that must fail, every blocking row allowed to fail with it)
    ("no-idle", "PL-07", {"PL-07", "PL-18", "PL-18:permission", "IN-11"}),
    ("idle-no-stop-reason", "PL-07", {"PL-07"}),
    ("no-message-id", "MU-01", {"MU-01", "SCHEMA:aug"}),
    ("answers-notifications", "TR-08", {"TR-08", "TR-22", "TR-14:notifications"}),
    ("cancel-as-error", "PL-19", {"PL-19", "PL-18", "PL-18:permission"}),
    ("stdout-logs", "TR-03", {"TR-03"}),
    ("dies-on-invalid-json", "TR-13:json", {"TR-13:json"}),
    ("duplicate-config-ids", "CO-10", {"CO-10"}),
]


@pytest.mark.parametrize("extra", [[], ["--notify-auth"]], ids=["quiet", "notifying"])
@pytest.mark.parametrize(("rule", "key", "allowed"), BROKEN, ids=[b[0] for b in BROKEN])
async def test_a_broken_agent_is_not_conformant_and_the_broken_rule_is_named(
    rule: str, key: str, allowed: set[str], extra: list[str]
) -> None:
    report = await check([*REFERENCE, "--break", rule, *extra], timeout=2.0)
    assert checker_errors(report) == []
    assert not report.conformant
    assert key in failing(report) <= allowed, failing(report)
    row = report.rows[key]
    assert row.reason
    assert row.evidence, row  # the offending frames are shown
    assert report.verdict.startswith("NOT CONFORMANT (")
