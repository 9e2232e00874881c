"""The checker's rows for the Preview's unstable surface: usage on idles (US-05), fork
(SS-27), title (SS-28), providers (IN-19), replay_complete per session per resume (SS-29)
and the subagent rules (SS-30 announcements, SS-31 session message shapes, SS-32 session
links from tool calls). The
reference agent with ``--preview`` passes them all; each ``--break`` fails exactly its
row; an agent advertising none of them gets SKIP for the capability rows."""

from __future__ import annotations

import pytest
from check_support import REFERENCE, TEST_AGENT, check

from acp2.check import Status

pytestmark = pytest.mark.anyio

ONLY = frozenset({"preview", "prompt"})
ROWS = ("US-05", "SS-27", "SS-28", "IN-19", "SS-29", "SS-30", "SS-31", "SS-32")
SUBAGENT_ROWS = ("SS-30", "SS-31", "SS-32")


async def test_an_agent_serving_the_preview_surface_passes_every_row() -> None:
    report = await check([*REFERENCE, "--preview"], only=ONLY)
    assert {key: report.rows[key].status for key in ROWS} == dict.fromkeys(ROWS, Status.PASS)


@pytest.mark.parametrize(
    ("rule", "row", "reason"),
    [
        ("idle-bad-usage", "US-05", "usage.inputTokens must be a non-negative integer"),
        ("fork-same-id", "SS-27", "the fork has the source's id"),
        ("title-no-answer", "SS-28", "no title in the answer"),
        ("providers-headers", "IN-19", "current must be {apiType, baseUrl} only"),
        ("replay-complete-twice", "SS-29", "replay_complete x2"),
        ("replay-child-twice", "SS-29", "per replayed child: child_4 x2"),
        ("subagent-own-id", "SS-30", "subagent_update names its parent's own id"),
        ("subagent-late", "SS-30", "had updates before its subagent_update announced it"),
        ("session-message-shape", "SS-31", "session_message: content must be an array"),
        ("session-link-unknown", "SS-32", "names 'sess_nowhere', a session never opened"),
    ],
)
async def test_each_broken_rule_fails_its_row(rule: str, row: str, reason: str) -> None:
    report = await check([*REFERENCE, "--preview", "--break", rule], only=ONLY)
    assert report.rows[row].status is Status.FAIL
    assert reason in report.rows[row].reason
    others = [k for k in ROWS if k != row and report.rows[k].status is Status.FAIL]
    assert others == []


async def test_without_the_capabilities_the_capability_rows_are_skipped() -> None:
    report = await check(REFERENCE, only=ONLY)
    for key in ("SS-27", "SS-28", "IN-19"):
        assert report.rows[key].status is Status.SKIP, key
    assert report.rows["SS-29"].status is Status.PASS  # no marker at all is fine


async def test_an_agent_without_subagents_passes_the_subagent_rows_saying_so() -> None:
    report = await check(REFERENCE, only=ONLY)
    reasons = {key: report.rows[key].reason for key in SUBAGENT_ROWS}
    assert all(report.rows[key].status is Status.PASS for key in SUBAGENT_ROWS)
    assert reasons["SS-30"].startswith("no subagent updates")
    assert reasons["SS-31"].startswith("no session messages")
    assert reasons["SS-32"].startswith("no session references")


async def test_the_subagent_rows_count_what_the_preview_agent_sent() -> None:
    report = await check([*REFERENCE, "--preview"], only=ONLY)
    assert "each naming a child announced before its updates" in report.rows["SS-30"].reason
    assert "per replayed child: child_4 x1" in report.rows["SS-29"].reason


async def test_acp2s_own_agent_passes_the_preview_rows() -> None:
    report = await check(TEST_AGENT, only=ONLY)
    statuses = {key: report.rows[key].status for key in ROWS}
    assert statuses["SS-27"] is Status.PASS
    assert statuses["SS-28"] is Status.PASS
    assert statuses["SS-29"] is Status.PASS
    assert all(statuses[key] is Status.PASS for key in SUBAGENT_ROWS)


async def test_acp2s_own_agent_delegating_to_a_subagent_passes_the_subagent_rows() -> None:
    # The test agent's "subagent" scenario runs acp2's real child sessions (agent.children,
    # agent.messaging): announced, messaged, linked from its tool call, replayed.
    report = await check(TEST_AGENT, only=ONLY, prompt="subagent hello")
    assert all(report.rows[key].status is Status.PASS for key in ("SS-29", *SUBAGENT_ROWS))
    assert "per replayed child: " in report.rows["SS-29"].reason
    assert "each to a known session" in report.rows["SS-32"].reason
