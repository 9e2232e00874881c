"""One back-bridge terminal's pure parts: the bounded output buffer and the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

import acp2.compat.v1.schema as v1
from acp2.bridge.back_terminal_run import OutputBuffer, command_line


@pytest.mark.parametrize("char", ["é", "€", "🙂"], ids=["2-byte", "3-byte", "4-byte"])
@pytest.mark.parametrize("limit", [1, 5, 7, 10])
def test_the_buffer_keeps_at_most_the_limit_starting_at_a_character(char: str, limit: int) -> None:
    buffer = OutputBuffer(limit)
    for _ in range(20):
        buffer.add(char.encode())
    kept = buffer.text(final=True)
    assert buffer.truncated
    assert len(buffer.data) <= limit
    assert kept == char * (len(buffer.data) // len(char.encode()))


def test_the_buffer_under_its_limit_keeps_everything_untruncated() -> None:
    buffer = OutputBuffer(100)
    buffer.add(b"one\n")
    buffer.add(b"two\n")
    assert (buffer.text(final=False), buffer.truncated) == ("one\ntwo\n", False)


def test_half_a_character_is_held_back_until_the_command_ended() -> None:
    buffer = OutputBuffer(100)
    buffer.add("a€".encode()[:2])
    assert buffer.text(final=False) == "a"
    assert buffer.text(final=True) == "a\ufffd"


def _request(command: str, *args: str) -> v1.CreateTerminalRequest:
    return v1.CreateTerminalRequest(session_id="s", command=command, args=list(args))


def test_a_program_with_args_runs_directly_and_is_shown_quoted(tmp_path: Path) -> None:
    argv, shown = command_line(_request("echo", "two words"), str(tmp_path))
    assert argv == ["echo", "two words"]
    assert shown == "echo 'two words'"


@pytest.mark.parametrize("line", ["ls -la", "echo hi && echo there", "FOO=1 env", "cd ~"])
def test_a_shell_line_without_args_runs_with_the_shell(tmp_path: Path, line: str) -> None:
    assert command_line(_request(line), str(tmp_path)) == (["/bin/sh", "-c", line], line)


def test_a_bare_program_name_or_an_existing_file_runs_directly(tmp_path: Path) -> None:
    (tmp_path / "my tool").write_text("#!/bin/sh\n")
    assert command_line(_request("pytest"), str(tmp_path))[0] == ["pytest"]
    assert command_line(_request("my tool"), str(tmp_path))[0] == ["my tool"]
