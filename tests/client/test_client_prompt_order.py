"""Which work an ``idle`` ends holds by construction, not by the event loop's schedule.

The reader dispatches a ``session/prompt`` answer by resolving the prompt's waiter and
goes straight on to the messages read with it; the prompting task runs later. An idle
read after the answer must end the prompt's work, an idle read before it earlier work --
whenever the prompting task gets to run. The link below dispatches like the reader, in
the prompting task itself, so the prompting task cannot run in between: a session that
left the order to a turn of the event loop would give the idle to nobody. The answers
carry no ``messageId`` and the turns no user message (an Aug-draft agent, D-09), so the
order on the wire is all a work has to go by.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from acp2 import _aio
from acp2.client.core import ClientCore, _UpdateNotification
from acp2.client.env import SessionEnv
from acp2.client.permissions import deny_all
from acp2.client.session import ClientSession
from acp2.client.work import MAX_ENTRIES
from acp2.errors import LocalProtocolError
from acp2.schema import (
    AgentCapabilities,
    PromptResponse,
    SessionCapabilities,
    StateUpdate,
    TextContent,
)
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

RUNNING = {"sessionUpdate": "state_update", "state": "running"}
TEXT = {"sessionUpdate": "agent_message_chunk", "messageId": "a1"}
IDLE = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
ANSWER = "answer"  # where the prompt's answer sits among the updates
CAPS = AgentCapabilities(session=SessionCapabilities())


class ReaderLink(ClientCore[ClientSession]):
    """Answers ``session/prompt`` as the reader dispatches one burst read from the wire:
    ``wire`` in order, the answer resolving the waiter where :data:`ANSWER` stands."""

    def __init__(self, wire: list[Any]) -> None:
        super().__init__(None, None)  # type: ignore[arg-type]
        self.wire = wire

    async def call(self, spec: Any, params: Any, *, waiter: Any = None) -> Any:
        for item in self.wire:
            if item == ANSWER:
                if waiter is not None:
                    _aio.resolve(waiter, (msgspec.Raw(b"{}"), None))
                continue
            pending = self._on_update(*_note(item))
            if pending is not None:  # the reader awaits what a session hands back
                await pending
        return PromptResponse()


def _note(update: dict[str, Any]) -> tuple[_UpdateNotification, bytes]:
    if "messageId" in update:
        update = {**update, "content": {"type": "text", "text": "hi"}}
    body = json.dumps({"sessionId": "s", "update": update}).encode()
    return msgspec.json.decode(body, type=_UpdateNotification), body


def _session(wire: list[Any], heard: list[bytes] | None = None) -> ClientSession:
    """A session over ``wire``; with ``heard``, a listener collects every update's bytes."""
    link = ReaderLink(wire)
    session = ClientSession(SessionEnv(CAPS, deny_all), link, "s", "/tmp")
    link.attach(session)
    if heard is not None:  # a listener takes the session off its listener-free fast path
        session.add_listener(lambda update, raw: heard.append(raw))
    return session


#: Each order holds on both of a session's paths: without listeners and with one.
listening = pytest.mark.parametrize("listener", [False, True], ids=["no listener", "a listener"])


@listening
async def test_an_idle_read_after_the_prompts_answer_ends_the_prompts_work(listener: bool) -> None:
    heard: list[bytes] | None = [] if listener else None
    session = _session([ANSWER, RUNNING, TEXT, IDLE], heard)
    with anyio.fail_after(TIMEOUT):
        work = await session.prompt("hi")
        assert work.done
        assert await work.wait() == "end_turn"
    assert work.text == "hi"
    assert heard is None or [json.loads(raw) for raw in heard][-1] == IDLE


@listening
async def test_an_empty_turn_answered_then_idle_ends_the_prompts_work(listener: bool) -> None:
    heard: list[bytes] | None = [] if listener else None
    session = _session([ANSWER, IDLE], heard)
    with anyio.fail_after(TIMEOUT):
        work = await session.prompt("hi")
        assert work.done
        assert await work.wait() == "end_turn"
    assert heard is None or len(heard) == 1


@listening
async def test_an_idle_read_before_the_prompts_answer_does_not_end_the_prompts_work(
    listener: bool,
) -> None:
    heard: list[bytes] | None = [] if listener else None
    session = _session([IDLE, ANSWER], heard)
    with anyio.fail_after(TIMEOUT):
        work = await session.prompt("hi")
    assert not work.done


async def test_a_works_text_leaves_out_the_earlier_works_messages_it_dropped() -> None:
    """Earlier work's text and idle arrive after the prompt was sent, before its answer:
    the work drops them when accepted, and its text names only its own message."""
    earlier = {**TEXT, "messageId": "a0"}
    session = _session([earlier, IDLE, ANSWER, RUNNING, TEXT, IDLE])
    with anyio.fail_after(TIMEOUT):
        work = await session.prompt("hi")
        assert await work.wait() == "end_turn"
    assert work.text == "hi"  # a1's text alone, not a0's too
    assert type(work.updates[0]) is StateUpdate  # the running that opened its turn


async def test_a_work_that_dropped_entries_before_its_answer_forgets_their_messages() -> None:
    """More updates than a work keeps arrive before the answer (alternating messages, so
    nothing coalesces): the oldest give way to a marker, and the work's text no longer
    names the message only they held."""
    flood = [{**TEXT, "messageId": "b" if i % 2 else "c"} for i in range(MAX_ENTRIES + 4)]
    session = _session([{**TEXT, "messageId": "a0"}, *flood, ANSWER, IDLE])
    with anyio.fail_after(TIMEOUT):
        work = await session.prompt("hi")
        assert await work.wait() == "end_turn"
    messages = session.state.messages
    assert work.text == "\n\n".join(messages[("agent", mid)].text for mid in ("c", "b"))


@pytest.mark.parametrize("prompt", ["hi", [TextContent(text="hi")]], ids=["text", "blocks"])
async def test_a_prompt_to_an_agent_without_sessions_is_refused_and_sends_nothing(
    prompt: Any,
) -> None:
    link = ReaderLink([RUNNING, ANSWER, IDLE])
    session = ClientSession(SessionEnv(AgentCapabilities(), deny_all), link, "s", "/tmp")
    link.attach(session)
    with pytest.raises(LocalProtocolError, match="session support"):
        await session.prompt(prompt)
    assert session.state.work == 0  # the wire was never read: nothing was sent


async def test_a_session_reads_its_connections_environment_not_the_connection() -> None:
    session = _session([ANSWER, IDLE])
    assert not hasattr(session, "client")
    assert session.env.permission_policy is deny_all


def test_the_client_runtime_never_yields_to_the_event_loop_for_ordering() -> None:
    """No ``sleep(0)`` / ``yield_once`` in client/: an order that needs a loop turn is an
    order that another schedule (another task between, another event loop) breaks."""
    client = Path(__file__).resolve().parents[2] / "src" / "acp2" / "client"
    found = []
    for path in sorted(client.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
            first = node.args[0] if node.args else None
            zero = isinstance(first, ast.Constant) and first.value == 0
            if name == "yield_once" or (name == "sleep" and zero):
                found.append(f"{path.name}:{node.lineno}")
    assert found == []
