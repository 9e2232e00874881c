"""The prompt lifecycle end to end, client runtime against agent runtime, on every transport
(PL-03, PL-04, PL-06, PL-07, PL-16, PL-18, MU-01, TC-03, PN-02, US-01)."""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import pytest
from e2e_agent import AGENT_NAME, BOOM
from e2e_links import IN_PROCESS, V1

from acp2.client import ClientConnection, ClientSession
from acp2.errors import RequestError
from acp2.schema import AgentMessageChunk
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


class Wire:
    """Every update of one session as the client received it: decoded JSON, in order."""

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []

    def __call__(self, update: Any, raw: bytes) -> None:
        self.updates.append(json.loads(raw))

    def kinds(self) -> list[str]:
        """The ``sessionUpdate`` of each update, with the state for state updates."""
        return [_kind(u) for u in self.updates]


def _kind(update: dict[str, Any]) -> str:
    kind = str(update["sessionUpdate"])
    return f"{kind}:{update['state']}" if kind == "state_update" else kind


@pytest.mark.not_over(
    V1,
    "v1 has no tool_call_content_chunk: the back bridge lifts a call's content as an update",
)
async def test_a_prompt_runs_from_acceptance_through_its_output_to_idle(
    link: ClientConnection,
) -> None:
    """Accepted with a message id, then user_message with that id, running, the output
    in the order it was sent, and one idle end_turn; the client state holds all of it."""
    wire = Wire()
    with anyio.fail_after(TIMEOUT):
        session = await link.new_session(on_update=wire)
        work = await session.prompt("show")
        assert work.message_id
        assert await work.wait() == "end_turn"
    turn = wire.updates[wire.kinds().index("user_message") :]
    assert turn[0]["messageId"] == work.message_id
    assert [_kind(u) for u in turn] == [
        "user_message",
        "state_update:running",
        "agent_thought_chunk",
        "plan_update",
        "tool_call_update",
        "tool_call_update",
        "tool_call_content_chunk",
        "tool_call_update",
        "plan_update",
        "agent_message_chunk",
        "agent_message_chunk",
        "usage_update",
        "state_update:idle",
    ]
    assert turn[-1]["stopReason"] == "end_turn"
    _assert_shown(session, work.text)


def _assert_shown(session: ClientSession, text: str) -> None:
    state = session.state
    assert text == "all done"
    (call,) = state.tool_calls.values()
    assert (call.title, call.kind, call.status) == ("Write notes", "edit", "completed")
    assert len(call.content) == 1
    (plan,) = state.plans.values()
    assert [(e.content, e.status) for e in plan.entries] == [
        ("look", "completed"),
        ("write", "pending"),
    ]
    assert state.usage is not None
    assert (state.usage.used, state.usage.size) == (120, 1000)
    assert state.foreground == "idle"


async def test_cancel_ends_the_running_work_idle_cancelled_and_the_session_goes_on(
    link: ClientConnection,
) -> None:
    with anyio.fail_after(TIMEOUT):
        session = await link.new_session()
        work = await session.prompt("wait")
        async for update in work:  # running and saying "waiting": the handler is inside
            if isinstance(update, AgentMessageChunk):
                break
        await session.cancel()
        assert await work.wait() == "cancelled"
        assert session.state.foreground == "idle"
        again = await session.prompt("echo still here")
        assert await again.wait() == "end_turn"
        assert again.text == "still here"


async def test_two_sessions_run_at_once_on_one_connection(link: ClientConnection) -> None:
    """A session waiting in its turn does not hold up another session's whole turn."""
    with anyio.fail_after(TIMEOUT):
        busy = await link.new_session()
        other = await link.new_session()
        waiting = await busy.prompt("wait")
        done = await other.prompt("echo meanwhile")
        assert await done.wait() == "end_turn"
        assert done.text == "meanwhile"
        assert not waiting.done
        assert busy.state.foreground == "running"
        await busy.cancel()
        assert await waiting.wait() == "cancelled"


async def test_a_raising_prompt_handler_ends_idle_error_and_the_connection_survives(
    link: ClientConnection,
) -> None:
    with anyio.fail_after(TIMEOUT):
        session = await link.new_session()
        work = await session.prompt("raise")
        assert await work.wait() == "error"
        assert BOOM in session.state.error.message
        assert work.text.startswith("about to fail")
        assert BOOM in work.text
        after = await session.prompt("echo fine")
        assert await after.wait() == "end_turn"


@pytest.mark.not_over(
    V1, "the v1 bridges do not forward extension requests (_e2e/boom is -32601 at the bridge)"
)
async def test_a_raising_extension_handler_reaches_the_client_as_an_error(
    link: ClientConnection,
) -> None:
    with anyio.fail_after(TIMEOUT):
        with pytest.raises(RequestError) as raised:
            await link.ext_request("_e2e/boom", {})
        assert raised.value.code == -32603
        assert BOOM in raised.value.message
        assert await link.ext_request("_e2e/size", {"text": "abc"}) == {"size": 3}
        session = await link.new_session()
        assert await (await session.prompt("echo alive")).wait() == "end_turn"


@pytest.mark.not_over(
    V1, "the round trip uses the extension request _e2e/size, which the v1 bridges do not forward"
)
async def test_a_one_mebibyte_update_makes_the_round_trip_intact(link: ClientConnection) -> None:
    """A prompt of 1 MiB goes out, comes back as one message chunk, byte for byte; the
    text has escapes and non-ASCII so framing and decoding are both exercised."""
    unit = 'line "one"\n\t\u00e9\u2028\U0001f600 '
    big = (unit * (2**20 // len(unit.encode())))[: 2**20]
    with anyio.fail_after(TIMEOUT):
        session = await link.new_session()
        work = await session.prompt("echo " + big)
        assert await work.wait() == "end_turn"
        assert work.text == big
        assert await link.ext_request("_e2e/size", {"text": big}) == {"size": len(big)}


@pytest.mark.not_over(
    V1, "it asks the extension request _e2e/pid, which the v1 bridges do not forward"
)
async def test_each_transport_reaches_the_agent_where_it_should_run(
    link: ClientConnection, transport: str
) -> None:
    """The stdio link really is the production path: the agent is another process there
    (and the same one on the memory pair), yet answers identically."""
    with anyio.fail_after(TIMEOUT):
        answer = await link.ext_request("_e2e/pid", {})
    assert (answer["pid"] == os.getpid()) == (transport in IN_PROCESS)
    assert link.agent_info.name == AGENT_NAME


async def test_a_work_still_running_when_the_client_leaves_raises_instead_of_waiting(
    opener: Any,
) -> None:
    """Leaving the connection ends it for the client's own waiters too: a work awaited
    afterwards raises ConnectionClosed at once (over stdio the watcher may still be
    waiting for the agent's stderr when the connection is left)."""
    from acp2.errors import ConnectionClosed

    with anyio.fail_after(TIMEOUT):
        async with opener() as client:
            session = await client.new_session()
            work = await session.prompt("wait")  # runs until cancelled
        with pytest.raises(ConnectionClosed):
            await work.wait()
