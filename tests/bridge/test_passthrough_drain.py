"""``pass_through`` when the client leaves while the agent speaks: what the client sent
before it left still reaches the agent (``acp2 serve -- AGENT``: an answer POSTed just
before a DELETE)."""

from __future__ import annotations

import anyio
import pytest

from acp2.bridge.passthrough import pass_through
from acp2.errors import ConnectionClosed
from acp2.transport.base import Transport
from acp2.transport.memory import memory_pair
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


class LeavingClient:
    """A client end that is gone for output (every send raises) and whose last line is
    read only after the agent's first output was refused: the order in which a client
    that answers and then DELETEs is seen by the server."""

    def __init__(self) -> None:
        self.refused = anyio.Event()
        self._lines = [b'{"jsonrpc":"2.0","id":5,"result":{"outcome":"allow"}}\n']

    async def receive(self) -> bytes:
        await self.refused.wait()
        return self._lines.pop() if self._lines else b""

    async def send(self, data: bytes) -> None:
        self.refused.set()
        raise ConnectionClosed("the client left")

    async def aclose(self) -> None:
        """Nothing to close."""


async def test_a_clients_last_answer_reaches_the_agent_after_the_client_left() -> None:
    agent_side, ours = memory_pair()
    client = LeavingClient()
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(_run, client, agent_side)
            await ours.send(b'{"jsonrpc":"2.0","method":"session/update","params":{}}\n')
            received = b""
            while chunk := await ours.receive():
                received += chunk
    assert received == b'{"jsonrpc":"2.0","id":5,"result":{"outcome":"allow"}}\n'


async def _run(client: LeavingClient, agent: Transport) -> None:
    await pass_through(client, agent, client_head=b"", agent_head=b"", version="")
    await agent.aclose()
