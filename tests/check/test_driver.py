"""The probe driver: exact lines, bounded waits, automatic answers, reaped processes."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from acp2.check.driver import open_link
from acp2.check.frames import Frame
from acp2.check.spawn import AgentStartError, start_process
from acp2.transport.procgroup import group_alive, stop_group
from helpers.timeouts import PROCESS_TIMEOUT, TIMEOUT

pytestmark = pytest.mark.anyio


def script(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


async def test_every_line_is_recorded_exactly_including_garbage_and_a_last_partial_line() -> None:
    argv = script(r"""
        import sys
        sys.stdout.write('{"jsonrpc":"2.0","method":"a"}\nhello\n\n{"partial"')
    """)
    with anyio.fail_after(TIMEOUT):
        async with open_link(argv, label="t", wait_limit=5) as link:
            await link.settle(5)
            assert link.eof
    raws = [f.raw for f in link.frames]
    assert raws == [b'{"jsonrpc":"2.0","method":"a"}', b"hello", b"", b'{"partial"']
    assert [f.ok for f in link.frames] == [True, False, False, False]
    assert all(a.t <= b.t for a, b in zip(link.frames, link.frames[1:], strict=False))


async def test_a_wait_for_something_that_never_comes_returns_none_in_time() -> None:
    argv = script("import sys; sys.stdin.read()")
    async with open_link(argv, label="t", wait_limit=5) as link:
        with anyio.fail_after(TIMEOUT):
            assert await link.wait_for(lambda f: True, within=0.2) is None


async def test_waits_end_early_when_the_agent_exits() -> None:
    argv = script("import sys; sys.stderr.write('bye\\n'); sys.exit(3)")
    async with open_link(argv, label="t", wait_limit=30) as link:
        with anyio.fail_after(TIMEOUT):
            assert await link.response(1) is None
        assert await link.wait_exit(5) == 3
        assert "exit code 3" in link.exit_note()
        assert "bye" in link.exit_note()
        await link.send_raw(b"{}\n")  # writing to a dead agent is not an error


async def test_requests_from_the_agent_are_answered_automatically() -> None:
    argv = script(r"""
        import json, sys
        ask = {"sessionId": "s", "title": "May I?", "options": [
            {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
            {"optionId": "no", "name": "No", "kind": "reject_once"}]}
        for message in ({"jsonrpc": "2.0", "id": 7, "method": "fs/read_text_file"},
                        {"jsonrpc": "2.0", "id": 8, "method": "session/request_permission",
                         "params": ask}):
            print(json.dumps(message), flush=True)
        for _ in range(2):
            answer = json.loads(sys.stdin.readline())
            print(json.dumps({"jsonrpc": "2.0", "method": "_echo", "params": answer}), flush=True)
    """)
    async with open_link(argv, label="t", wait_limit=5) as link:
        echoed: list[Frame] = []
        for _ in range(2):
            since = echoed[-1].index + 1 if echoed else 0
            frame = await link.wait_for(lambda f: f.value.get("method") == "_echo", since=since)
            assert frame is not None
            echoed.append(frame)
    answers = {f.value["params"]["id"]: f.value["params"] for f in echoed}
    assert answers[7]["error"]["code"] == -32601
    assert answers[8]["result"] == {"outcome": {"outcome": "selected", "optionId": "no"}}


async def test_a_process_that_ignores_stdin_and_sigterm_is_killed_and_reaped() -> None:
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    code += "print('ready', flush=True); time.sleep(60)"
    process = await start_process(script(code))
    assert process.stdout is not None
    with anyio.fail_after(TIMEOUT):
        await process.stdout.receive()
        assert await stop_group(process, grace=0.1, term_grace=0.1) == "killed"
    assert process.returncode is not None
    assert process.returncode < 0
    await process.aclose()


async def test_closing_the_link_stops_a_helper_the_agent_left_in_its_group() -> None:
    helper_parent = Path(__file__).parents[1] / "support" / "helper_parent.py"
    argv = [sys.executable, str(helper_parent), "--helper-ignores-term"]
    with anyio.fail_after(PROCESS_TIMEOUT):
        async with open_link(argv, label="t", wait_limit=5) as link:
            assert await link.wait_for(lambda f: isinstance(f.value, int)) is not None
            pgid = link.process.pid
    assert link.returncode == 0
    assert not group_alive(pgid), "the helper outlived the link"


async def test_a_command_that_cannot_start_is_a_start_error() -> None:
    with pytest.raises(AgentStartError, match="command not found: /nonexistent/agent"):
        async with open_link(["/nonexistent/agent"], label="t", wait_limit=1):
            pass  # pragma: no cover


async def test_an_error_inside_the_link_block_propagates_unwrapped() -> None:
    argv = script("import sys; sys.stdin.read()")
    with pytest.raises(LookupError, match="probe gave up"):
        async with open_link(argv, label="t", wait_limit=5):
            raise LookupError("probe gave up")


async def test_a_link_speaks_v1_once_initialize_is_answered_in_v1_even_after_the_wait() -> None:
    # The answer comes after the probe stopped waiting: its frames are still v1 frames.
    argv = script(r"""
        import sys, time
        sys.stdin.readline()
        time.sleep(0.3)
        sys.stdout.write('{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}\n')
        sys.stdout.flush()
        sys.stdin.read()
    """)
    with anyio.fail_after(TIMEOUT):
        async with open_link(argv, label="t", wait_limit=5) as link:
            assert await link.call("initialize", {"protocolVersion": 2}) is not None
            assert link.version == 1
            late = await link.call("initialize", {"protocolVersion": 2}, id=2)
    assert late is None  # never answered
    assert link.version == 1


async def test_an_answer_in_v2_shape_or_to_another_request_leaves_the_link_on_v2() -> None:
    argv = script(r"""
        import sys
        for line in sys.stdin:
            if '"id":1' in line:
                v2 = '{"protocolVersion":1,"info":{}}'
                print('{"jsonrpc":"2.0","id":1,"result":' + v2 + '}', flush=True)
            else:
                print('{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":1}}', flush=True)
    """)
    with anyio.fail_after(TIMEOUT):
        async with open_link(argv, label="t", wait_limit=5) as link:
            assert await link.call("initialize", {"protocolVersion": 1}, id=1) is not None
            assert await link.call("session/new", {}, id=2) is not None
            assert link.version == 2
