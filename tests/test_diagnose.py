"""The wording of start-up failures (``acp2.diagnose``): hints, quoting, sanitizing, and
the scanner that finds the first stdout line that is not JSON."""

from __future__ import annotations

import pytest

from acp2.diagnose import (
    SCAN_LIMIT,
    StrayLineScanner,
    early_exit,
    quote_line,
    sanitize,
    start_failure,
)


def test_sanitize_removes_escape_sequences_and_shows_other_control_characters() -> None:
    text = "\x1b]0;title\x07\x1b[31mred\x1b[0m\x00\x9b\x7f\tend\r\nnext"
    assert sanitize(text) == "red^@<U+009B>^? end next"
    assert sanitize(text, newlines=True) == "red^@<U+009B>^? end\nnext"


def test_quote_line_cuts_long_lines_and_replaces_bad_utf8() -> None:
    assert quote_line(b"x" * 300) == repr("x" * 200 + "…")
    assert quote_line(b"caf\xc3\xa9 \xff\r\n") == repr("café \ufffd")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["my-agent", "--acp"], "`npx my-agent --acp` for npm, `uvx my-agent --acp` for PyPI"),
        (["@scope/agent"], "it looks like an npm package: try `npx @scope/agent`"),
        (["pkg@1.2.3"], "`npx pkg@1.2.3` for npm"),
        (["./agent.py"], "no such file: check the path"),
        (["my agent"], "(check the spelling, or give its full path)"),
    ],
)
def test_a_command_not_found_names_the_command_and_a_next_step(
    argv: list[str], expected: str
) -> None:
    message = start_failure(argv, FileNotFoundError(2, "No such file"))
    assert message.startswith(f"command not found: {argv[0]}")
    assert expected in message


def test_a_command_that_is_not_executable_says_how_to_fix_it() -> None:
    message = start_failure(["./agent.py"], PermissionError(13, "Permission denied"))
    assert message.startswith("cannot run ./agent.py: permission denied")
    assert "chmod +x ./agent.py" in message


def test_a_missing_working_directory_is_named_first(tmp_path: object) -> None:
    message = start_failure(["agent"], FileNotFoundError(2, "x"), "/no/such/dir")
    assert message == "the working directory does not exist: /no/such/dir (check --cwd)"


def test_an_early_exit_gives_status_signal_stderr_and_the_command() -> None:
    text = early_exit(["sh", "-c", "exit 3"], 3, "line 1\n\x1b[31mboom\x1b[0m\n")
    assert text.startswith("the agent exited with status 3 before answering initialize")
    assert "  line 1\n  boom\n" in text
    assert text.endswith("run the agent by itself: sh -c 'exit 3'")
    assert early_exit(["a"], -9, "").startswith("the agent was killed by SIGKILL")
    assert "(nothing on stderr)" in early_exit(["a"], 0, "")


def test_an_early_exit_after_a_stray_line_explains_stdout() -> None:
    text = early_exit(["a"], 0, "", "'hello'")
    assert "not JSON on stdout: 'hello'" in text
    assert "stdout must carry only ACP messages" in text


def test_the_scanner_finds_the_first_non_json_line_across_chunks() -> None:
    scanner = StrayLineScanner()
    assert scanner.feed(b'{"jsonrpc":"2.0",') is None
    assert scanner.feed(b'"id":1,"result":{}}\n\n  \nLoad') is None
    assert scanner.feed(b"ing model...\nsecond\n") == "'Loading model...'"
    assert scanner.feed(b"third\n") is None  # reported once
    assert scanner.found == "'Loading model...'"


@pytest.mark.parametrize(
    "line",
    [b"{'python': 'dict'}", b"[1, 2", b'{"a": NaN-ish}', b"\xff\xfe", b"null"],
)
def test_the_scanner_reports_lines_that_do_not_parse(line: bytes) -> None:
    assert StrayLineScanner().feed(line + b"\n") is not None


def test_the_scanner_keeps_at_most_its_limit_of_a_long_line() -> None:
    scanner = StrayLineScanner()
    huge = b'{"jsonrpc":"2.0","method":"x","params":"' + b"a" * (SCAN_LIMIT * 3)
    assert scanner.feed(huge) is None
    assert len(scanner._line) <= SCAN_LIMIT
    assert scanner.feed(b'"}\n') is None  # a long line that starts like a message
    assert scanner.feed(b"z" * (SCAN_LIMIT * 2) + b"\n") == repr("z" * 200 + "…")
