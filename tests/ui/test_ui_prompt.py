"""Terminal input pieces (acp2.ui.prompt): completion, keys, history location."""

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
from acp2.ui.prompt import CommandCompleter, history_path, make_prompt_session

COMMANDS = [
    AvailableCommand(
        name="echo", description="Echo the input", input=TextCommandInput(hint="text")
    ),
    AvailableCommand(name="explain", description="Explain code"),
    AvailableCommand(name="test", description="Run the tests"),
]


def completions(text: str) -> list[tuple[str, str]]:
    completer = CommandCompleter(lambda: COMMANDS)
    found = completer.get_completions(Document(text), CompleteEvent(text_inserted=True))
    return [(c.text, c.display_meta_text) for c in found]


def test_slash_offers_every_agent_command_with_its_description() -> None:
    assert completions("/") == [
        ("/echo ", "Echo the input [text]"),
        ("/explain", "Explain code"),
        ("/test", "Run the tests"),
    ]


def test_completion_narrows_by_prefix() -> None:
    assert [text for text, _ in completions("/ex")] == ["/explain"]


@pytest.mark.parametrize("text", ["echo", "hello /ec", "/echo hello", ""])
def test_no_completion_outside_a_leading_command_name(text: str) -> None:
    assert completions(text) == []


def test_the_commands_are_read_at_each_keypress() -> None:
    """An available_commands_update changes the list while the prompt is open."""
    current: list[AvailableCommand] = []
    completer = CommandCompleter(lambda: current)
    event = CompleteEvent(text_inserted=True)
    assert list(completer.get_completions(Document("/"), event)) == []
    current.append(COMMANDS[2])
    assert [c.text for c in completer.get_completions(Document("/"), event)] == ["/test"]


def test_history_lives_in_the_acp2_data_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ACP2_DATA_DIR", str(tmp_path / "data"))
    assert history_path() == tmp_path / "data" / "chat_history"
    monkeypatch.delenv("ACP2_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert history_path() == tmp_path / "xdg" / "acp2" / "chat_history"


@pytest.fixture
def keyboard() -> Iterator[PipeInput]:
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        yield pipe


def _session(toggled: list[bool] | None = None) -> PromptSession[str]:
    return make_prompt_session(
        lambda: COMMANDS,
        toolbar=lambda: "status",
        on_toggle_thoughts=lambda: (toggled if toggled is not None else []).append(True),
        history=InMemoryHistory(),
    )


@pytest.mark.anyio
async def test_ctrl_c_clears_a_typed_line(keyboard: PipeInput) -> None:
    session = _session()
    keyboard.send_text("draft\x03hello\r")
    assert await session.prompt_async("> ") == "hello"


@pytest.mark.anyio
async def test_ctrl_c_on_an_empty_line_and_ctrl_d_quit(keyboard: PipeInput) -> None:
    session = _session()
    keyboard.send_text("\x03")
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
