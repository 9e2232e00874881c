"""The chat's own slash commands (acp2.ui.commands): parsing, completion, /help, the
resume command."""

from __future__ import annotations

import shlex

import pytest

from acp2.schema import AvailableCommand, TextCommandInput
from acp2.ui.commands import (
    BUILTINS,
    Parsed,
    completions,
    help_rows,
    parse_line,
    resume_command,
)

AGENT = [
    AvailableCommand(name="help", description="The agent's help"),
    AvailableCommand(name="deploy", description="Deploy", input=TextCommandInput(hint="env")),
]
NAMES = ["help", "deploy"]


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        ("/help", Parsed("builtin", name="help")),
        ("/resume  sess_1 ", Parsed("builtin", name="resume", arg="sess_1")),
        ("/model large", Parsed("builtin", name="model", arg="large")),
        ("//help", Parsed("prompt", text="/help")),
        ("//help me now", Parsed("prompt", text="/help me now")),
        ("/deploy prod", Parsed("prompt", text="/deploy prod")),
        ("/nonsense", Parsed("unknown", name="nonsense")),
        ("fix the /help page", Parsed("prompt", text="fix the /help page")),
        ("/", Parsed("prompt", text="/")),
        ("/usr/bin/env is missing", Parsed("prompt", text="/usr/bin/env is missing")),
    ],
)
def test_a_line_is_a_built_in_an_agent_command_a_prompt_or_unknown(
    line: str, parsed: Parsed
) -> None:
    assert parse_line(line.strip(), NAMES) == parsed


def test_a_built_in_never_reaches_the_agent_even_when_the_agent_has_that_name() -> None:
    assert parse_line("/help", NAMES).kind == "builtin"


def test_completion_lists_built_ins_then_agent_commands_with_shadowed_ones_doubled() -> None:
    found = completions("/", AGENT, {"model"})
    shown = [c.shown for c in found]
    assert shown[: len(BUILTINS) - 1] == [f"/{b.name}" for b in BUILTINS if b.name != "mode"]
    assert shown[-2:] == ["//help", "/deploy"]
    assert found[-2].meta == "(agent) The agent's help"
    assert found[-1].text == "/deploy "
    assert found[-1].meta == "Deploy [env]"


def test_model_and_mode_are_offered_only_when_the_agent_has_such_options() -> None:
    assert [c.shown for c in completions("/mo", AGENT, set())] == []
    assert [c.shown for c in completions("/mo", AGENT, {"mode"})] == ["/mode"]


def test_completion_of_a_double_slash_lists_only_the_shadowed_agent_commands() -> None:
    assert [c.shown for c in completions("//", AGENT, set())] == ["//help"]


def test_help_rows_mark_the_agents_commands() -> None:
    rows = help_rows(AGENT, set())
    assert ("/resume [ID]", "resume a session by id; without one, pick from the list") in rows
    assert rows[-2:] == [("//help", "(agent) The agent's help"), ("/deploy env", "(agent) Deploy")]


def test_malformed_agent_commands_are_left_out() -> None:
    bad = [
        AvailableCommand(name="two words", description="x"),
        AvailableCommand(name="", description=""),
    ]
    assert help_rows(bad, set())[-1][0] == "/quit"


def test_the_resume_command_is_shell_quoted_and_round_trips() -> None:
    command = resume_command("sess_1", ["my agent", "--flag=$HOME"], cwd="/tmp/a b")
    assert shlex.split(command) == [
        "acp2",
        "chat",
        "--resume",
        "sess_1",
        "--cwd",
        "/tmp/a b",
        "--",
        "my agent",
        "--flag=$HOME",
    ]
    assert resume_command("s", ["x"]) == "acp2 chat --resume s -- x"
