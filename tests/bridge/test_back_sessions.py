"""The back bridge keeps only the session methods a v1 agent can keep (issue 26, fault
3): what the agent advertised is forwarded, resume without ``sessionCapabilities.resume``
goes through ``session/load`` with the replay withheld, close without
``sessionCapabilities.close`` is local forgetting, and the rest is refused here with
``-32601`` -- never sent. The agent's error answers keep their reason, and a malformed
answer is one error naming the agent and the method (IN-09, SS-10, SS-11, SS-18, SS-22).
Every test runs both ways (``back_ways``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import back_ways
import pytest
from msgspec import UNSET

import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
from acp2.client import ClientConnection
from acp2.errors import InternalError, MethodNotFound, internal_error
from acp2.rpc import Connection
from helpers.timeouts import TIMEOUT

SESSION = "v1-session"
AGENT = "scripted-v1-agent"


@pytest.fixture(autouse=True, params=back_ways.WAYS)
def way(request: pytest.FixtureRequest) -> str:
    """Run every test both ways (see ``back_ways``)."""
    back_ways.WAY = request.param
    return str(request.param)


def result(*, load: bool = False, **advertised: bool) -> v1.InitializeResponse:
    """A v1 ``initialize`` answer with ``loadSession`` = ``load`` and the
    ``sessionCapabilities`` named in ``advertised`` (``list`` / ``resume`` / ``close``)."""
    markers = {
        "list": v1.SessionListCapabilities,
        "resume": v1.SessionResumeCapabilities,
        "close": v1.SessionCloseCapabilities,
    }
    extra = {name: markers[name]() for name, on in advertised.items() if on}
    return v1.InitializeResponse(
        protocol_version=1,
        agent_info=v1.Implementation(name=AGENT, version="1"),
        agent_capabilities=v1.AgentCapabilities(
            load_session=load, session_capabilities=v1.SessionCapabilities(**extra)
        ),
    )


class Agent:
    """The scripted v1 agent's handlers: every session request it got is recorded in
    ``calls``; ``session/load`` replays two chunks before it answers."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.conn: Connection | None = None

    def install(self, conn: Connection) -> None:
        self.conn = conn
        conn.on(v1m.SESSION_NEW, self.new)
        conn.on(v1m.SESSION_LOAD, self.load)
        conn.on(v1m.SESSION_RESUME, self.record(v1m.SESSION_RESUME, v1.ResumeSessionResponse()))
        conn.on(v1m.SESSION_CLOSE, self.record(v1m.SESSION_CLOSE, v1.CloseSessionResponse()))
        listing = v1.ListSessionsResponse(
            sessions=[v1.SessionInfo(session_id=SESSION, cwd="/listed")]
        )
        conn.on(v1m.SESSION_LIST, self.record(v1m.SESSION_LIST, listing))
        conn.on(v1m.SESSION_PROMPT, self.prompt)

    def record(self, spec: Any, answer: Any) -> Callable[[Any], Any]:
        async def handler(params: Any) -> Any:
            self.calls.append(spec.name)
            return answer

        return handler

    async def new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        self.calls.append(v1m.SESSION_NEW.name)
        return v1.NewSessionResponse(session_id=SESSION)

    async def say(self, update: Any) -> None:
        assert self.conn is not None
        note = v1.SessionNotification(session_id=SESSION, update=update)
        await self.conn.notify(v1m.SESSION_UPDATE, note)

    async def load(self, params: v1.LoadSessionRequest) -> v1.LoadSessionResponse:
        self.calls.append(v1m.SESSION_LOAD.name)
        await self.say(v1.UserMessageChunk(content=v1.TextContent(text="old question")))
        await self.say(v1.AgentMessageChunk(content=v1.TextContent(text="old answer")))
        return v1.LoadSessionResponse()

    async def prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        self.calls.append(v1m.SESSION_PROMPT.name)
        await self.say(v1.AgentMessageChunk(content=v1.TextContent(text="new answer")))
        return v1.PromptResponse(stop_reason="end_turn")


@asynccontextmanager
async def client_of(
    answer: v1.InitializeResponse, agent: Agent, tmp_path: Path
) -> AsyncIterator[ClientConnection]:
    with anyio.fail_after(TIMEOUT):
        async with back_ways.client_of(agent.install, answer, cwd=tmp_path) as (_, client):
            yield client


def texts(updates: list[Any]) -> list[str]:
    return [u.content.text for u in updates if type(u).__name__.endswith("MessageChunk")]


@pytest.mark.anyio
async def test_the_initialize_answer_names_what_is_refused_and_what_is_emulated(
    tmp_path: Path,
) -> None:
    async with client_of(result(load=True), Agent(), tmp_path) as client:
        meta = client.agent_capabilities.session.meta  # type: ignore[union-attr]
    assert meta == {
        "acp2": {
            "v1Sessions": {
                "refused": ["session/list"],
                "emulated": {"session/resume": "load", "session/close": "local"},
            }
        }
    }


@pytest.mark.anyio
async def test_resume_without_replay_goes_through_load_and_withholds_the_replay(
    tmp_path: Path,
) -> None:
    agent = Agent()
    seen: list[Any] = []
    commands = anyio.Event()

    def listen(update: Any, raw: Any) -> None:
        seen.append(update)
        if type(update).__name__ == "AvailableCommandsUpdate":
            commands.set()

    async with client_of(result(load=True), agent, tmp_path) as client:
        session = await client.resume(SESSION, on_update=listen)
        # Like Gemini CLI, the agent goes on replaying after its answer, then sends state.
        await agent.say(v1.AgentMessageChunk(content=v1.TextContent(text="older answer")))
        await agent.say(v1.AvailableCommandsUpdate(available_commands=[]))
        await commands.wait()
        assert texts(seen) == []  # the replay is not shown as new (SS-11)
        assert not session.state.messages
        work = await session.prompt("go on")
        assert await work.wait() == "end_turn"
    assert agent.calls == ["session/load", "session/prompt"]
    assert texts(seen) == ["new answer"]


@pytest.mark.anyio
async def test_a_replay_sent_after_the_load_answer_is_not_taken_for_the_next_reply(
    tmp_path: Path,
) -> None:
    """Gemini CLI 0.61 answers ``session/load`` and then replays; ``acp2 run --resume``
    prompts at once. The resume is answered once the agent is quiet."""
    agent = Agent()
    late: list[asyncio.Task[None]] = []

    async def replay_after(params: v1.LoadSessionRequest) -> v1.LoadSessionResponse:
        async def rest() -> None:
            for text in ("old question", "old answer"):
                await anyio.sleep(0.01)  # the agent's own pace, not a wait of the test
                await agent.say(v1.AgentMessageChunk(content=v1.TextContent(text=text)))

        late.append(asyncio.get_running_loop().create_task(rest()))
        return v1.LoadSessionResponse()

    async def prompt(params: v1.PromptRequest) -> v1.PromptResponse:
        await late[0]  # a prompt read while the replay goes on waits for it
        return await agent.prompt(params)

    def install(conn: Connection) -> None:
        agent.install(conn)
        conn.on(v1m.SESSION_LOAD, replay_after)
        conn.on(v1m.SESSION_PROMPT, prompt)

    with anyio.fail_after(TIMEOUT):
        async with back_ways.client_of(install, result(load=True), cwd=tmp_path) as (_, client):
            session = await client.resume(SESSION)
            work = await session.prompt("go on")
            assert await work.wait() == "end_turn"
    assert work.text == "new answer"


@pytest.mark.anyio
async def test_a_replay_from_start_sent_after_the_load_answer_arrives_before_the_resume_answer(
    tmp_path: Path,
) -> None:
    """Gemini CLI 0.61 answers ``session/load`` and then replays: the v2 resume with
    ``replayFrom: start`` is answered after the whole replay (SS-14)."""
    agent = Agent()
    late: list[asyncio.Task[None]] = []

    async def replay_after(params: v1.LoadSessionRequest) -> v1.LoadSessionResponse:
        async def rest() -> None:
            await anyio.sleep(0.01)  # the agent's own pace, not a wait of the test
            await agent.say(v1.UserMessageChunk(content=v1.TextContent(text="old question")))
            await agent.say(v1.AgentMessageChunk(content=v1.TextContent(text="old answer")))

        late.append(asyncio.get_running_loop().create_task(rest()))
        return v1.LoadSessionResponse()

    def install(conn: Connection) -> None:
        agent.install(conn)
        conn.on(v1m.SESSION_LOAD, replay_after)

    with anyio.fail_after(TIMEOUT):
        async with back_ways.client_of(install, result(load=True), cwd=tmp_path) as (_, client):
            session = await client.resume(SESSION, replay=True)
            found = sorted(m.text for m in session.state.messages.values())
    assert found == ["old answer", "old question"]


@pytest.mark.anyio
async def test_resume_with_replay_from_start_still_shows_the_replay(tmp_path: Path) -> None:
    async with client_of(result(load=True), Agent(), tmp_path) as client:
        session = await client.resume(SESSION, replay=True)
        found = sorted(m.text for m in session.state.messages.values())
    assert found == ["old answer", "old question"]


@pytest.mark.anyio
async def test_resume_is_forwarded_as_v1_resume_when_the_agent_advertises_it(
    tmp_path: Path,
) -> None:
    agent = Agent()
    async with client_of(result(load=True, resume=True), agent, tmp_path) as client:
        await client.resume(SESSION)
    assert agent.calls == ["session/resume"]


@pytest.mark.anyio
async def test_resume_is_refused_locally_naming_the_missing_capability(tmp_path: Path) -> None:
    agent = Agent()
    async with client_of(result(), agent, tmp_path) as client:
        with pytest.raises(MethodNotFound) as caught:
            await client.resume(SESSION)
    assert agent.calls == []
    assert caught.value.message == (
        f"session/resume is not available: the ACP v1 agent {AGENT} does not advertise "
        "loadSession or sessionCapabilities.resume"
    )


@pytest.mark.anyio
@pytest.mark.parametrize("advertised", [False, True])
async def test_list_is_forwarded_only_when_advertised_else_refused_locally(
    tmp_path: Path, advertised: bool
) -> None:
    agent = Agent()
    async with client_of(result(list=advertised), agent, tmp_path) as client:
        if advertised:
            (info,) = await client.list_sessions()
            assert info.cwd == "/listed"
        else:
            with pytest.raises(MethodNotFound, match=r"sessionCapabilities\.list"):
                await client.list_sessions()
    assert agent.calls == (["session/list"] if advertised else [])


@pytest.mark.anyio
async def test_close_is_forwarded_when_the_agent_advertises_it(tmp_path: Path) -> None:
    agent = Agent()
    async with client_of(result(close=True), agent, tmp_path) as client:
        session = await client.new_session()
        await session.close()
    assert agent.calls == ["session/new", "session/close"]


@pytest.mark.anyio
async def test_close_without_the_capability_cancels_the_turn_and_forgets_the_session(
    tmp_path: Path,
) -> None:
    agent = Agent()
    cancelled = anyio.Event()
    release = anyio.Event()

    async def slow_prompt(params: v1.PromptRequest) -> v1.PromptResponse:
        await release.wait()
        return v1.PromptResponse(stop_reason="cancelled")

    def on_cancel(params: v1.CancelNotification) -> None:
        cancelled.set()
        release.set()

    def install(conn: Connection) -> None:
        agent.install(conn)
        conn.on(v1m.SESSION_PROMPT, slow_prompt)
        conn.on(v1m.SESSION_CANCEL, on_cancel)

    with anyio.fail_after(TIMEOUT):
        async with back_ways.client_of(install, result(), cwd=tmp_path) as (_, client):
            session = await client.new_session()
            work = await session.prompt("long")
            await session.close()
            # The running prompt was cancelled and ended before the close answer (SS-22).
            assert cancelled.is_set()
            assert work.done
            assert work.stop_reason == "cancelled"
            # A late update of the forgotten session is dropped, not kept for a session of
            # that id opened later (this agent gives every session the same id).
            await agent.say(v1.AgentMessageChunk(content=v1.TextContent(text="late")))
            again = await client.new_session()
            assert again.id == SESSION
            assert not again.state.messages
    assert "session/close" not in agent.calls


@pytest.mark.anyio
@pytest.mark.parametrize("method", ["session/new", "session/list", "session/close"])
async def test_a_null_answer_is_one_error_naming_the_agent_and_the_method(
    tmp_path: Path, method: str
) -> None:
    async def null(params: Any) -> None:
        return None

    spec = v1m.METHODS[method]
    agent = Agent()

    def install(conn: Connection) -> None:
        agent.install(conn)
        conn.on(spec, null)

    with anyio.fail_after(TIMEOUT):
        answer = result(list=True, close=True)
        async with back_ways.client_of(install, answer, cwd=tmp_path) as (_, client):
            if method == "session/close":
                call: Any = (await client.new_session()).close
            else:
                call = client.new_session if method == "session/new" else client.list_sessions
            with pytest.raises(InternalError) as caught:
                await call()
    message = caught.value.message
    assert message.startswith(f"the ACP v1 agent {AGENT} answered {method} with a malformed")
    assert "\n" not in message


@pytest.mark.anyio
async def test_a_failed_load_says_the_agents_reason_in_its_message(tmp_path: Path) -> None:
    async def failing_load(params: v1.LoadSessionRequest) -> v1.LoadSessionResponse:
        error = internal_error("Internal error")
        error.data = {"details": "session file is corrupt"}
        raise error

    def install(conn: Connection) -> None:
        Agent().install(conn)
        conn.on(v1m.SESSION_LOAD, failing_load)

    with anyio.fail_after(TIMEOUT):
        async with back_ways.client_of(install, result(load=True), cwd=tmp_path) as (_, client):
            with pytest.raises(InternalError) as caught:
                await client.resume(SESSION, replay=True)
    assert caught.value.message == "Internal error: session file is corrupt"
    assert caught.value.data == {"details": "session file is corrupt"}


@pytest.mark.anyio
async def test_a_failed_prompt_says_the_agents_reason_in_the_idle_error(tmp_path: Path) -> None:
    async def failing_prompt(params: v1.PromptRequest) -> v1.PromptResponse:
        error = internal_error("Internal error")
        error.data = {"details": "the model quota is used up"}
        raise error

    def install(conn: Connection) -> None:
        Agent().install(conn)
        conn.on(v1m.SESSION_PROMPT, failing_prompt)

    with anyio.fail_after(TIMEOUT):
        async with back_ways.client_of(install, result(), cwd=tmp_path) as (_, client):
            session = await client.new_session()
            work = await session.prompt("hi")
            assert await work.wait() == "error"
    assert work.error is not UNSET
    assert work.error.message == "Internal error: the model quota is used up"


@pytest.mark.parametrize(
    ("message", "data", "shown"),
    [
        ("Internal error", {"details": "disk full"}, "Internal error: disk full"),
        ("Internal error", "no such session", "Internal error: no such session"),
        ("Internal error", {"code": 7}, 'Internal error: {"code": 7}'),
        ("Load failed: disk full", {"details": "disk full"}, "Load failed: disk full"),
        ("Internal error", None, "Internal error"),
        ("Internal error", {"details": "a\nb\tc"}, "Internal error: a b c"),
    ],
)
def test_explain_appends_the_reason_the_message_does_not_say_yet(
    message: str, data: Any, shown: str
) -> None:
    from acp2.bridge.back_sessions import explain
    from acp2.errors import RequestError

    error = explain(RequestError(message, data, code=-32000, remote=True))
    assert (error.message, str(error), error.data) == (shown, shown, data)


def test_explain_bounds_a_long_reason() -> None:
    from acp2.bridge.back_sessions import explain
    from acp2.errors import MAX_REASON, RequestError

    error = explain(RequestError("Internal error", "x" * 5000))
    assert len(error.message) == len("Internal error: ") + MAX_REASON
