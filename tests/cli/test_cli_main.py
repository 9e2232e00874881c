"""``acp2`` itself: an unexpected error in any subcommand is one line and a hint to
re-run with ``--debug``; ``--debug`` (before or after the subcommand) shows the traceback."""

from __future__ import annotations

import argparse
import importlib
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import ACP2

from acp2.cli.main import COMMANDS, EXIT_INTERNAL, main
from helpers import timeouts


def _explode(args: argparse.Namespace) -> int:
    raise RuntimeError("boom \x1b[2J\nsecond line")


@pytest.fixture
def broken(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> str:
    """The subcommand named by the test's parameter, with a main() that raises."""
    command: str = request.param
    monkeypatch.setattr(importlib.import_module(COMMANDS[command][0]), "main", _explode)
    return command


ARGS = {
    "demo": [],
    "chat": ["--", "agent"],
    "run": ["hi", "--", "agent"],
    "agent": [],
    "test-agent": [],
    "check": ["--", "agent"],
    "bridge": ["--", "agent"],
    "serve": ["--test-agent"],
    "agents": [],
}


@pytest.mark.parametrize("broken", list(COMMANDS), indirect=True)
def test_an_unexpected_error_in_any_subcommand_is_one_line_with_a_debug_hint(
    broken: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([broken, *ARGS[broken]]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err.splitlines()[0] == f"acp2 {broken}: unexpected error: RuntimeError: boom "
    assert "re-run with --debug" in err
    assert "Traceback" not in err
    assert "\x1b" not in err


@pytest.mark.parametrize("broken", ["run", "check"], indirect=True)
@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_before_or_after_the_subcommand_lets_the_traceback_through(
    broken: str, where: str
) -> None:
    argv = [broken, "--debug", *ARGS[broken]] if where == "after" else ["--debug", broken]
    if where == "before":
        argv += ARGS[broken]
    with pytest.raises(RuntimeError, match="boom"):
        main(argv)


def test_debug_after_the_separator_belongs_to_the_agent_command() -> None:
    from acp2.cli.main import _take_debug

    assert _take_debug(["run", "hi", "--", "agent", "--debug"]) == (
        ["run", "hi", "--", "agent", "--debug"],
        False,
    )
    assert _take_debug(["run", "--debug", "hi", "--", "a"]) == (["run", "hi", "--", "a"], True)


def test_the_help_lists_the_debug_flag() -> None:
    done = subprocess.run(
        [*ACP2, "--help"], capture_output=True, text=True, timeout=timeouts.RUN_TIMEOUT
    )
    assert done.returncode == 0
    assert "--debug" in done.stdout


def test_client_commands_log_one_line_warnings_without_tracebacks() -> None:
    from acp2.cli.main import _OneLineFormatter

    try:
        raise ValueError("bad \x1b[2Jthing\nmore")
    except ValueError:
        record = logging.LogRecord(
            "acp2.rpc", logging.ERROR, __file__, 1, "agent: handler failed", (), sys.exc_info()
        )
    text = _OneLineFormatter().format(record)
    assert text == (
        "acp2: agent: handler failed (ValueError: bad thing; --debug shows the traceback)"
    )


def test_a_stray_line_is_logged_as_one_acp2_line(tmp_path: Path) -> None:
    """The rpc layer's warning about the bad line is one ``acp2:`` line, no traceback."""
    script = "import time; print('hello', flush=True); time.sleep(30)"
    argv = [*ACP2, "run", "hi", "--", sys.executable, "-c", script]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=timeouts.RUN_TIMEOUT, cwd=tmp_path
    )
    assert done.returncode == 3
    assert all(line.startswith(("acp2", "stdout must")) for line in done.stderr.splitlines())
