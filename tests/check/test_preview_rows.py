"""The checker's rows for the Preview's unstable surface: usage on idles (US-05), fork
(SS-27), title (SS-28), providers (IN-19) and replay_complete per resume (SS-29). The
reference agent with ``--preview`` passes them all; each ``--break`` fails exactly its
row; an agent advertising none of them gets SKIP for the capability rows."""

from __future__ import annotations

import pytest
from check_support import REFERENCE, TEST_AGENT, check

from acp2.check import Status

pytestmark = pytest.mark.anyio

ONLY = frozenset({"preview", "prompt"})
ROWS = ("US-05", "SS-27", "SS-28", "IN-19", "SS-29")


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


async def test_acp2s_own_agent_passes_the_preview_rows() -> None:
    report = await check(TEST_AGENT, only=ONLY)
    statuses = {key: report.rows[key].status for key in ROWS}
    assert statuses["SS-27"] is Status.PASS
    assert statuses["SS-28"] is Status.PASS
    assert statuses["SS-29"] is Status.PASS
