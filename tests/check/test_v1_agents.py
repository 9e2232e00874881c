"""An agent that answers ``initialize`` in v1's shape is judged as ACP v1: the hand-written
v1 agent is conformant as written and NOT CONFORMANT, naming the broken v1 rule, once
one rule is broken; each frame is validated against the v1 schema."""

from __future__ import annotations

import re
import sys

import pytest
from check_support import AGENTS, check, checker_errors, failing

from acp2.check import Status
from acp2.check.render import render_plain
from acp2.check.requirements import V1

pytestmark = pytest.mark.anyio

V1_AGENT = [sys.executable, str(AGENTS / "v1_agent.py")]


async def test_a_conformant_v1_agent_is_judged_as_v1_with_no_failure() -> None:
    report = await check(V1_AGENT)
    assert checker_errors(report) == []
    assert report.draft == V1
    assert report.verdict == "CONFORMANT", failing(report)
    rows = report.judged()
    assert rows
    assert all(r.requirement.drafts == (V1,) for r in rows)  # no v2 row judges a v1 agent
    # Every finding of the generic probes landed on a v1 row: no v2 row was touched.
    v2 = [r for r in report.rows.values() if r.requirement.drafts != (V1,)]
    assert [r.requirement.key for r in v2 if r.reason != "not probed"] == []
    assert [r.requirement.key for r in rows if r.status is not Status.PASS] == []
    text = render_plain(report)
    assert "judged as ACP v1 (the agent answered protocol version 1)" in text
    assert re.search(r"^V1-PL-04 +MUST +v1 +PASS ", text, re.M), text
    assert re.search(r"^V1-PL-04:permission +MUST +v1 +PASS ", text, re.M), text
    assert "frames of v1 answers valid under acp-v1.json" in report.rows["V1-SCHEMA"].reason


async def test_session_load_is_skipped_when_the_agent_does_not_advertise_it() -> None:
    report = await check([*V1_AGENT, "--no-load"], only=frozenset({"handshake", "sessions"}))
    assert report.rows["V1-SS-02"].status is Status.SKIP
    assert "loadSession" in report.rows["V1-SS-02"].reason
    assert report.rows["V1-IN-03"].reason.startswith("advertises promptCapabilities")


BROKEN = [
    # (rule broken, the probes to run, the rows that must fail)
    ("answers-early", {"prompt"}, {"V1-PL-02"}),
    ("ignores-cancel", {"cancel"}, {"V1-PL-04"}),
    ("cancel-as-error", {"cancel"}, {"V1-PL-04", "V1-PL-05"}),
    ("load-after-answer", {"sessions"}, {"V1-SS-02"}),
]


@pytest.mark.parametrize(("rule", "probes", "rows"), BROKEN, ids=[b[0] for b in BROKEN])
async def test_a_broken_v1_agent_is_not_conformant_and_the_broken_rule_is_named(
    rule: str, probes: set[str], rows: set[str]
) -> None:
    report = await check([*V1_AGENT, "--break", rule], only=frozenset(probes), timeout=2.0)
    assert checker_errors(report) == []
    assert report.draft == V1
    assert not report.conformant
    assert failing(report) == rows
    for key in rows:
        assert report.rows[key].evidence, key  # the offending frames are shown


async def test_an_early_answer_is_shown_with_the_updates_that_followed_it() -> None:
    report = await check([*V1_AGENT, "--break", "answers-early"], only=frozenset({"prompt"}))
    row = report.rows["V1-PL-02"]
    assert "1 update(s) after the prompt was answered" in row.reason
    assert '"stopReason":"end_turn"' in row.evidence[0]
    assert "agent_message_chunk" in row.evidence[1]
