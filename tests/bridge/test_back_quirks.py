"""The back bridge serving what real v1 agents do beyond the schema (seen with Gemini CLI
0.61.0, ``tests/real_agents``): a session's first update sent with the ``session/new``
answer, and a missing file that must read as empty for the agent named ``gemini-cli``.

In process: acp2's v2 client over a memory pair, the bridge, and a v1 agent on acp2's
own ``Connection`` with the v1 method table.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import back_ways
import pytest

import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
from acp2.client import ClientSession, deny_all
from acp2.errors import ResourceNotFound
from acp2.rpc import Connection
from helpers.timeouts import TIMEOUT

SESSION = "v1-session"

NewHandler = Callable[[v1.NewSessionRequest], Awaitable[v1.NewSessionResponse]]


def plain_new(agent: Connection) -> NewHandler:
    async def new(params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id=SESSION)

    return new


def answer(name: str) -> v1.InitializeResponse:
    """The ``initialize`` answer of a v1 agent called ``name``."""
    return v1.InitializeResponse(
        protocol_version=1,
        agent_info=v1.Implementation(name=name, version="1"),
        agent_capabilities=v1.AgentCapabilities(load_session=False),
    )


@asynccontextmanager
async def bridged(
    cwd: Path, *, name: str = "some-v1-agent", new: Callable[[Connection], NewHandler] = plain_new
) -> AsyncIterator[tuple[Connection, ClientSession]]:
    """A v1 agent connection (``initialize`` answered as agent ``name``, ``session/new``
    served by ``new(agent)``) and the v2 client session the bridge made over it."""
    with anyio.fail_after(TIMEOUT):
        async with back_ways.client_of(
            lambda agent: agent.on(v1m.SESSION_NEW, new(agent)),
            answer(name),
            files=True,
            cwd=cwd,
            permissions=deny_all,
        ) as (agent, client):
            yield agent, await client.new_session()


@pytest.fixture(autouse=True, params=back_ways.WAYS)
def way(request: pytest.FixtureRequest) -> str:
    """Run every test both ways (see ``back_ways``)."""
    back_ways.WAY = request.param
    return str(request.param)


def read(path: Path) -> v1.ReadTextFileRequest:
    return v1.ReadTextFileRequest(session_id=SESSION, path=str(path))


@pytest.mark.anyio
async def test_a_missing_file_reads_as_empty_text_for_gemini_cli(tmp_path: Path) -> None:
    async with bridged(tmp_path, name="gemini-cli") as (agent, _):
        missing = await agent.call(v1m.FS_READ_TEXT_FILE, read(tmp_path / "new.txt"))
    assert missing.content == ""


@pytest.mark.anyio
async def test_a_missing_file_answers_resource_not_found_in_the_sdk_wording(
    tmp_path: Path,
) -> None:
    async with bridged(tmp_path) as (agent, _):
        with pytest.raises(ResourceNotFound) as caught:
            await agent.call(v1m.FS_READ_TEXT_FILE, read(tmp_path / "new.txt"))
    assert caught.value.code == -32002
    assert caught.value.message == f"Resource not found: {tmp_path / 'new.txt'}"


@pytest.mark.anyio
async def test_an_update_sent_with_the_session_new_answer_reaches_the_v2_state(
    tmp_path: Path,
) -> None:
    commands = v1.AvailableCommandsUpdate(
        available_commands=[v1.AvailableCommand(name="memory", description="Manage memory.")]
    )

    def new_and_update(agent: Connection) -> NewHandler:
        async def new(params: v1.NewSessionRequest) -> v1.NewSessionResponse:
            # Written before the answer: the bridge reads it before `_new` resumes, as
            # with Gemini CLI, whose first update races its answer.
            note = v1.SessionNotification(session_id=SESSION, update=commands)
            agent.send_notification_nowait(v1m.SESSION_UPDATE, note)
            return v1.NewSessionResponse(session_id=SESSION)

        return new

    async with bridged(tmp_path, new=new_and_update) as (_, session):
        seen = anyio.Event()
        session.add_listener(lambda update, raw: seen.set())
        if not session.state.available_commands:
            await seen.wait()
        names = [command.name for command in session.state.available_commands]
    assert names == ["memory"]
