"""``acp2 serve`` off the happy path: a missing agent command and a port in use stop it
before it listens, with one clean line and exit status 2; a wildcard ``--host`` prints
the chat line to copy and says what 0.0.0.0 stands for."""

from __future__ import annotations

import socket
import subprocess
import sys

from acp2.cli.serve_cmd import _access_lines
from helpers import timeouts


def run_serve(*argv: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "acp2", "serve", *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeouts.PROCESS_TIMEOUT)


def test_a_missing_agent_command_exits_2_naming_it_before_listening() -> None:
    done = run_serve("--port", "0", "--", "acp2-no-such-agent-here", "--flag")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "acp2 serve: agent command not found: 'acp2-no-such-agent-here' "
        "(install it, put it on PATH, or give its full path after --)"
    ]
    assert "listening" not in done.stderr


def test_an_agent_path_that_is_not_executable_exits_2() -> None:
    done = run_serve("--port", "0", "--", "/nonexistent/dir/agent")
    assert done.returncode == 2
    assert "not found or not executable: '/nonexistent/dir/agent'" in done.stderr
    assert "listening" not in done.stderr


def test_a_port_in_use_exits_2_with_one_clean_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_serve("--test-agent", "--port", str(port))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"acp2 serve: cannot listen on 127.0.0.1:{port}: address already in use "
        "(choose another --port, or --port 0 for a free one)"
    ]


def test_a_wildcard_host_prints_the_chat_line_and_what_the_address_means() -> None:
    url = "http://0.0.0.0:8123/acp"
    lines = _access_lines(url, "tok", False, "0.0.0.0")
    assert f"connect with: acp2 chat --url {url} --token tok" in lines
    assert any("0.0.0.0 means every address of this machine" in line for line in lines)
    assert not any("means every address" in x for x in _access_lines(url, "t", False, "127.0.0.1"))
