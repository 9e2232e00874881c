"""acp2 check and agents that need a login first (AU-01): the session rows are skipped with
a hint, not failed, and ``--auth`` logs in so they are judged."""

from __future__ import annotations

import sys

import pytest
from check_support import AGENTS, check, checker_errors, failing

pytestmark = pytest.mark.anyio

AUTH_AGENT = [sys.executable, str(AGENTS / "auth_agent.py")]


async def test_a_session_refused_for_want_of_a_login_is_a_skip_that_names_the_methods() -> None:
    report = await check(AUTH_AGENT, only=frozenset({"sessions"}))
    row = report.rows["SS-03"]
    assert row.status.name == "SKIP"
    assert "--auth METHOD_ID" in row.reason
    assert "advertised: key" in row.reason
    assert not failing(report)
    assert not checker_errors(report)


async def test_with_auth_the_checker_logs_in_and_judges_the_session_rows() -> None:
    report = await check(AUTH_AGENT, only=frozenset({"sessions"}), auth="key")
    assert report.rows["SS-03"].status.name == "PASS"
    assert not failing(report)


async def test_a_refused_login_stops_the_probe_with_the_agents_error() -> None:
    report = await check(AUTH_AGENT, only=frozenset({"sessions"}), auth="nope")
    row = report.rows["SS-03"]
    assert row.status.name == "SKIP"
    assert "auth/login with 'nope' failed" in row.reason
