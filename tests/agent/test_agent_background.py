"""Background work on the agent runtime (RFD "v2 Background Work": D-13, D-15, D-16,
D-22, D-24, PL-25, TC-13, TM-10).

Every frame is validated under Nov; under Aug only the session updates (Aug has no
``tool_call/cancel`` / ``terminal/cancel``, and ignores ``background`` and
``capabilities``, which it does not define).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agent_harness import TIMEOUT, Harness, agent_harness, make_agent

from acp2.agent import Turn
from acp2.agent.handles import TerminalHandle, ToolCallHandle
from acp2.errors import LocalProtocolError, RequestError
from schema_validation import Conversation

pytestmark = pytest.mark.anyio


def _problems(h: Harness) -> list[str]:
    found: list[str] = []
    for draft in ("aug", "nov"):
        conversation = Conversation(draft)  # type: ignore[arg-type]
        for i, frame in enumerate(h.frames):
            check = draft == "nov" or frame.method == "session/update"
            problems = conversation.validate(frame.message, frame.sender, check=check)  # type: ignore[arg-type]
            found.extend(f"[{draft}] #{i} {problem}" for problem in problems)
    return found


class Watch:
    """A background agent: ``watch`` detaches a tool call whose body waits until
    released (``release``) or cancelled; ``term`` does the same with a terminal;
    ``own`` detaches a call without a body and ends it itself on a cancel request;
    ``plain`` detaches nothing."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.requested = anyio.Event()
        self.seen: list[str] = []
        self.handles: list[ToolCallHandle | TerminalHandle] = []
        self.agent = make_agent()
        self.agent.prompt(self.handle)

    async def handle(self, turn: Turn) -> str:
        if turn.text == "watch":
            call = await turn.tool_call("Watch the tests", kind="execute")
            await call.start()
            call.on_cancel_request(self.callback)
            self.handles.append(call)
            await call.detach(self.body)
            await turn.say("watching in the background")
        elif turn.text == "term":
            term = await turn.terminal("sleep 100")
            self.handles.append(term)
            await term.detach(self.body)
        elif turn.text == "own":
            own = await turn.tool_call("Own", kind="other")
            self.handles.append(own)
            await own.detach()

            async def finish() -> None:
                await own.wait_cancel_requested()
                self.seen.append(f"requested={own.cancel_requested}")
                await own.cancel()

            self.agent_tasks.start_soon(finish)
        elif turn.text == "wait":
            await anyio.sleep_forever()
        else:
            await turn.say("plain")
        return "end_turn"

    def callback(self) -> None:
        self.seen.append("callback")
        self.requested.set()

    async def body(self, handle: Any) -> None:
        try:
            await self.release.wait()
            self.seen.append("released")
        except anyio.get_cancelled_exc_class():
            self.seen.append(f"body cancelled, requested={handle.cancel_requested}")
            raise

    agent_tasks: Any = None


def _updates(h: Harness, sid: str, kind: str) -> list[dict[str, Any]]:
    return [u for u in h.updates(sid) if u.get("sessionUpdate") == kind]


def _states(h: Harness, sid: str) -> list[dict[str, Any]]:
    return _updates(h, sid, "state_update")


def _at(h: Harness, predicate: Any) -> int:
    at = h.index(lambda f: f.update is not None and predicate(f.update))
    assert at >= 0
    return at


async def test_pl25_a_detached_tool_call_outlives_its_turn_and_is_listed_until_it_ends() -> None:
    watch = Watch()
    async with agent_harness(watch.agent, initialize=True, validate=False) as h:
        sid = await h.new_session()
        idle = await h.turn(sid, "watch")
        assert idle["stopReason"] == "end_turn"
        call_id = watch.handles[0].item_id
        listed = [{"type": "tool_call", "toolCallId": call_id}]
        assert idle["background"] == listed  # D-13: the idle of the work carries it
        # Announced (with cancel advertised, D-22) before the first snapshot listing it.
        announce = _at(h, lambda u: u.get("capabilities") == {"cancel": {}})
        first = _at(h, lambda u: u.get("background") == listed)
        assert announce < first
        watch.release.set()
        last = await h.wait_for(lambda: [s for s in _states(h, sid) if s.get("background") == []])
        final = _at(h, lambda u: u.get("status") == "completed")
        assert final < _at(h, lambda u: u is last[0])  # final status before it is dropped
        assert last[0]["state"] == "idle"
        assert "stopReason" not in last[0]
        assert _updates(h, sid, "tool_call_update")[-1]["capabilities"] == {}
        # Once reported, every later state update carries the list (PL-25).
        await h.turn(sid, "plain")
        assert all("background" in s for s in _states(h, sid)[_states(h, sid).index(idle) :])
    assert watch.seen == ["released"]
    assert not _problems(h), _problems(h)


async def test_a_session_that_never_detaches_sends_no_background_field() -> None:
    async with agent_harness(Watch().agent, initialize=True) as h:
        sid = await h.new_session()
        await h.turn(sid, "plain")
        assert all("background" not in s for s in _states(h, sid))


async def test_tc13_tool_call_cancel_reaches_the_handle_and_the_call_ends_cancelled() -> None:
    watch = Watch()
    async with agent_harness(watch.agent, initialize=True, validate=False) as h:
        sid = await h.new_session()
        await h.turn(sid, "watch")
        call_id = watch.handles[0].item_id
        states_before = len(_states(h, sid))
        result = await h.call("tool_call/cancel", {"sessionId": sid, "toolCallId": call_id})
        assert result == {}
        await h.wait_for(lambda: _states(h, sid)[-1].get("background") == [])
        cancelled = _at(h, lambda u: u.get("status") == "cancelled")
        assert cancelled < _at(h, lambda u: u is _states(h, sid)[-1])
        # Cancelling one item does not change the foreground state (no running, no new idle
        # with a stop reason): only the snapshot that drops it.
        after = _states(h, sid)[states_before:]
        assert [s["state"] for s in after] == ["idle"]
        assert "stopReason" not in after[0]
    assert watch.seen == ["callback", "body cancelled, requested=True"]
    assert not _problems(h), _problems(h)


async def test_tm10_terminal_cancel_ends_the_terminal_with_an_exit_status() -> None:
    watch = Watch()
    async with agent_harness(watch.agent, initialize=True, validate=False) as h:
        sid = await h.new_session()
        idle = await h.turn(sid, "term")
        term_id = watch.handles[0].item_id
        assert idle["background"] == [{"type": "terminal", "terminalId": term_id}]
        await h.call("terminal/cancel", {"sessionId": sid, "terminalId": term_id})
        await h.wait_for(lambda: _states(h, sid)[-1].get("background") == [])
        exits = [u for u in _updates(h, sid, "terminal_update") if "exitStatus" in u]
        assert exits == [
            {"sessionUpdate": "terminal_update", "terminalId": term_id, "exitStatus": {},
             "capabilities": {}}
        ]  # fmt: skip
        with pytest.raises(RequestError) as again:  # exited: no longer cancellable
            await h.call("terminal/cancel", {"sessionId": sid, "terminalId": term_id})
        assert again.value.code == -32602
    assert not _problems(h), _problems(h)


async def test_a_detached_call_without_body_is_ended_by_its_owner_on_request() -> None:
    watch = Watch()
    async with anyio.create_task_group() as tg:
        watch.agent_tasks = tg
        async with agent_harness(watch.agent, initialize=True, validate=False) as h:
            sid = await h.new_session()
            await h.turn(sid, "own")
            call_id = watch.handles[0].item_id
            await h.call("tool_call/cancel", {"sessionId": sid, "toolCallId": call_id})
            await h.wait_for(lambda: _states(h, sid)[-1].get("background") == [])
    assert watch.seen == ["requested=True"]
    assert not _problems(h), _problems(h)


@pytest.mark.parametrize(
    ("method", "key"), [("tool_call/cancel", "toolCallId"), ("terminal/cancel", "terminalId")]
)
async def test_tc13_cancel_of_an_unknown_item_is_invalid_params_and_the_session_goes_on(
    method: str, key: str
) -> None:
    async with agent_harness(Watch().agent, initialize=True, validate=False) as h:
        sid = await h.new_session()
        with pytest.raises(RequestError) as unknown:
            await h.call(method, {"sessionId": sid, key: "nope"})
        assert unknown.value.code == -32602
        with pytest.raises(RequestError) as no_session:
            await h.call(method, {"sessionId": "sess_missing", key: "nope"})
        assert no_session.value.code == -32002
        assert (await h.turn(sid, "plain"))["stopReason"] == "end_turn"


async def test_tc13_a_call_that_does_not_advertise_cancel_is_refused() -> None:
    agent = make_agent()
    ids: list[str] = []

    @agent.prompt
    async def handle(turn: Turn) -> str:
        call = await turn.tool_call("Not cancellable")
        ids.append(call.tool_call_id)
        await call.detach(cancellable=False)
        return "end_turn"

    async with agent_harness(agent, initialize=True, validate=False) as h:
        sid = await h.new_session()
        idle = await h.turn(sid, "go")
        assert idle["background"] == [{"type": "tool_call", "toolCallId": ids[0]}]
        with pytest.raises(RequestError) as refused:
            await h.call("tool_call/cancel", {"sessionId": sid, "toolCallId": ids[0]})
        assert refused.value.code == -32602
        assert not [u for u in _updates(h, sid, "tool_call_update") if "capabilities" in u]


async def test_d15_session_cancel_leaves_background_work_running() -> None:
    watch = Watch()
    async with agent_harness(watch.agent, initialize=True, validate=False) as h:
        sid = await h.new_session()
        await h.turn(sid, "watch")
        await h.prompt(sid, "wait")
        await h.wait_for(lambda: _states(h, sid)[-1]["state"] == "running")
        await h.cancel(sid)
        idle = await h.wait_idle(sid, 2)
        assert idle["stopReason"] == "cancelled"
        assert idle["background"] == [{"type": "tool_call", "toolCallId": watch.handles[0].item_id}]
        assert watch.handles[0].cancel_requested is False
        assert not [
            u for u in _updates(h, sid, "tool_call_update") if u.get("status") == "cancelled"
        ]
    assert not _problems(h), _problems(h)


async def test_d16_session_close_stops_background_work_before_its_response() -> None:
    watch = Watch()
    async with agent_harness(watch.agent, initialize=True, validate=False) as h:
        sid = await h.new_session()
        await h.turn(sid, "watch")
        await h.call("session/close", {"sessionId": sid})
        closed = h.response_index(h.request_id("session/close"))
        cancelled = _at(h, lambda u: u.get("status") == "cancelled")
        emptied = _at(h, lambda u: u.get("background") == [])
        assert cancelled < emptied < closed
        assert not [f for f in h.frames[closed + 1 :] if f.session_id == sid]
    assert watch.seen == ["callback", "body cancelled, requested=True"]
    assert not _problems(h), _problems(h)


async def test_connection_end_tells_every_background_owner_its_work_is_cancelled() -> None:
    watch = Watch()
    async with agent_harness(watch.agent, initialize=True, validate=False) as h:
        sid = await h.new_session()
        await h.turn(sid, "watch")
    with anyio.fail_after(TIMEOUT):
        await watch.requested.wait()  # called during the agent's shutdown
    assert watch.handles[0].cancel_requested


async def test_detach_refuses_finished_or_already_detached_items() -> None:
    agent = make_agent()
    errors: list[str] = []

    @agent.prompt
    async def handle(turn: Turn) -> str:
        done = await turn.tool_call("Done")
        await done.complete()
        try:
            await done.detach()
        except LocalProtocolError as exc:
            errors.append(str(exc))
        twice = await turn.tool_call("Twice")
        await twice.detach()
        try:
            await twice.detach()
        except LocalProtocolError as exc:
            errors.append(str(exc))
        await twice.complete()
        return "end_turn"

    async with agent_harness(agent, initialize=True, validate=False) as h:
        sid = await h.new_session()
        await h.turn(sid, "go")
    assert len(errors) == 2
    assert "already ended" in errors[0]
    assert "already detached" in errors[1]
    assert not _problems(h), _problems(h)


async def test_resume_on_another_connection_keeps_reporting_background() -> None:
    watch = Watch()
    async with agent_harness(watch.agent, initialize=True, validate=False) as h:
        sid = await h.new_session()
        await h.turn(sid, "watch")
    async with agent_harness(watch.agent, initialize=True, validate=False) as h2:
        await h2.call("session/resume", {"sessionId": sid, "cwd": "/tmp/acp2-agent-tests"})
        snapshot = _states(h2, sid)[-1]
    # The first connection's work was cancelled with it; the list is still reported.
    assert snapshot == {"sessionUpdate": "state_update", "state": "idle", "background": []}


async def test_tc13_a_foreground_call_that_allows_cancel_is_cancelled_alone() -> None:
    agent = make_agent()
    ids: list[str] = []

    @agent.prompt
    async def handle(turn: Turn) -> str:
        call = await turn.tool_call("Slow search", kind="search")
        ids.append(call.tool_call_id)
        await call.allow_cancel()
        await call.wait_cancel_requested()
        await call.cancel()
        await turn.say("searched less")
        return "end_turn"

    async with agent_harness(agent, initialize=True, validate=False) as h:
        sid = await h.new_session()
        await h.prompt(sid, "go")
        await h.wait_for(lambda: any(u.get("capabilities") for u in h.updates(sid)))
        await h.call("tool_call/cancel", {"sessionId": sid, "toolCallId": ids[0]})
        idle = await h.wait_idle(sid)
        assert idle["stopReason"] == "end_turn"  # the foreground work went on
        assert "background" not in idle  # nothing was detached: nothing reported
        states = [s["state"] for s in _states(h, sid)]
        assert states == ["running", "idle"]
        final = _updates(h, sid, "tool_call_update")[-1]
        assert final == {
            "sessionUpdate": "tool_call_update", "toolCallId": ids[0], "status": "cancelled",
            "capabilities": {},
        }  # fmt: skip
    assert not _problems(h), _problems(h)
