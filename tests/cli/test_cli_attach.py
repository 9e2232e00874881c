"""``acp2 chat --attach``: a second terminal watching (or steering) a live session of a
real ``acp2 serve --test-agent`` on 127.0.0.1. The session's owner is a library client in
the test; the attached chat is a real subprocess in transcript mode (piped input)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from attach_helpers import chat_process, free_port, serve_process
from cli_helpers import ACP2, isolated_env, run_acp2

from acp2.client import ClientConnection, ClientSession, PermissionRequest, connect_url
from acp2.ui.watching import OBSERVER_READ_ONLY
from helpers.processes import spawn_pty, terminal_env
from helpers.timeouts import PROCESS_TIMEOUT, TIMEOUT

pytestmark = pytest.mark.anyio


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path / "data")


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve_process(isolated_env(tmp_path_factory.mktemp("serve"))) as found:
        yield found


class Owner:
    """The client that made the session live; its permission requests wait until the
    test says how to answer (``answer``), and it records a withdrawn one."""

    def __init__(self) -> None:
        self.asked = anyio.Event()
        self.go = anyio.Event()
        self.withdrawn = anyio.Event()

    async def policy(self, request: PermissionRequest) -> object:
        self.asked.set()
        try:
            await self.go.wait()
        except anyio.get_cancelled_exc_class():
            self.withdrawn.set()
            raise
        return request.options[0]


@pytest.fixture
async def owner(url: str, tmp_path: Path) -> AsyncIterator[tuple[ClientSession, Owner]]:
    who = Owner()
    client: ClientConnection
    async with connect_url(url, permissions=who.policy) as client:  # type: ignore[arg-type]
        session = await client.new_session(str(tmp_path))
        with anyio.fail_after(TIMEOUT):
            assert await (await session.prompt("echo before attaching")).wait() == "end_turn"
        yield session, who


async def test_an_observer_sees_the_history_then_the_owners_turns_live_and_may_not_prompt(
    url: str, owner: tuple[ClientSession, Owner], env: dict[str, str], tmp_path: Path
) -> None:
    session, _ = owner
    async with chat_process(["--url", url, "--attach", session.id], env, tmp_path) as chat:
        await chat.expect("> echo before attaching")
        await chat.expect("--- attached as observer ---")
        await chat.send("echo from the observer")
        assert await chat.expect("observer:") == OBSERVER_READ_ONLY
        with anyio.fail_after(TIMEOUT):
            assert await (await session.prompt("echo live words")).wait() == "end_turn"
        await chat.expect("> echo live words")
        assert await chat.expect("live words") == "live words"
        assert await chat.expect("[stop:") == "[stop: end_turn]"
        await chat.close_input()
        assert await chat.wait() == 0
    assert "from the observer" not in session.state.agent_text()


async def test_a_controller_prompts_and_its_answer_to_a_permission_wins(
    url: str, owner: tuple[ClientSession, Owner], env: dict[str, str], tmp_path: Path
) -> None:
    session, who = owner
    args = ["--url", url, "--attach", session.id, "--role", "controller", "--permission", "ask"]
    async with chat_process(args, env, tmp_path) as chat:
        await chat.expect("--- attached as controller ---")
        await chat.send("echo steered")
        await chat.expect("> echo steered")
        assert await chat.expect("steered") == "steered"
        await chat.expect("[stop: end_turn]")
        work = await session.prompt("permission Shall we?")
        await chat.partial("choose [")
        with anyio.fail_after(TIMEOUT):
            await who.asked.wait()
        await chat.send("1")
        with anyio.fail_after(TIMEOUT):
            assert await work.wait() == "end_turn"
        await chat.expect("You chose: allow")
        with anyio.fail_after(TIMEOUT):  # the owner's request, withdrawn once answered
            await who.withdrawn.wait()
        await chat.close_input()
        assert await chat.wait() == 0
    assert "You chose: allow" in session.state.agent_text()


async def test_a_request_answered_elsewhere_closes_in_the_chat_with_a_line_saying_so(
    url: str, owner: tuple[ClientSession, Owner], env: dict[str, str], tmp_path: Path
) -> None:
    session, who = owner
    args = ["--url", url, "--attach", session.id, "--role", "controller", "--permission", "ask"]
    async with chat_process(args, env, tmp_path) as chat:
        await chat.expect("--- attached as controller ---")
        work = await session.prompt("permission Shall we?")
        await chat.partial("choose [")
        who.go.set()  # the owner answers first
        with anyio.fail_after(TIMEOUT):
            assert await work.wait() == "end_turn"
        await chat.expect("-> answered elsewhere")
        if "[stop: end_turn]" not in chat.lines:  # the withdrawal may be printed after it
            await chat.expect("[stop: end_turn]")
        await chat.send("echo still here")  # the chat goes on, its input not eaten
        await chat.expect("> echo still here")
        assert await chat.expect("still here") == "still here"
        await chat.close_input()
        assert await chat.wait() == 0


async def test_attach_without_an_id_lists_the_sessions_and_attaches_to_the_one_picked(
    url: str, owner: tuple[ClientSession, Owner], env: dict[str, str], tmp_path: Path
) -> None:
    session, _ = owner
    async with chat_process(["--url", url, "--attach"], env, tmp_path) as chat:
        listed = await chat.expect(session.id)
        number = listed.split()[0]
        await chat.partial("attach to which?")
        await chat.send(number)
        await chat.expect("--- attached as observer ---")
        await chat.close_input()
        assert await chat.wait() == 0


async def test_the_chat_says_the_session_ended_when_the_server_restarted_without_it(
    env: dict[str, str], tmp_path: Path
) -> None:
    port = free_port()
    with contextlib.ExitStack() as first:
        url = first.enter_context(serve_process(env, port))
        async with connect_url(url) as client:
            session = await client.new_session(str(tmp_path))
            async with chat_process(["--url", url, "--attach", session.id], env, tmp_path) as chat:
                await chat.expect("--- attached as observer ---")
                first.close()  # the server stops, and its sessions with it (test agent: memory)
                with serve_process(env, port):
                    # The chat's link retries with backoff (at most 5 s apart) meanwhile.
                    ended = await chat.expect("the session ended", 3 * PROCESS_TIMEOUT)
                    assert "could not be resumed" in ended
                    assert await chat.wait() == 0


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--attach", "sess_1", "--", "acp2", "test-agent"], "--attach needs --url"),
        (["--url", "ws://127.0.0.1:9/acp", "--attach", "s", "--resume", "s"], "not both"),
        (["--url", "ws://127.0.0.1:9/acp", "--role", "controller"], "--role needs --attach"),
    ],
)
def test_attach_options_that_do_not_fit_together_are_a_usage_error(
    args: list[str], problem: str, env: dict[str, str], tmp_path: Path
) -> None:
    done = run_acp2("chat", *args, stdin="", env=env, cwd=tmp_path)
    assert done.returncode == 2
    assert problem in done.stderr


# -- on a terminal -------------------------------------------------------------------------


@pytest.fixture
def pty_env(tmp_path: Path) -> dict[str, str]:
    pytest.importorskip("pexpect")
    return terminal_env(tmp_path / "data")


def spawn_logged(args: list[str], env: dict[str, str], cwd: Path) -> Any:
    """``acp2 chat ARGS`` in an 80x24 pseudo-terminal, what it draws logged to pty.log."""
    child = spawn_pty([*ACP2, "chat", *args], env=env, cwd=cwd)
    child.logfile_read = open(cwd / "pty.log", "w")  # noqa: SIM115
    return child


async def on_screen(child: Any, pattern: str) -> None:
    """Wait (in a thread: pexpect blocks) until ``pattern`` was drawn."""
    await anyio.to_thread.run_sync(child.expect, pattern)


async def both_on_screen(child: Any, *patterns: str) -> None:
    """Wait until each of ``patterns`` was drawn, in any order."""
    left = list(patterns)
    while left:
        found = await anyio.to_thread.run_sync(child.expect, left)
        del left[found]


async def leave(child: Any) -> int:
    """Ctrl-D at an empty prompt; the exit status."""
    import pexpect

    child.sendcontrol("d")
    await on_screen(child, pexpect.EOF)
    child.close()
    return int(child.exitstatus)


async def test_on_a_terminal_an_observer_sees_turns_keeps_its_typing_may_not_prompt_or_cancel(
    url: str, owner: tuple[ClientSession, Owner], pty_env: dict[str, str], tmp_path: Path
) -> None:
    session, _ = owner
    child = spawn_logged(["--url", url, "--attach", session.id], pty_env, tmp_path)
    try:
        await on_screen(child, "attached as observer")
        await on_screen(child, "❯")
        child.sendline("echo mine")
        await on_screen(child, "observer: read-only")
        await on_screen(child, "❯")
        child.send("half")  # typed, not sent, when the owner's turn starts
        with anyio.fail_after(TIMEOUT):
            assert await (await session.prompt("echo live words")).wait() == "end_turn"
        await on_screen(child, "echo live words")  # the owner's prompt, then its reply
        await on_screen(child, "live words")
        await on_screen(child, "✓ end_turn")
        await on_screen(child, "half")  # given back to the input line
        child.send("\x7f" * 4)
        waiting = await session.prompt("wait")
        await on_screen(child, "Waiting until cancelled")
        await on_screen(child, r" · [1-9][0-9]*\.[0-9]s")  # redrawn: the chat handles ctrl-c
        child.sendcontrol("c")
        await on_screen(child, "observer: read-only, it cannot cancel")
        with anyio.fail_after(TIMEOUT):
            await session.cancel()  # the owner can
            assert await waiting.wait() == "cancelled"
        await on_screen(child, "cancelled")
        await on_screen(child, "❯")
        assert await leave(child) == 0
    finally:
        if child.isalive():
            child.terminate(force=True)


async def test_on_a_terminal_a_question_answered_elsewhere_closes_with_a_line_saying_so(
    url: str, owner: tuple[ClientSession, Owner], pty_env: dict[str, str], tmp_path: Path
) -> None:
    session, who = owner
    args = ["--url", url, "--attach", session.id, "--role", "controller"]
    child = spawn_logged(args, pty_env, tmp_path)
    try:
        await on_screen(child, "attached as controller")
        await on_screen(child, "❯")
        work = await session.prompt("permission Shall we?")
        await on_screen(child, "Shall we")
        with anyio.fail_after(TIMEOUT):
            await who.asked.wait()
        who.go.set()
        await both_on_screen(child, "answered elsewhere", "✓ end_turn")  # in either order
        with anyio.fail_after(TIMEOUT):
            assert await work.wait() == "end_turn"
        await on_screen(child, "❯")
        assert await leave(child) == 0
    finally:
        if child.isalive():
            child.terminate(force=True)


async def test_on_a_terminal_an_observers_screen_says_it_only_watches_during_a_turn(
    url: str, owner: tuple[ClientSession, Owner], pty_env: dict[str, str], tmp_path: Path
) -> None:
    """No "waiting for you · ctrl-c to cancel", and a prompt typed during the owner's
    turn is refused at once instead of showing as queued."""
    session, who = owner
    child = spawn_logged(["--url", url, "--attach", session.id], pty_env, tmp_path)
    try:
        await on_screen(child, "attached as observer")
        await on_screen(child, "❯")
        work = await session.prompt("permission Shall we?")
        with anyio.fail_after(TIMEOUT):
            await who.asked.wait()
        await on_screen(child, "waiting for a controller")
        await on_screen(child, "watching, read-only")
        child.send("typed\r")
        await on_screen(child, "observer: read-only")  # at once, the turn still running
        who.go.set()
        with anyio.fail_after(TIMEOUT):
            assert await work.wait() == "end_turn"
        await on_screen(child, "✓ end_turn")
        await on_screen(child, "❯")
        assert await leave(child) == 0
    finally:
        if child.isalive():
            child.terminate(force=True)
    drawn = (tmp_path / "pty.log").read_text()
    assert "queued" not in drawn
    assert "waiting for you" not in drawn
    assert "ctrl-c to cancel" not in drawn


async def test_the_owners_chat_also_ends_cleanly_when_the_server_restarted_without_it(
    env: dict[str, str], tmp_path: Path
) -> None:
    """As for an attached chat (docs/remote.md): 'the session ended', status 0, not 3."""
    port = free_port()
    with contextlib.ExitStack() as first:
        url = first.enter_context(serve_process(env, port))
        async with chat_process(["--url", url], env, tmp_path) as chat:
            await chat.send("echo before the restart")
            await chat.expect("[stop: end_turn]")
            first.close()  # the server stops, and its sessions with it (test agent: memory)
            with serve_process(env, port):
                ended = await chat.expect("the session ended", 3 * PROCESS_TIMEOUT)
                assert "could not be resumed" in ended
                assert await chat.wait() == 0


async def test_on_a_terminal_a_dropped_link_shows_reconnecting_and_a_lost_session_ends_cleanly(
    env: dict[str, str], pty_env: dict[str, str], tmp_path: Path
) -> None:
    """While the server is away the status line says so, instead of 'sending… 45s'; the
    server back without the session ends the owner's chat mid-turn with status 0."""
    import pexpect

    port = free_port()
    with contextlib.ExitStack() as first:
        url = first.enter_context(serve_process(env, port))
        child = spawn_logged(["--url", url], pty_env, tmp_path)
        try:
            await on_screen(child, "❯")
            child.sendline("wait")
            await on_screen(child, "Waiting until cancelled")
            first.close()  # the server goes away mid-turn
            await on_screen(child, r"reconnecting · attempt [0-9]+")
            with serve_process(env, port):  # back, without the session (test agent: memory)
                await on_screen(child, "the session ended")
                # The owner's chat ends as an attached one does: status 0, not 3.
                await on_screen(child, pexpect.EOF)
                child.close()
                assert child.exitstatus == 0
        finally:
            if child.isalive():
                child.terminate(force=True)


async def test_the_owners_transcript_chat_losing_its_session_mid_turn_ends_cleanly(
    env: dict[str, str], tmp_path: Path
) -> None:
    port = free_port()
    with contextlib.ExitStack() as first:
        url = first.enter_context(serve_process(env, port))
        async with chat_process(["--url", url], env, tmp_path) as chat:
            await chat.send("wait")
            await chat.expect("> wait")  # the agent took the prompt: the turn runs
            first.close()  # the server stops mid-turn, its sessions with it
            with serve_process(env, port):
                await chat.expect("the session ended", 3 * PROCESS_TIMEOUT)
                assert await chat.wait() == 0
