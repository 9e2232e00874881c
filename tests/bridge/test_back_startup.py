"""acp2's client reads the version of an ``initialize`` answer before decoding it, and
drives a v1 agent through the back bridge with the v2 API: whether the agent answers
``1`` or echoes the requested ``2`` in v1's shape (no ``info``)."""

from __future__ import annotations

from pathlib import Path

import anyio
import msgspec
import pytest

import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
from acp2.client import connect_transport
from acp2.errors import ConnectionClosed
from acp2.rpc import Connection
from acp2.transport.memory import memory_pair
from helpers.timeouts import TIMEOUT


def v1_agent(agent: Connection, answered_version: int) -> Connection:
    """``agent`` made an in-process v1 agent: one session, prompts echoed."""

    async def initialize(params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=answered_version,
            agent_info=v1.Implementation(name="echoing-v1-agent", version="1"),
        )

    async def new(params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s1")

    async def prompt(params: v1.PromptRequest) -> v1.PromptResponse:
        (block,) = params.prompt
        chunk = v1.AgentMessageChunk(content=v1.TextContent(text=f"you said {block.text}"))
        note = v1.SessionNotification(session_id=params.session_id, update=chunk)
        await agent.notify(v1m.SESSION_UPDATE, note)
        return v1.PromptResponse(stop_reason="end_turn")

    agent.on(v1m.INITIALIZE, initialize)
    agent.on(v1m.SESSION_NEW, new)
    agent.on(v1m.SESSION_PROMPT, prompt)
    return agent


@pytest.mark.anyio
@pytest.mark.parametrize("answered", [1, 2], ids=["answers-1", "echoes-2"])
async def test_a_v1_agent_is_driven_with_the_v2_api(tmp_path: Path, answered: int) -> None:
    ours, theirs = memory_pair()
    agent = v1_agent(Connection(theirs, name="v1 agent"), answered)
    with anyio.fail_after(TIMEOUT):
        async with agent, connect_transport(ours, cwd=tmp_path) as client:
            assert client.agent_info.name == "echoing-v1-agent"
            assert client.protocol_version == 2
            session = await client.new_session()
            work = await session.prompt("hi")
            assert await work.wait() == "end_turn"
            assert work.text == "you said hi"
            assert session.state.foreground == "idle"


@pytest.mark.anyio
@pytest.mark.parametrize("files", [False, True])
async def test_fs_is_offered_to_a_v1_agent_only_when_enabled(tmp_path: Path, files: bool) -> None:
    (tmp_path / "notes.txt").write_text("from disk")
    offered: list[object] = []
    ours, theirs = memory_pair()
    agent = v1_agent(Connection(theirs, name="v1 agent"), 1)

    async def initialize(params: v1.InitializeRequest) -> v1.InitializeResponse:
        offered.append(params.client_capabilities)
        return v1.InitializeResponse(protocol_version=1)

    async def prompt(params: v1.PromptRequest) -> v1.PromptResponse:
        read = v1.ReadTextFileRequest(session_id="s1", path=str(tmp_path / "notes.txt"))
        content = (await agent.call(v1m.FS_READ_TEXT_FILE, read)).content
        chunk = v1.AgentMessageChunk(content=v1.TextContent(text=content))
        await agent.notify(
            v1m.SESSION_UPDATE, v1.SessionNotification(session_id="s1", update=chunk)
        )
        return v1.PromptResponse(stop_reason="end_turn")

    agent.on(v1m.INITIALIZE, initialize)
    agent.on(v1m.SESSION_PROMPT, prompt)
    with anyio.fail_after(TIMEOUT):
        async with agent, connect_transport(ours, cwd=tmp_path, files=files) as client:
            session = await client.new_session()
            work = await session.prompt("read it")
            stop = await work.wait()

    (caps,) = offered
    if files:
        assert isinstance(caps, v1.ClientCapabilities)
        assert caps.fs is not msgspec.UNSET
        assert (caps.fs.read_text_file, caps.fs.write_text_file) == (True, True)
        assert (stop, work.text) == ("end_turn", "from disk")
    else:
        assert caps is msgspec.UNSET  # a plain v2 initialize: nothing offered
        assert stop == "error"  # the read was refused (-32601), so the v1 prompt failed


@pytest.mark.anyio
async def test_a_v1_agent_going_away_mid_turn_fails_the_work(tmp_path: Path) -> None:
    ours, theirs = memory_pair()
    agent = v1_agent(Connection(theirs, name="v1 agent"), 1)
    asked = anyio.Event()

    async def prompt(params: v1.PromptRequest) -> v1.PromptResponse:
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")  # pragma: no cover

    agent.on(v1m.SESSION_PROMPT, prompt)
    with anyio.fail_after(TIMEOUT):
        async with agent, connect_transport(ours, cwd=tmp_path) as client:
            session = await client.new_session()
            work = await session.prompt("hang")
            await asked.wait()
            await theirs.aclose()  # the agent dies: no answer, end of stream
            with pytest.raises(ConnectionClosed):
                await work.wait()


@pytest.mark.anyio
async def test_a_v1_mode_is_a_config_option_set_through_set_mode(tmp_path: Path) -> None:
    ours, theirs = memory_pair()
    agent = v1_agent(Connection(theirs, name="v1 agent"), 1)
    modes = [v1.SessionMode(id="ask", name="Ask"), v1.SessionMode(id="code", name="Code")]
    chosen: list[str] = []

    async def new(params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        state = v1.SessionModeState(current_mode_id="ask", available_modes=modes)
        return v1.NewSessionResponse(session_id="s1", modes=state)

    async def set_mode(params: v1.SetSessionModeRequest) -> v1.SetSessionModeResponse:
        chosen.append(params.mode_id)
        return v1.SetSessionModeResponse()

    agent.on(v1m.SESSION_NEW, new)
    agent.on(v1m.SESSION_SET_MODE, set_mode)
    with anyio.fail_after(TIMEOUT):
        async with agent, connect_transport(ours, cwd=tmp_path) as client:
            session = await client.new_session()
            (mode,) = session.state.config_options
            assert (mode.config_id, mode.current_value) == ("mode", "ask")
            await session.set_config_option("mode", "code")
            (mode,) = session.state.config_options
    assert chosen == ["code"]
    assert mode.current_value == "code"
