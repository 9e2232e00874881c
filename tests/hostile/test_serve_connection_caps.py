"""Attack: one client takes every connection slot of ``acp2 serve`` (issue 24, item 4).

Before the fix one authorised client filled all 1,000 slots in 1.1 s, and in ``-- AGENT``
mode every slot was an agent subprocess (~10 MB each); a WebSocket over the cap was
turned away with a 403, as if it were not allowed at all. Now a principal holds at most
``--max-per-principal`` connections, the server at most ``--max-connections`` and at
most ``--max-agents`` spawned agents; over a cap the answer is 503 with ``Retry-After``
(a WebSocket handshake too), and a slot that frees is usable at once.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import InvalidStatus

from helpers.timeouts import TIMEOUT
from hostile.serve_limits_helpers import served, ws_connect

pytestmark = pytest.mark.slow

CONNECTION = "acp-connection-id"


def test_a_principal_over_its_cap_gets_503_with_retry_after_until_a_slot_frees(
    tmp_path: Path,
) -> None:
    with (
        served(tmp_path, "--max-per-principal", "2") as server,
        httpx.Client(timeout=TIMEOUT) as client,
    ):
        first = server.post_initialize(client)
        second = server.post_initialize(client)
        assert (first.status_code, second.status_code) == (200, 200)
        refused = server.post_initialize(client)
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"].isdigit()
        assert "principal" in refused.text
        gone = client.delete(
            server.url, headers={"acp-connection-id": first.headers["acp-connection-id"]}
        )
        assert gone.status_code == 202
        assert server.post_initialize(client).status_code == 200


def test_a_websocket_over_the_server_cap_gets_503_not_403_and_gets_in_once_a_slot_frees(
    tmp_path: Path,
) -> None:
    with (
        served(tmp_path, "--max-connections", "2") as server,
        httpx.Client(timeout=TIMEOUT) as client,
        contextlib.ExitStack() as stack,
    ):
        held = server.post_initialize(client)
        stack.enter_context(ws_connect(server.ws_url))
        with pytest.raises(InvalidStatus) as refused, ws_connect(server.ws_url):
            pass
        assert refused.value.response.status_code == 503
        assert refused.value.response.headers["retry-after"].isdigit()
        freed = client.delete(server.url, headers={CONNECTION: held.headers[CONNECTION]})
        assert freed.status_code == 202
        with ws_connect(server.ws_url) as third:
            third.ping().wait(TIMEOUT)


def test_in_agent_command_mode_the_spawn_cap_holds(tmp_path: Path) -> None:
    agent = ("--", sys.executable, "-m", "acp2", "test-agent")
    with (
        served(tmp_path, "--max-agents", "2", agent=agent) as server,
        contextlib.ExitStack() as stack,
    ):
        for _ in range(2):
            stack.enter_context(ws_connect(server.ws_url))
        for _ in range(3):
            with pytest.raises(InvalidStatus) as refused, ws_connect(server.ws_url):
                pass
            assert refused.value.response.status_code == 503
            assert "agent" in refused.value.response.body.decode()
        assert len(server.children()) == 2
