"""Fuzz: a hostile agent sends anything; the client never crashes, hangs, or raises
anything but acp2's documented errors (issue 10; the agent side is fuzzed in
``tests/rpc/test_fuzz.py``).

The fake agent answers ``initialize`` and ``session/new`` properly; on ``session/prompt``
it first sends the generated garbage (random bytes, random JSON, random envelopes and
``session/update`` objects, requests to the client, responses with any id, nesting
deeper than any decoder follows), then accepts the prompt and reports ``idle``. The
prompt must end or fail with an :class:`~acp2.errors.Acp2Error`, and a later extension
request must still be answered: the connection survived.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp2.client import connect_transport
from acp2.errors import Acp2Error
from acp2.rpc.framing import LineFramer
from acp2.transport.memory import MemoryTransport, memory_pair
from helpers import timeouts

pytestmark = pytest.mark.anyio

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)
UPDATE_KINDS = [
    "agent_message_chunk",
    "user_message",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "state_update",
    "session_info_update",
    "available_commands_update",
    "terminal",
    "_custom",
]
updates = st.fixed_dictionaries(
    {"sessionUpdate": st.sampled_from(UPDATE_KINDS)},
    optional={
        "messageId": st.text(max_size=4) | json_values,
        "content": json_values
        | st.fixed_dictionaries({"type": st.sampled_from(["text", "image"]), "text": json_values}),
        "state": st.sampled_from(["running", "idle", "requires_action", "x"]) | json_values,
        "stopReason": json_values,
        "toolCallId": json_values,
        "status": json_values,
        "entries": json_values,
        "title": json_values,
        "_meta": json_values,
    },
)
notes = st.builds(
    lambda sid, update: {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": sid, "update": update},
    },
    st.sampled_from(["s1", "s2"]) | json_values,
    updates | json_values,
)
CLIENT_METHODS = ["session/request_permission", "fs/read_text_file", "terminal/create", "_x", "z"]
envelopes = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", None]),
        "id": st.none()
        | st.integers(min_value=-3, max_value=5)
        | st.text(max_size=3)
        | json_values,
        "method": st.sampled_from(CLIENT_METHODS) | json_values,
        "params": json_values,
        "result": json_values,
        "error": st.fixed_dictionaries({"code": json_values, "message": json_values}) | json_values,
    },
)


def line(value: Any) -> bytes:
    return json.dumps(value).encode() + b"\n"


deep = st.sampled_from([1_000, 10_000, 100_000]).map(
    lambda depth: b'{"jsonrpc":"2.0","method":"session/update","params":' + b"[" * depth
)
garbage = st.lists(
    st.binary(max_size=64)
    | json_values.map(line)
    | envelopes.map(line)
    | notes.map(line)
    | st.lists(envelopes | notes, max_size=3).map(line)
    | deep.map(lambda head: head + b"\n"),
    max_size=8,
)

INIT = {"protocolVersion": 2, "info": {"name": "hostile", "version": "0"}}
INIT["capabilities"] = {"session": {}}


class HostileAgent:
    """Answers the handshake, then garbage before each prompt's answer."""

    def __init__(self, transport: MemoryTransport, chunks: list[bytes]) -> None:
        self.transport = transport
        self.chunks = chunks

    async def answer(self, rid: Any, result: Any) -> None:
        await self.transport.send(line({"jsonrpc": "2.0", "id": rid, "result": result}))

    async def run(self) -> None:
        framer = LineFramer()
        while chunk := await self.transport.receive():
            for item in framer.feed(chunk):
                msg = json.loads(bytes(item))  # type: ignore[arg-type]  # never oversized
                if isinstance(msg, dict) and "method" in msg and "id" in msg:
                    await self.serve(msg)

    async def serve(self, msg: dict[str, Any]) -> None:
        method, rid = msg["method"], msg["id"]
        if method == "initialize":
            await self.answer(rid, INIT)
        elif method == "session/new":
            await self.answer(rid, {"sessionId": "s1"})
        elif method == "session/prompt":
            for chunk in self.chunks:
                await self.transport.send(chunk)
            await self.transport.send(b"\n")
            await self.answer(rid, {"messageId": "u1"})
            idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
            await self.transport.send(
                line(
                    {
                        "jsonrpc": "2.0",
                        "method": "session/update",
                        "params": {"sessionId": "s1", "update": idle},
                    }
                )
            )
        elif method == "_ping":
            await self.answer(rid, {"pong": True})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunks=garbage)
async def test_random_bytes_from_an_agent_never_break_the_client(chunks: list[bytes]) -> None:
    ours, theirs = memory_pair()
    agent = HostileAgent(theirs, chunks)
    with anyio.fail_after(timeouts.TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.run)
            async with connect_transport(ours, cwd="/tmp") as client:
                session = await client.new_session()
                try:
                    work = await session.prompt("go")
                    await work.wait()
                    async for _update in work:
                        pass
                except Acp2Error:
                    pass  # a documented failure of this prompt is fine; a crash is not
                assert await client.ext_request("_ping") == {"pong": True}
                assert not client.closed
            await theirs.aclose()
            tg.cancel_scope.cancel()
