"""Attack leftovers: errors that named the wrong problem (issue 10, "Smaller").

Before: a lone surrogate was "Input data was truncated", a 2^70 id failed later with
"Integer value out of range", and a client whose reader died on a bad line said "The
agent closed the connection". Now each says what is wrong with the peer's message.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from acp2.client import connect
from acp2.errors import ConnectionClosed
from acp2.transport.stdio import spawn_agent
from helpers import RawWire, timeouts

pytestmark = pytest.mark.anyio

AGENT = [sys.executable, "-m", "acp2", "test-agent"]
BROKEN = str(Path(__file__).parents[1] / "client" / "misbehaving_agent.py")


async def test_the_agent_names_a_lone_surrogate_and_an_out_of_range_id() -> None:
    with anyio.fail_after(timeouts.PROCESS_TIMEOUT):
        async with spawn_agent(AGENT) as proc:
            wire = RawWire(proc)  # type: ignore[arg-type]  # any Transport will do
            await wire.send(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\\ud800"}}\n')
            lone = await wire.frame()
            assert lone["error"] == {
                "code": -32700,
                "message": "Parse error: invalid JSON: lone surrogate \\ud800 in a string",
            }
            await wire.send(b'{"jsonrpc":"2.0","id":%d,"method":"session/list"}\n' % 2**70)
            big = await wire.frame()
            assert big == {
                "jsonrpc": "2.0",
                "id": None,
                "error": {
                    "code": -32600,
                    "message": "Invalid request: integer id outside the signed 64-bit range",
                },
            }
            await wire.send(b'{"jsonrpc":"2.0","id":%d,"method":"session/list"}\n' % (2**63 - 1))
            assert (await wire.frame())["id"] == 2**63 - 1  # the int64 edge is an id


async def test_the_client_says_what_was_wrong_with_the_agents_last_message() -> None:
    """An agent prints a line that is not JSON and exits mid-turn: the error names the
    invalid message as well as the agent's stderr."""
    with anyio.fail_after(timeouts.PROCESS_TIMEOUT):
        async with connect([sys.executable, BROKEN, "exit-mid-turn"]) as client:
            session = await client.new_session()
            work = await session.prompt("hello")
            with pytest.raises(ConnectionClosed) as caught:
                await work.wait()
    message = str(caught.value)
    assert "it sent 1 invalid message(s); the last: Parse error" in message
    assert "model backend exploded" in message
