"""Terminal input pieces (acp2.ui.prompt): completion, keys."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from prompt_toolkit import PromptSession
from prompt_toolkit.application import create_app_session
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from acp2.schema import AvailableCommand, TextCommandInput
from acp2.ui.prompt import ChatCompleter, ExitGuard, chat_key_bindings, make_prompt_session

COMMANDS = [
    AvailableCommand(
        name="echo", description="Echo the input", input=TextCommandInput(hint="text")
    ),
    AvailableCommand(name="explain", description="Explain code"),
    AvailableCommand(name="test", description="Run the tests"),
]


def completer(commands: list[AvailableCommand], cwd: str = "/") -> ChatCompleter:
    return ChatCompleter(lambda: commands, lambda: (), lambda: cwd)


def completions(text: str, cwd: str = "/") -> list[tuple[str, str]]:
    found = completer(COMMANDS, cwd).get_completions(
        Document(text), CompleteEvent(text_inserted=True)
    )
    return [(c.text, c.display_meta_text) for c in found]


def test_slash_offers_the_chat_commands_then_every_agent_command() -> None:
    found = completions("/")
    assert found[0] == ("/help", "list the commands and keys")
    assert found[-3:] == [
        ("/echo ", "Echo the input [text]"),
        ("/explain", "Explain code"),
        ("/test", "Run the tests"),
    ]


def test_completion_narrows_by_prefix() -> None:
    assert [text for text, _ in completions("/ex")] == ["/explain"]
    assert [text for text, _ in completions("/c")] == [
        "/clear",
        "/cancel",
        "/cancel-bg ",
        "/cancel-subagent ",
        "/cost",
    ]


@pytest.mark.parametrize("text", ["echo", "hello /ec", "/echo hello", ""])
def test_no_completion_outside_a_leading_command_name(text: str) -> None:
    assert completions(text) == []


def test_the_commands_are_read_at_each_keypress() -> None:
    """An available_commands_update changes the list while the prompt is open."""
    current: list[AvailableCommand] = []
    event = CompleteEvent(text_inserted=True)
    chat = completer(current)
    assert [c.text for c in chat.get_completions(Document("/te"), event)] == []
    current.append(COMMANDS[2])
    assert [c.text for c in chat.get_completions(Document("/te"), event)] == ["/test"]


def test_at_completes_the_files_of_the_session_folder(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("x")
    (tmp_path / "setup.cfg").write_text("x")
    assert [t for t, _ in completions("look at @s", str(tmp_path))] == ["@setup.cfg ", "@src/"]
    assert [t for t, _ in completions("@src/", str(tmp_path))] == ["@src/main.py "]


@pytest.fixture
def keyboard() -> Iterator[PipeInput]:
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        yield pipe


def _session(toggled: list[bool] | None = None) -> PromptSession[str]:
    def toggle() -> None:
        (toggled if toggled is not None else []).append(True)

    return make_prompt_session(
        completer(COMMANDS),
        toolbar=lambda: "status",
        bindings=chat_key_bindings(ExitGuard(), {"c-t": toggle}),
        history=InMemoryHistory(),
    )


@pytest.mark.anyio
async def test_ctrl_c_clears_a_typed_line(keyboard: PipeInput) -> None:
    session = _session()
    keyboard.send_text("draft\x03hello\r")
    assert await session.prompt_async("> ") == "hello"


@pytest.mark.anyio
async def test_ctrl_c_twice_on_an_empty_line_and_ctrl_d_quit(keyboard: PipeInput) -> None:
    session = _session()
    keyboard.send_text("\x03\x03")
    with pytest.raises(KeyboardInterrupt):
        await session.prompt_async("> ")
    keyboard.send_text("\x04")
    with pytest.raises(EOFError):
        await session.prompt_async("> ")


@pytest.mark.anyio
async def test_ctrl_t_toggles_thoughts(keyboard: PipeInput) -> None:
    toggled: list[bool] = []
    session = _session(toggled)
    keyboard.send_text("\x14ok\r")
    assert await session.prompt_async("> ") == "ok"
    assert toggled == [True]


@pytest.mark.anyio
async def test_up_arrow_recalls_earlier_prompts(keyboard: PipeInput) -> None:
    session = _session()
    keyboard.send_text("first prompt\r")
    await session.prompt_async("> ")
    keyboard.send_text("\x1b[A\r")
    assert await session.prompt_async("> ") == "first prompt"


@pytest.mark.anyio
async def test_one_ctrl_c_on_an_empty_line_only_asks_to_press_it_again(
    keyboard: PipeInput,
) -> None:
    session = _session()
    keyboard.send_text("\x03kept\r")
    assert await session.prompt_async("> ") == "kept"


@pytest.mark.anyio
async def test_escape_enter_inserts_a_newline_and_a_paste_keeps_its_newlines(
    keyboard: PipeInput,
) -> None:
    session = _session()
    keyboard.send_text("one\x1b\rtwo\r")
    assert await session.prompt_async("> ") == "one\ntwo"
    keyboard.send_text("\x1b[200~a\nb\x1b[201~\r")
    assert await session.prompt_async("> ") == "a\nb"


def test_the_exit_guard_forgets_a_first_press_after_its_window() -> None:
    guard = ExitGuard()
    assert not guard.press(now=100.0)
    assert guard.armed(now=101.0)
    assert guard.press(now=101.0)
    assert not guard.press(now=200.0)
    assert not guard.press(now=204.0)
    assert not guard.armed(now=210.0)
