"""A FAIL row says why it failed, never the passing reason, even when the agent also
sends notifications of its own in the probe's window (TR-14, EX-04)."""

from __future__ import annotations

import pytest
from check_support import REFERENCE, check

from acp2.check import Status
from acp2.check.render import render_plain

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("extra", [[], ["--notify-auth"]], ids=["quiet", "notifying"])
async def test_an_empty_batch_answered_with_an_array_fails_with_the_failing_reason(
    extra: list[str],
) -> None:
    report = await check(
        [*REFERENCE, "--break", "empty-batch-array", *extra], only=frozenset({"batches"})
    )
    row = report.rows["TR-14:empty"]
    assert row.status is Status.FAIL
    assert row.reason.startswith("expected one -32600 error object, got 1 answer(s)")
    assert "one -32600 object" not in row.reason
    assert row.evidence
    text = render_plain(report)
    assert "one -32600 object [batches]" not in text  # the passing reason, as printed
    # a notification in the window is named, not counted: "(1 notification(s) not counted
    # ...)" may stand between the reason and the probe
    (detail,) = [line for line in text.splitlines() if "expected one -32600 error" in line]
    assert detail.rstrip().endswith("[batches]")
    assert report.verdict.startswith("NOT CONFORMANT (")
