"""The stdio transport against real subprocesses (TR-02 .. TR-06).

The agent in most tests is ``tests/support/echo_agent.py``: acp2's own Connection over
:func:`acp2.transport.stdio.serve_stdio`.
"""

from __future__ import annotations

import io
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from acp2.errors import ConnectionClosed
from acp2.rpc.connection import Connection
from acp2.transport.procgroup import group_alive
from acp2.transport.stdio import spawn_agent
from helpers import check_frame
from helpers.timeouts import PROCESS_TIMEOUT as TIMEOUT

pytestmark = pytest.mark.anyio

SUPPORT = Path(__file__).resolve().parents[1] / "support"
ECHO = [sys.executable, str(SUPPORT / "echo_agent.py")]
STUBBORN = [sys.executable, str(SUPPORT / "stubborn_agent.py")]
HELPER_PARENT = [sys.executable, str(SUPPORT / "helper_parent.py")]


def assert_reaped(pid: int) -> None:
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    assert not Path(f"/proc/{pid}").exists(), "the agent is still around (zombie?)"


class Checked:
    """A tap that checks every frame in both directions with the strict checker."""

    def __init__(self) -> None:
        self.frames: list[tuple[str, bytes]] = []

    def __call__(self, direction: str, frame: bytes) -> None:
        self.frames.append((direction, frame))
        check_frame(frame)


async def test_tr02_a_10_mib_message_round_trips_over_a_real_stdio_subprocess() -> None:
    text = "0123456789abcdef\n\u2028" * (10 * 1024 * 1024 // 18)
    with anyio.fail_after(TIMEOUT):
        async with spawn_agent(ECHO) as agent, Connection(agent) as conn:
            result = await conn.request("echo", {"text": text}, dict)
            assert result == {"text": text}
            assert await conn.request("echo", [1], list) == [1]
    assert agent.returncode == 0


async def test_tr05_agent_writing_10_mb_to_stderr_before_answering_does_not_block() -> None:
    with anyio.fail_after(TIMEOUT):
        async with spawn_agent([*ECHO, "--stderr-flood", "10000000"]) as agent:
            async with Connection(agent) as conn:
                assert await conn.request("echo", {"a": 1}, dict) == {"a": 1}
                assert await conn.request("stderr", {"bytes": 10_000_000}, int) == 10_000_000
                assert await conn.request("echo", {"a": 2}, dict) == {"a": 2}
            tail = agent.stderr_tail()
    assert tail.endswith("e" * 1000)
    assert len(tail) == 64 * 1024


@pytest.mark.parametrize("kind", ["callable", "logger", "text file", "binary file"])
async def test_tr05_stderr_is_forwarded_to_a_callback_logger_or_file(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    lines: list[str] = []
    text_file, binary_file = io.StringIO(), io.BytesIO()
    logger = logging.getLogger("test.agent.stderr")
    sink: Any = {
        "callable": lines.append,
        "logger": logger,
        "text file": text_file,
        "binary file": binary_file,
    }[kind]
    argv = [sys.executable, "-c", "import sys; sys.stderr.write('one\\ntwo\\nthree')"]
    with caplog.at_level(logging.INFO, logger="test.agent.stderr"), anyio.fail_after(TIMEOUT):
        async with spawn_agent(argv, stderr=sink) as agent:
            assert await agent.receive() == b""
    expected = {
        "callable": lambda: lines,
        "logger": lambda: [r.getMessage() for r in caplog.records if r.name == logger.name],
        "text file": lambda: text_file.getvalue().split("\n"),
        "binary file": lambda: binary_file.getvalue().decode().split("\n"),
    }[kind]()
    assert expected == ["one", "two", "three"]
    assert agent.stderr_tail() == "one\ntwo\nthree"


async def test_tr03_stray_prints_in_the_served_agent_never_reach_the_protocol_stream() -> None:
    tap = Checked()
    with anyio.fail_after(TIMEOUT):
        async with spawn_agent([*ECHO, "--print-first"]) as agent:
            async with Connection(agent, tap=tap) as conn:
                assert await conn.request("print", {}, str) == "printed"
                assert await conn.request("echo", {"after": "print"}, dict) == {"after": "print"}
            tail = agent.stderr_tail()
    assert [d for d, _ in tap.frames].count("in") == 2
    assert "stray output that must not reach the protocol stream" in tail
    assert "another stray print" in tail
    assert "raw write to fd 1" in tail


async def test_tr04_everything_written_to_the_agent_stdin_is_a_valid_message() -> None:
    tap = Checked()
    with anyio.fail_after(TIMEOUT):
        async with spawn_agent(ECHO) as agent, Connection(agent, tap=tap) as conn:
            for i in range(50):
                conn.send_notification_nowait("tick", {"i": i})
            assert await conn.request("count", {}, int) == 50
            with anyio.move_on_after(0.01):
                await conn.request("sleep", {"seconds": 5}, type(None))  # cancelled
            assert await conn.request("echo", {"x": "y"}, dict) == {"x": "y"}
    outgoing = [msgspec.json.decode(f) for d, f in tap.frames if d == "out"]
    assert {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}} in outgoing


async def test_tr06_closing_stdin_lets_the_agent_exit_cleanly() -> None:
    with anyio.fail_after(TIMEOUT):
        async with spawn_agent(ECHO, grace=5.0) as agent, Connection(agent) as conn:
            await conn.request("echo", {}, dict)
    # 0, not -SIGTERM: the agent exited on end of input, before any signal was sent.
    assert agent.returncode == 0, "the agent should exit on end of input, before any signal"
    assert_reaped(agent.pid)


@pytest.mark.parametrize(("extra", "returncode"), [([], -signal.SIGKILL), (["--term-ok"], -15)])
async def test_tr06_shutdown_escalates_through_sigterm_to_sigkill_and_reaps(
    extra: list[str], returncode: int
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with spawn_agent([*STUBBORN, *extra], grace=0.3) as agent:
            assert await agent.receive() == b"ready\n"
    assert agent.returncode == returncode
    assert_reaped(agent.pid)


async def test_tr06_a_helper_the_agent_left_in_its_group_is_gone_after_shutdown() -> None:
    with anyio.fail_after(TIMEOUT):
        async with spawn_agent([*HELPER_PARENT, "--helper-ignores-term"], grace=0.3) as agent:
            helper = int(await agent.receive())  # the helper is running, SIGTERM ignored
            assert os.getpgid(helper) == agent.pid
    assert agent.returncode == 0
    assert_reaped(agent.pid)
    assert not group_alive(agent.pid), "the helper outlived the shutdown"


async def test_peer_dying_mid_request_raises_connection_closed_quickly() -> None:
    with anyio.fail_after(TIMEOUT):
        async with spawn_agent(ECHO) as agent, Connection(agent) as conn:
            await conn.request("echo", {}, dict)
            async with anyio.create_task_group() as tg:

                async def kill_soon() -> None:
                    await anyio.wait_all_tasks_blocked()
                    os.kill(agent.pid, signal.SIGKILL)

                tg.start_soon(kill_soon)
                with anyio.fail_after(TIMEOUT), pytest.raises(ConnectionClosed):
                    await conn.request("sleep", {"seconds": 60}, type(None))
    assert agent.returncode == -signal.SIGKILL
    assert_reaped(agent.pid)


async def test_spawning_a_missing_program_raises_file_not_found() -> None:
    with pytest.raises(FileNotFoundError):
        async with spawn_agent(["/nonexistent/agent-binary"]):
            pass


async def test_cwd_and_env_are_passed_to_the_agent(tmp_path: Path) -> None:
    code = "import os; print(os.getcwd(), os.environ['ACP2_TEST'], flush=True)"
    env = {**os.environ, "ACP2_TEST": "from-env"}
    with anyio.fail_after(TIMEOUT):
        async with spawn_agent([sys.executable, "-c", code], cwd=tmp_path, env=env) as agent:
            out = b""
            while chunk := await agent.receive():
                out += chunk
    assert out.decode().split() == [str(tmp_path), "from-env"]


def test_tr03_serve_stdio_redirects_stray_output_inside_and_restores_it_after() -> None:
    result = subprocess.run(
        [sys.executable, str(SUPPORT / "serve_restore.py")],
        input=b"protocol input that stray reads must not see\n",
        capture_output=True,
        timeout=TIMEOUT,
        check=True,
    )
    assert result.stdout == b'{"jsonrpc":"2.0","method":"hello"}\nafter\n'
    assert b"stray print inside" in result.stderr
    assert b"stray fd write inside" in result.stderr
    assert b"stdin inside reads ''" in result.stderr


async def test_spawning_and_closing_an_agent_leaks_no_file_descriptors() -> None:
    before = set(os.listdir("/proc/self/fd"))
    with anyio.fail_after(TIMEOUT):
        for _ in range(3):
            async with spawn_agent(ECHO) as agent, Connection(agent) as conn:
                await conn.request("echo", {}, dict)
    assert set(os.listdir("/proc/self/fd")) <= before
