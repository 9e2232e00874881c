"""``acp2 check``'s background probe (TC-13, TM-10; RFD "v2 Background Work", Nov and
the Preview): ``tool_call/cancel`` / ``terminal/cancel`` for ids that do not exist get an
error and the connection goes on; accepting them fails; Aug judges neither."""

from __future__ import annotations

import pytest
from check_support import REFERENCE, TEST_AGENT, check, checker_errors

from acp2.check import Status

pytestmark = pytest.mark.anyio

ROWS = ("TC-13:unknown", "TM-10:unknown")
ONLY = frozenset({"background"})


@pytest.mark.parametrize("draft", ["nov", "preview"])
async def test_the_test_agent_answers_unknown_cancels_with_invalid_params(draft: str) -> None:
    report = await check(TEST_AGENT, draft=draft, only=ONLY)
    assert checker_errors(report) == []
    for key in ROWS:
        assert report.rows[key].status is Status.PASS
        assert "answered -32602" in report.rows[key].reason


async def test_an_agent_without_background_work_may_answer_method_not_found() -> None:
    report = await check([*REFERENCE, "--nov"], draft="nov", only=ONLY)
    for key in ROWS:
        assert report.rows[key].status is Status.PASS
        assert "answered -32601 (the schema asks -32602" in report.rows[key].reason


async def test_an_agent_that_accepts_cancelling_what_does_not_exist_fails() -> None:
    argv = [*REFERENCE, "--nov", "--break", "accepts-unknown-cancel"]
    report = await check(argv, draft="nov", only=ONLY)
    assert not report.conformant
    for key in ROWS:
        row = report.rows[key]
        assert row.status is Status.FAIL
        assert "answered with a success" in row.reason
        assert row.evidence


async def test_under_aug_nothing_is_sent_and_the_rows_do_not_apply() -> None:
    report = await check([*REFERENCE, "--break", "accepts-unknown-cancel"], only=ONLY)
    assert report.conformant
    assert all(key not in {r.requirement.key for r in report.judged()} for key in ROWS)
