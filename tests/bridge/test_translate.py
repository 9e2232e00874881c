"""``Preanswered`` (bridge/translate.py): the front's ``initialize`` to an agent that has
already answered one is answered locally, with the agent's answer, by the rpc encoder."""

from __future__ import annotations

import json

import anyio
import msgspec
import pytest

from acp2.bridge.translate import Preanswered
from acp2.transport.memory import memory_pair
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

RESULT = msgspec.Raw(b'{"protocolVersion":2,"agentInfo":{"name":"a","version":"1"}}')


async def test_the_first_initialize_is_answered_locally_and_the_rest_reaches_the_agent() -> None:
    ours, agent = memory_pair()
    link = Preanswered(ours, RESULT)
    init = b'{"jsonrpc":"2.0","id":"i-1","method":"initialize","params":{}}'
    after = b'{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}\n'
    with anyio.fail_after(TIMEOUT):
        await link.send(init + b"\n" + after)
        answer = await link.receive()
        reached = await agent.receive()
    assert answer == b'{"jsonrpc":"2.0","id":"i-1","result":' + bytes(RESULT) + b"}\n"
    assert json.loads(answer)["result"] == json.loads(bytes(RESULT))
    assert reached == after


async def test_a_first_line_that_is_not_an_initialize_goes_to_the_agent_unchanged() -> None:
    ours, agent = memory_pair()
    link = Preanswered(ours, RESULT)
    line = b'{"jsonrpc":"2.0","method":"_x/hello"}\n'
    with anyio.fail_after(TIMEOUT):
        await link.send(line)
        assert await agent.receive() == line
