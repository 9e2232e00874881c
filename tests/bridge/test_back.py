"""The back bridge in process: acp2's v2 client over a memory pair, the bridge, and a v1
agent built on acp2's own JSON-RPC ``Connection`` with the v1 method table, which the
tests drive request by request (``fs/*``, permissions the v2 side never saw announced).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import back_ways
import pytest

import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.client import (
    ClientSession,
    PermissionPolicy,
    PermissionRequest,
    Work,
    allow_all,
    deny_all,
)
from acp2.errors import (
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    RequestCancelled,
    ResourceNotFound,
)
from acp2.rpc import Connection
from helpers.timeouts import TIMEOUT

SESSION = "v1-session"
RESULT = v1.InitializeResponse(
    protocol_version=1,
    agent_info=v1.Implementation(name="in-process-v1-agent", version="1"),
    agent_capabilities=v1.AgentCapabilities(load_session=False),
)


async def _new(params: v1.NewSessionRequest) -> v1.NewSessionResponse:
    return v1.NewSessionResponse(session_id=SESSION)


@asynccontextmanager
async def bridged(
    cwd: Path, permissions: PermissionPolicy = deny_all, *, files: bool = True
) -> AsyncIterator[tuple[Connection, ClientSession]]:
    """A v1 agent connection and the v2 client session the bridge made over it."""
    with anyio.fail_after(TIMEOUT):
        async with back_ways.client_of(
            lambda agent: agent.on(v1m.SESSION_NEW, _new),
            RESULT,
            files=files,
            cwd=cwd,
            permissions=permissions,
        ) as (agent, client):
            assert client.agent_info.name == "in-process-v1-agent"
            yield agent, await client.new_session()


@pytest.fixture(autouse=True, params=back_ways.WAYS)
def way(request: pytest.FixtureRequest) -> str:
    """Run every test both ways (see ``back_ways``)."""
    back_ways.WAY = request.param
    return str(request.param)


def read(path: Path | str, **kw: Any) -> v1.ReadTextFileRequest:
    return v1.ReadTextFileRequest(session_id=SESSION, path=str(path), **kw)


def write(path: Path | str, content: str) -> v1.WriteTextFileRequest:
    return v1.WriteTextFileRequest(session_id=SESSION, path=str(path), content=content)


@pytest.mark.anyio
async def test_a_v1_agent_reads_a_file_below_the_session_cwd(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    async with bridged(tmp_path) as (agent, _):
        path = tmp_path / "notes.txt"
        whole = await agent.call(v1m.FS_READ_TEXT_FILE, read(path))
        part = await agent.call(v1m.FS_READ_TEXT_FILE, read(path, line=2, limit=1))
    assert whole.content == "one\ntwo\nthree\n"
    assert part.content == "two\n"


@pytest.mark.anyio
async def test_reading_a_missing_file_answers_resource_not_found(tmp_path: Path) -> None:
    async with bridged(tmp_path) as (agent, _):
        with pytest.raises(ResourceNotFound) as caught:
            await agent.call(v1m.FS_READ_TEXT_FILE, read(tmp_path / "absent.txt"))
    assert caught.value.code == -32002


@pytest.mark.anyio
@pytest.mark.parametrize("where", ["outside", "dotdot", "relative", "symlink"])
async def test_a_path_outside_the_session_cwd_is_refused(tmp_path: Path, where: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    os.symlink(secret, root / "link.txt")
    path = {
        "outside": str(secret),
        "dotdot": f"{root}/../secret.txt",
        "relative": "secret.txt",
        "symlink": str(root / "link.txt"),
    }[where]
    async with bridged(root, allow_all) as (agent, _):  # writes allowed: confinement refuses
        with pytest.raises(InvalidParams):
            await agent.call(v1m.FS_READ_TEXT_FILE, read(path))
        with pytest.raises(InvalidParams):
            await agent.call(v1m.FS_WRITE_TEXT_FILE, write(path, "overwritten"))
    assert secret.read_text() == "secret"


@pytest.mark.anyio
async def test_a_write_allowed_by_the_permission_policy_lands(tmp_path: Path) -> None:
    async with bridged(tmp_path, allow_all) as (agent, _):
        await agent.call(v1m.FS_WRITE_TEXT_FILE, write(tmp_path / "out.txt", "written\n"))
    assert (tmp_path / "out.txt").read_text() == "written\n"


@pytest.mark.anyio
async def test_a_write_refused_by_the_permission_policy_changes_nothing(tmp_path: Path) -> None:
    async with bridged(tmp_path, deny_all) as (agent, _):
        with pytest.raises(InvalidRequest):
            await agent.call(v1m.FS_WRITE_TEXT_FILE, write(tmp_path / "out.txt", "written\n"))
    assert not (tmp_path / "out.txt").exists()


@pytest.mark.anyio
async def test_fs_is_not_served_unless_enabled(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one\n")
    async with bridged(tmp_path, files=False) as (agent, _):
        with pytest.raises(MethodNotFound):
            await agent.call(v1m.FS_READ_TEXT_FILE, read(tmp_path / "notes.txt"))


@pytest.mark.anyio
async def test_a_permission_naming_an_unannounced_tool_call_is_answered(tmp_path: Path) -> None:
    request = v1.RequestPermissionRequest(
        session_id=SESSION,
        tool_call=v1.ToolCallUpdate(tool_call_id="never-announced", title="Run ls"),
        options=[v1.PermissionOption(option_id="ok", name="Allow", kind="allow_once")],
    )
    async with bridged(tmp_path, allow_all) as (agent, session):
        answer = await agent.call(v1m.SESSION_REQUEST_PERMISSION, request)
    assert answer.outcome == v1.SelectedPermissionOutcome(option_id="ok")
    assert session.id == SESSION


@pytest.mark.anyio
async def test_the_policy_sees_the_diff_and_locations_a_v1_permission_request_carries(
    tmp_path: Path,
) -> None:
    # Gemini CLI sends a write's diff only in its permission request (issue 26).
    path = str(tmp_path / "new.txt")
    diff = v1.Diff(path=path, old_text="", new_text="new\n", meta={"kind": "add"})
    call = v1.ToolCallUpdate(
        tool_call_id="w1",
        title="Writing to new.txt",
        kind="edit",
        content=[diff],
        locations=[v1.ToolCallLocation(path=path, line=1)],
    )
    request = v1.RequestPermissionRequest(
        session_id=SESSION,
        tool_call=call,
        options=[v1.PermissionOption(option_id="ok", name="Allow", kind="allow_once")],
    )
    seen: list[Any] = []

    async def look(asked: PermissionRequest) -> str:
        seen.append(asked.tool_call)  # the session's tool call, patched before asking
        return "ok"

    async with bridged(tmp_path, look) as (agent, _):
        answer = await agent.call(v1m.SESSION_REQUEST_PERMISSION, request)
    assert answer.outcome == v1.SelectedPermissionOutcome(option_id="ok")
    (shown,) = seen
    (lifted,) = shown.content
    assert isinstance(lifted.changes[0], v2.DiffAddChange)
    assert "+new" in lifted.patch.text
    assert [(loc.path, loc.line) for loc in shown.locations] == [(path, 1)]
    assert (shown.title, shown.kind) == ("Writing to new.txt", "edit")


@pytest.mark.anyio
async def test_an_agent_with_modes_and_its_own_mode_option_shows_each_id_once(
    tmp_path: Path,
) -> None:
    # claude-agent-acp 0.23.1 sends both; [mode, model, mode] reached clients (issue 26).
    modes = v1.SessionModeState(
        current_mode_id="default",
        available_modes=[v1.SessionMode(id="default", name="Default")],
    )
    choice = [v1.SessionConfigSelectOption(value="default", name="Default")]
    options: list[Any] = [
        v1.SessionConfigSelect(
            id="mode", name="Mode", category="mode", current_value="default", options=choice
        ),
        v1.SessionConfigBoolean(id="model", name="Model", current_value=True),
    ]

    async def new(params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id=SESSION, modes=modes, config_options=options)

    with anyio.fail_after(TIMEOUT):
        async with back_ways.client_of(
            lambda agent: agent.on(v1m.SESSION_NEW, new), RESULT, cwd=tmp_path
        ) as (_, client):
            session = await client.new_session()
            ids = [option.config_id for option in session.state.config_options]
    assert ids == ["mode", "model"]


@pytest.mark.anyio
async def test_an_update_for_the_session_reaches_the_v2_state(tmp_path: Path) -> None:
    chunk = v1.AgentMessageChunk(content=v1.TextContent(text="hello"))
    note = v1.SessionNotification(session_id=SESSION, update=chunk)
    arrived = anyio.Event()
    async with bridged(tmp_path) as (agent, session):
        session.add_listener(lambda update, raw: arrived.set())
        await agent.notify(v1m.SESSION_UPDATE, note)
        await arrived.wait()
        (message,) = session.state.messages.values()
    assert (message.kind, message.text) == ("agent", "hello")


class HeldPrompts:
    """A v1 ``session/prompt`` handler that records each prompt's text and holds the
    first open until ``release`` is set (a v1 agent takes one prompt at a time)."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.release = anyio.Event()

    async def __call__(self, params: v1.PromptRequest) -> v1.PromptResponse:
        (block,) = params.prompt
        assert isinstance(block, v1.TextContent)
        self.seen.append(block.text)
        if len(self.seen) == 1:
            await self.release.wait()
            return v1.PromptResponse(stop_reason="cancelled")
        return v1.PromptResponse(stop_reason="end_turn")


@pytest.mark.anyio
async def test_a_prompt_sent_while_a_v1_prompt_runs_is_held_until_that_one_is_answered(
    tmp_path: Path,
) -> None:
    agent_prompts = HeldPrompts()
    async with bridged(tmp_path) as (agent, session), anyio.create_task_group() as tg:
        agent.on(v1m.SESSION_PROMPT, agent_prompts)
        first = await session.prompt("first")
        second: list[Work] = []
        tg.start_soon(lambda: _append(second, session.prompt("second")))
        await anyio.wait_all_tasks_blocked()
        assert (agent_prompts.seen, second) == (["first"], [])  # held, its answer too
        agent_prompts.release.set()
        assert await first.wait() == "cancelled"
        await anyio.wait_all_tasks_blocked()
        (work,) = second
        assert await work.wait() == "end_turn"
    assert agent_prompts.seen == ["first", "second"]


@pytest.mark.anyio
async def test_session_cancel_withdraws_a_held_prompt_at_once_with_request_cancelled(
    tmp_path: Path,
) -> None:
    agent_prompts = HeldPrompts()  # its first prompt ignores the cancel until released
    withdrawn: list[BaseException] = []
    async with bridged(tmp_path) as (agent, session), anyio.create_task_group() as tg:
        agent.on(v1m.SESSION_PROMPT, agent_prompts)
        first = await session.prompt("first")
        held = anyio.Event()
        tg.start_soon(partial(_expect_cancelled, withdrawn, session, held))
        await anyio.wait_all_tasks_blocked()
        await session.cancel(wait=False)
        await held.wait()  # withdrawn while the v1 prompt still runs
        assert agent_prompts.seen == ["first"]
        agent_prompts.release.set()
        assert await first.wait() == "cancelled"
    assert [type(e) for e in withdrawn] == [RequestCancelled]
    assert agent_prompts.seen == ["first"]


async def _append(into: list[Work], pending: Awaitable[Work]) -> None:
    into.append(await pending)


async def _expect_cancelled(
    into: list[BaseException], session: ClientSession, done: anyio.Event
) -> None:
    with pytest.raises(RequestCancelled) as caught:
        await session.prompt("held")
    into.append(caught.value)
    done.set()


@pytest.mark.anyio
async def test_two_prompts_sent_together_to_a_v1_agent_each_end_with_their_own_turn(
    tmp_path: Path,
) -> None:
    """The second prompt is sent before the first's turn reports ``running``: the
    bridge holds it until the first v1 prompt is answered, and its work must not take
    the first turn (whose user message has another id) for its own."""

    async def prompt(params: v1.PromptRequest) -> v1.PromptResponse:
        (block,) = params.prompt
        assert isinstance(block, v1.TextContent)
        chunk = v1.AgentMessageChunk(content=v1.TextContent(text=f"re {block.text}"))
        await agent.notify(
            v1m.SESSION_UPDATE, v1.SessionNotification(session_id=SESSION, update=chunk)
        )
        stop = "cancelled" if block.text == "first" else "end_turn"
        return v1.PromptResponse(stop_reason=stop)

    works: dict[str, Work] = {}

    async def send(text: str) -> None:
        works[text] = await session.prompt(text)

    async with bridged(tmp_path) as (agent, session):
        agent.on(v1m.SESSION_PROMPT, prompt)
        async with anyio.create_task_group() as tg:
            tg.start_soon(send, "first")
            tg.start_soon(send, "second")
        stops = {text: await work.wait() for text, work in works.items()}
        texts = {text: work.text for text, work in works.items()}
    assert stops == {"first": "cancelled", "second": "end_turn"}
    assert texts == {"first": "re first", "second": "re second"}


@pytest.mark.anyio
async def test_v1_agents_have_no_background_work_and_cancel_calls_raise_clearly(
    tmp_path: Path,
) -> None:
    """RFD v2 Background Work: a v1 agent never advertises ``cancel``, so the client's
    ``cancel_tool_call`` / ``cancel_terminal`` raise locally (nothing sent); a v2 client
    that sends ``tool_call/cancel`` anyway gets ``-32602`` from the bridge (TC-13)."""
    from acp2.errors import LocalProtocolError
    from acp2.schema import CancelTerminalRequest, CancelToolCallRequest
    from acp2.schema.methods import TERMINAL_CANCEL, TOOL_CALL_CANCEL

    call = v1.ToolCall(tool_call_id="call-1", title="Run the tests")
    note = v1.SessionNotification(session_id=SESSION, update=call)
    arrived = anyio.Event()
    async with bridged(tmp_path) as (agent, session):
        session.add_listener(lambda update, raw: arrived.set())
        await agent.notify(v1m.SESSION_UPDATE, note)
        await arrived.wait()
        with pytest.raises(LocalProtocolError, match=r"capabilities\.cancel"):
            await session.cancel_tool_call("call-1")
        with pytest.raises(LocalProtocolError, match="no terminal"):
            await session.cancel_terminal("term-1")
        raw = session._link.connection  # the JSON-RPC connection, past the checks
        with pytest.raises(InvalidParams, match="ACP v1"):
            await raw.call(
                TOOL_CALL_CANCEL, CancelToolCallRequest(session_id=SESSION, tool_call_id="call-1")
            )
        with pytest.raises(InvalidParams, match="ACP v1"):
            await raw.call(
                TERMINAL_CANCEL, CancelTerminalRequest(session_id=SESSION, terminal_id="t")
            )
        assert session.state.background is None  # never reported: unknown, not "none"
