"""``acp2 check --url``: the probes that can run remotely, against the test agent served
by the durable WebSocket test server; the byte-level and shutdown probes are left out."""

from __future__ import annotations

import anyio
import pytest

from acp2.check import CheckOptions, run_check
from acp2.check.remote import NOT_REMOTE
from helpers.durable_ws import durable_ws_server
from helpers.timeouts import SCENARIO_TIMEOUT

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_the_remote_test_agent_passes_the_probes_that_run_remotely() -> None:
    with anyio.fail_after(SCENARIO_TIMEOUT * 4):
        async with durable_ws_server() as server:
            # The helper server runs the agent's v2 runtime directly (no v1 peek, unlike
            # `acp2 serve`), so the version-1 probe is judged by the Aug rule it meets.
            options = CheckOptions(
                argv=[],
                draft="aug",
                url=server.url,
                prompt="echo hello",
                cancel_prompt="wait",
                permission_prompt="permission",
                timeout=10,
                jobs=2,
            )
            report = await run_check(options)
    failed = [row for row in report.to_json()["rows"] if row["result"] == "FAIL"]
    assert failed == []
    assert report.conformant


async def test_an_unreachable_url_stops_the_check_with_a_clear_error() -> None:
    from acp2.errors import CheckError

    async with durable_ws_server() as server:
        url = server.url
    with anyio.fail_after(SCENARIO_TIMEOUT), pytest.raises(CheckError, match="cannot reach"):
        await run_check(CheckOptions(argv=[], url=url, timeout=5))


def test_the_byte_level_and_shutdown_probes_are_not_run_remotely() -> None:
    assert {"batches", "invalid-json", "shutdown-idle"} <= NOT_REMOTE
