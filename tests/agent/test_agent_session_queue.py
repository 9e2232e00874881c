"""The per-session prompt FIFO: holding, hand-over, withdrawal (PL-18, PL-22, D-11)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agent_harness import TIMEOUT, agent_harness, make_agent

from acp2.agent import AgentSession, Turn
from acp2.agent.emitter import Emitter
from acp2.errors import RequestCancelled

pytestmark = pytest.mark.anyio


class _Sink:
    """A FrameSink that keeps frames."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.congested = False

    def send_frame_nowait(self, frame: bytes) -> None:
        self.frames.append(frame)

    async def drain(self) -> None:
        """Never congested."""


def _session() -> AgentSession:
    return AgentSession("sess_t", "/tmp", [], [], Emitter("sess_t", _Sink(), None))


async def _held(session: AgentSession, results: list[Any], *, task_status: Any) -> None:
    task_status.started()
    try:
        await session.acquire()
        results.append("acquired")
    except RequestCancelled:
        results.append("withdrawn")


async def _acquire_now(session: AgentSession) -> None:
    with anyio.fail_after(TIMEOUT):
        await session.acquire()


async def test_pl22_a_held_prompt_gets_the_slot_when_the_work_ends() -> None:
    session = _session()
    await _acquire_now(session)
    results: list[Any] = []
    async with anyio.create_task_group() as tg:
        await tg.start(_held, session, results)
        assert results == []
        session.release()
    assert results == ["acquired"]
    session.release()
    await _acquire_now(session)  # free again


async def test_pl22_a_held_prompt_cancelled_right_after_the_hand_over_passes_the_slot_on() -> None:
    session = _session()
    await _acquire_now(session)
    results: list[Any] = []
    async with anyio.create_task_group() as tg:
        scope = anyio.CancelScope()

        async def held(*, task_status: Any) -> None:
            with scope:
                await _held(session, results, task_status=task_status)

        await tg.start(held)
        session.release()  # hands the slot over...
        scope.cancel()  # ...and the request is cancelled before the task resumes
    # Either the prompt still got the slot (anyio does not cancel a task whose wait is
    # already satisfied) and owns it, or the slot was passed on -- it is never lost.
    if results == ["acquired"]:
        session.release()
    await _acquire_now(session)


async def test_pl18_cancel_right_after_the_hand_over_withdraws_that_prompt() -> None:
    session = _session()
    await _acquire_now(session)
    results: list[Any] = []
    async with anyio.create_task_group() as tg:
        await tg.start(_held, session, results)
        await tg.start(_held, session, results)
        session.release()  # the first held prompt is granted the slot, not yet inserted
        assert session.cancel() is False  # no foreground work is running
    assert results == ["withdrawn", "withdrawn"]
    assert not session.cancel_requested
    await _acquire_now(session)


async def test_ss22_a_closing_session_refuses_new_prompts() -> None:
    session = _session()
    assert session.begin_close() is False
    with pytest.raises(RequestCancelled):
        await session.acquire()
    session.mark_closed()
    assert session.closed


async def test_pl22_a_held_prompt_cancelled_by_cancel_request_is_32800_and_nothing_sticks() -> None:
    gate = anyio.Event()
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        if turn.text == "first":
            await gate.wait()
        return "end_turn"

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await h.prompt(sid, "first")
        async with anyio.create_task_group() as tg:
            tg.start_soon(h.prompt, sid, "held")
            await h.wait_for(lambda: len(h.requests("session/prompt")) == 2)
            await h.call("session/list", {})  # it is held now
            tg.cancel_scope.cancel()  # the client gives up: $/cancel_request
        held_id = h.request_id("session/prompt", 1)
        await h.wait_for(lambda: h.response_index(held_id) >= 0)
        gate.set()
        await h.wait_idle(sid)
        idle = await h.turn(sid, "third")
    answer = h.frames[h.response_index(held_id)].message
    assert answer["error"]["code"] == -32800
    users = [u for u in h.updates(sid) if u["sessionUpdate"] == "user_message"]
    assert len(users) == 2
    assert idle["stopReason"] == "end_turn"
