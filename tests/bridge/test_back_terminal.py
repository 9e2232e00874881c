"""The back bridge serves a v1 agent's ``terminal/*`` requests with real subprocesses.

acp2's v2 client over a memory pair, the bridge, and a v1 agent built on acp2's own
JSON-RPC ``Connection`` with the v1 method table, which the tests drive request by
request. Whether a command's process group is gone is asked of the kernel
(``os.killpg(pgid, 0)``); the pgid comes from the command itself, which prints it first.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import back_ways
import msgspec
import pytest

import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
from acp2.bridge import back_terminal
from acp2.client import ClientSession, PermissionPolicy, allow_all, connect_transport, deny_all
from acp2.errors import InvalidParams, InvalidRequest, MethodNotFound, ResourceNotFound
from acp2.rpc import Connection
from acp2.schema import Terminal
from acp2.state import TerminalState
from acp2.transport.memory import memory_pair
from acp2.transport.procgroup import group_alive
from helpers.timeouts import SCENARIO_TIMEOUT, TIMEOUT

SESSION = "v1-session"
RESULT = v1.InitializeResponse(
    protocol_version=1,
    agent_info=v1.Implementation(name="in-process-v1-agent", version="1"),
    agent_capabilities=v1.AgentCapabilities(load_session=False),
)
# Prints its process group id, then waits: a command that must be stopped.
PRINT_PGID_AND_WAIT = "import os, time; print(os.getpgid(0), flush=True); time.sleep(60)"


async def _new(params: v1.NewSessionRequest) -> v1.NewSessionResponse:
    return v1.NewSessionResponse(session_id=SESSION)


async def _close(params: v1.CloseSessionRequest) -> v1.CloseSessionResponse:
    return v1.CloseSessionResponse()


@asynccontextmanager
async def bridged(
    cwd: Path, permissions: PermissionPolicy = allow_all, *, terminals: bool = True
) -> AsyncIterator[tuple[Connection, ClientSession]]:
    """A v1 agent connection and the v2 client session the bridge made over it."""

    def setup(agent: Connection) -> None:
        agent.on(v1m.SESSION_NEW, _new)
        agent.on(v1m.SESSION_CLOSE, _close)

    # A whole scenario: up to 17 Python processes started on a loaded machine.
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with back_ways.client_of(
            setup, RESULT, terminals=terminals, cwd=cwd, permissions=permissions
        ) as (agent, client):
            yield agent, await client.new_session()


@pytest.fixture(autouse=True, params=back_ways.WAYS)
def way(request: pytest.FixtureRequest) -> str:
    """Run every test both ways (see ``back_ways``)."""
    back_ways.WAY = request.param
    return str(request.param)


async def create(agent: Connection, *argv: str, **fields: Any) -> str:
    """``terminal/create`` of ``argv`` (a Python program when it starts with ``-c``)."""
    command, *args = [sys.executable, *argv] if argv[0] == "-c" else argv
    request = v1.CreateTerminalRequest(session_id=SESSION, command=command, args=args, **fields)
    return (await agent.call(v1m.TERMINAL_CREATE, request)).terminal_id


def ids(terminal_id: str) -> dict[str, str]:
    return {"session_id": SESSION, "terminal_id": terminal_id}


async def output(agent: Connection, terminal_id: str) -> v1.TerminalOutputResponse:
    return await agent.call(v1m.TERMINAL_OUTPUT, v1.TerminalOutputRequest(**ids(terminal_id)))


async def wait_exit(agent: Connection, terminal_id: str) -> v1.WaitForTerminalExitResponse:
    request = v1.WaitForTerminalExitRequest(**ids(terminal_id))
    return await agent.call(v1m.TERMINAL_WAIT_FOR_EXIT, request)


async def shown(session: ClientSession, terminal_id: str, done: Any) -> TerminalState:
    """The v2 client's terminal ``terminal_id`` once ``done(it)`` (updates arrive on
    their own connection, after the v1 answers)."""
    ready = anyio.Event()

    def check(*_: Any) -> None:
        term = session.state.terminals.get(terminal_id)
        if term is not None and done(term):
            ready.set()

    remove = session.add_listener(check)
    check()
    await ready.wait()
    remove()
    return session.state.terminals[terminal_id]


async def first_line(session: ClientSession, terminal_id: str) -> str:
    """The first output line of a terminal, as the v2 client received it."""
    term = await shown(session, terminal_id, lambda term: "\n" in term.text)
    return term.text.split("\n")[0]


async def shown_exited(session: ClientSession, terminal_id: str) -> TerminalState:
    """The v2 client's terminal once it holds the exit status (sent after the output)."""
    return await shown(session, terminal_id, lambda term: term.exited)


def real(path: Path) -> str:
    return os.path.realpath(path)


def group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


async def running_group(agent: Connection, session: ClientSession) -> tuple[str, int]:
    terminal_id = await create(agent, "-c", PRINT_PGID_AND_WAIT)
    pgid = int(await first_line(session, terminal_id))
    assert group_exists(pgid)
    return terminal_id, pgid


@pytest.mark.anyio
async def test_a_command_runs_and_its_output_and_exit_code_are_served(tmp_path: Path) -> None:
    async with bridged(tmp_path) as (agent, session):
        tid = await create(agent, "-c", "import sys; print('hello'); sys.exit(3)")
        exited = await wait_exit(agent, tid)
        got = await output(agent, tid)
        display = await shown_exited(session, tid)
    assert (exited.exit_code, exited.signal) == (3, None)
    assert (got.output, got.truncated) == ("hello\n", False)
    assert got.exit_status == v1.TerminalExitStatus(exit_code=3, signal=None)
    # The v2 client holds the same terminal: command, bytes and exit status.
    assert display.text == "hello\n"
    assert display.command is not None
    assert shlex.split(display.command)[1:] == ["-c", "import sys; print('hello'); sys.exit(3)"]
    assert display.exit_status.exit_code == 3


@pytest.mark.anyio
async def test_output_before_exit_has_no_exit_status(tmp_path: Path) -> None:
    async with bridged(tmp_path) as (agent, session):
        tid, _ = await running_group(agent, session)
        got = await output(agent, tid)
    assert got.exit_status is None
    assert got.output.strip().isdigit()


@pytest.mark.anyio
async def test_a_shell_line_without_args_runs_in_the_shell(tmp_path: Path) -> None:
    async with bridged(tmp_path) as (agent, _):
        tid = await create(
            agent, "echo one && echo $GREETING", env=[v1.EnvVariable(name="GREETING", value="two")]
        )
        await wait_exit(agent, tid)
        got = await output(agent, tid)
    assert got.output == "one\ntwo\n"


@pytest.mark.anyio
async def test_kill_stops_the_whole_process_group_and_keeps_the_terminal(tmp_path: Path) -> None:
    async with bridged(tmp_path) as (agent, session):
        tid, pgid = await running_group(agent, session)
        await agent.call(v1m.TERMINAL_KILL, v1.KillTerminalRequest(**ids(tid)))
        assert not group_exists(pgid)
        exited = await wait_exit(agent, tid)
        got = await output(agent, tid)  # still readable after the kill
    assert exited.signal == "SIGTERM"
    assert got.exit_status is not None
    assert got.exit_status.signal == "SIGTERM"


@pytest.mark.anyio
async def test_release_stops_the_command_and_forgets_the_id(tmp_path: Path) -> None:
    async with bridged(tmp_path) as (agent, session):
        tid, pgid = await running_group(agent, session)
        await agent.call(v1m.TERMINAL_RELEASE, v1.ReleaseTerminalRequest(**ids(tid)))
        assert not group_exists(pgid)
        with pytest.raises(InvalidParams) as caught:
            await output(agent, tid)
    assert caught.value.code == -32602


@pytest.mark.anyio
async def test_an_unknown_terminal_id_answers_invalid_params(tmp_path: Path) -> None:
    async with bridged(tmp_path) as (agent, _):
        for call in (output, wait_exit):
            with pytest.raises(InvalidParams, match="unknown terminal"):
                await call(agent, "no-such-terminal")


@pytest.mark.anyio
async def test_a_create_for_an_unknown_session_answers_resource_not_found(tmp_path: Path) -> None:
    request = v1.CreateTerminalRequest(session_id="no-such-session", command="true")
    async with bridged(tmp_path) as (agent, _):
        with pytest.raises(ResourceNotFound):
            await agent.call(v1m.TERMINAL_CREATE, request)


@pytest.mark.anyio
async def test_output_past_the_byte_limit_is_cut_from_the_start_at_a_character(
    tmp_path: Path,
) -> None:
    async with bridged(tmp_path) as (agent, _):
        # 200 bytes of two-byte characters; 51 bytes would start inside one.
        tid = await create(agent, "-c", "print('é' * 100, end='')", output_byte_limit=51)
        await wait_exit(agent, tid)
        got = await output(agent, tid)
    assert (got.output, got.truncated) == ("é" * 25, True)


@pytest.mark.anyio
async def test_output_is_capped_here_and_in_the_v2_client_whatever_the_limit(
    tmp_path: Path,
) -> None:
    cap = back_terminal.OUTPUT_CAP
    program = f"import sys; sys.stdout.write('x' * {3 * cap}); sys.stdout.write('end')"
    async with bridged(tmp_path) as (agent, session):
        tid = await create(agent, "-c", program)
        await wait_exit(agent, tid)
        got = await output(agent, tid)
        display = await shown_exited(session, tid)
    assert got.truncated
    assert len(got.output) == cap
    assert got.output.endswith("end")
    assert len(display.output) <= 2 * cap
    assert display.text.endswith("end")


@pytest.mark.anyio
async def test_a_cwd_below_the_session_cwd_is_used(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    async with bridged(tmp_path) as (agent, _):
        tid = await create(agent, "-c", "import os; print(os.getcwd())", cwd=str(tmp_path / "sub"))
        await wait_exit(agent, tid)
        got = await output(agent, tid)
    assert got.output == real(tmp_path / "sub") + "\n"


@pytest.mark.anyio
@pytest.mark.parametrize("where", ["outside", "dotdot", "relative", "symlink", "missing"])
async def test_a_cwd_outside_the_session_directories_is_refused(tmp_path: Path, where: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(tmp_path, root / "link")
    cwd = {
        "outside": str(tmp_path),
        "dotdot": f"{root}/..",
        "relative": "root",
        "symlink": str(root / "link"),
        "missing": str(root / "absent"),
    }[where]
    marker = tmp_path / "ran"
    async with bridged(root) as (agent, _):
        with pytest.raises(InvalidParams):
            await create(agent, "-c", f"open({str(marker)!r}, 'w')", cwd=cwd)
    assert not marker.exists()


@pytest.mark.anyio
async def test_a_command_refused_by_the_permission_policy_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    async with bridged(tmp_path, deny_all) as (agent, _):
        with pytest.raises(InvalidRequest, match="refused"):
            await create(agent, "-c", f"open({str(marker)!r}, 'w')")
    assert not marker.exists()


@pytest.mark.anyio
async def test_the_permission_request_names_the_command_and_its_directory(tmp_path: Path) -> None:
    asked: list[Any] = []

    def policy(request: Any) -> str:
        asked.append(request.params)
        return "allow"

    async with bridged(tmp_path, policy) as (agent, _):
        tid = await create(agent, "echo", "hi")
    (params,) = asked
    assert params.subject.command == "echo hi"
    assert params.subject.cwd == real(tmp_path)
    assert params.subject.terminal_id == tid


@pytest.mark.anyio
async def test_a_cancelled_session_kills_its_terminals(tmp_path: Path) -> None:
    async with bridged(tmp_path) as (agent, session):
        tid, pgid = await running_group(agent, session)
        await session.cancel(wait=False)
        exited = await wait_exit(agent, tid)
        assert not group_exists(pgid)
    assert exited.signal == "SIGTERM"


@pytest.mark.anyio
async def test_a_closed_session_releases_its_terminals(tmp_path: Path) -> None:
    async with bridged(tmp_path) as (agent, session):
        tid, pgid = await running_group(agent, session)
        await session.close()
        assert not group_exists(pgid)
        with pytest.raises(InvalidParams):
            await output(agent, tid)


@pytest.mark.anyio
async def test_the_connection_closing_stops_every_leaked_terminal(tmp_path: Path) -> None:
    async with bridged(tmp_path) as (agent, session):
        groups = [(await running_group(agent, session))[1] for _ in range(3)]
    assert not any(group_exists(pgid) for pgid in groups)


@pytest.mark.anyio
async def test_an_agent_that_never_releases_is_held_to_the_limit(tmp_path: Path) -> None:
    limit = back_terminal.MAX_TERMINALS
    async with bridged(tmp_path) as (agent, session):
        first = await create(agent, "true")
        await wait_exit(agent, first)
        running = [await running_group(agent, session) for _ in range(limit - 1)]
        # At the limit the exited terminal is released for the agent ...
        await running_group(agent, session)
        with pytest.raises(InvalidParams):
            await output(agent, first)
        # ... and with every terminal running, the next create is refused.
        with pytest.raises(InvalidRequest, match="release one first") as caught:
            await create(agent, "true")
    assert caught.value.code == -32600
    assert not any(group_exists(pgid) for _, pgid in running)


@pytest.mark.anyio
async def test_terminals_are_not_served_unless_enabled(tmp_path: Path) -> None:
    async with bridged(tmp_path, terminals=False) as (agent, _):
        with pytest.raises(MethodNotFound):
            await create(agent, "true")


@pytest.mark.anyio
async def test_a_tool_call_embedding_the_terminal_shows_its_output(tmp_path: Path) -> None:
    async with bridged(tmp_path) as (agent, session):
        tid = await create(agent, "echo", "built")
        await wait_exit(agent, tid)
        call = v1.ToolCall(tool_call_id="t1", title="Build", content=[v1.Terminal(terminal_id=tid)])
        arrived = anyio.Event()
        session.add_listener(lambda *_: arrived.set() if "t1" in session.state.tool_calls else None)
        await agent.notify(
            v1m.SESSION_UPDATE, v1.SessionNotification(session_id=SESSION, update=call)
        )
        await arrived.wait()
        (item,) = session.state.tool_calls["t1"].content
        assert isinstance(item, Terminal)
        assert item.terminal_id == tid
        assert (await shown_exited(session, tid)).text == "built\n"


@pytest.mark.anyio
@pytest.mark.parametrize("terminals", [True, False])
async def test_the_terminal_capability_is_offered_only_when_enabled(
    tmp_path: Path, terminals: bool
) -> None:
    offered: list[Any] = []
    ours, theirs = memory_pair()
    agent = Connection(theirs, name="v1 agent")

    async def initialize(params: msgspec.Raw) -> v1.InitializeResponse:
        offered.append(msgspec.json.decode(params))
        return RESULT

    agent.on_request(v1m.INITIALIZE.name, msgspec.Raw, initialize)
    with anyio.fail_after(TIMEOUT):
        async with agent, connect_transport(ours, cwd=tmp_path, terminals=terminals):
            pass
    (params,) = offered
    caps = params.get("clientCapabilities", {})
    assert caps.get("terminal", False) is terminals
    assert caps.get("fs", {}).get("readTextFile", False) is False


@pytest.mark.anyio
async def test_helpers_an_exited_command_left_behind_are_stopped_on_release(
    tmp_path: Path,
) -> None:
    async with bridged(tmp_path) as (agent, session):
        # The shell leads the group, prints its pid (the pgid) and exits; sleep stays.
        tid = await create(agent, "sleep 60 > /dev/null & echo $$")
        pgid = int(await first_line(session, tid))
        exited = await wait_exit(agent, tid)
        assert group_exists(pgid)
        await agent.call(v1m.TERMINAL_RELEASE, v1.ReleaseTerminalRequest(**ids(tid)))
        # The orphaned sleep's zombie belongs to whoever adopted it (a container's init
        # may never reap it), so "gone" here means no live member, as stop_group means it.
        assert not group_alive(pgid)
    assert exited.exit_code == 0
