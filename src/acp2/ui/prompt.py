"""Reading input on a terminal with prompt_toolkit: history, ``/`` completion, keys.

- history is kept in ``chat_history`` under the acp2 data directory (``$ACP2_DATA_DIR``,
  else ``$XDG_DATA_HOME/acp2``, else ``~/.local/share/acp2``);
- typing ``/`` offers the agent's available commands, with their descriptions;
- Ctrl-C clears a non-empty line and exits on an empty one (Ctrl-D too); Ctrl-T calls
  the chat's thought toggle above the prompt.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import AnyFormattedText
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from acp2.ui import sanitize

__all__ = ["CommandCompleter", "chat_key_bindings", "history_path", "make_prompt_session"]


def history_path() -> Path:
    """The input history file of ``acp2 chat`` in the acp2 data directory."""
    base = os.environ.get("ACP2_DATA_DIR")
    if base:
        root = Path(base)
    else:
        xdg = os.environ.get("XDG_DATA_HOME")
        root = (Path(xdg) if xdg else Path.home() / ".local" / "share") / "acp2"
    return root / "chat_history"


def _open_history() -> History:
    """A file history, or an in-memory one when the data directory is not writable."""
    path = history_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
    except OSError:
        return InMemoryHistory()
    return FileHistory(str(path))


class CommandCompleter(Completer):
    """Completes ``/name`` from the agent's available commands (read at each keypress,
    so an ``available_commands_update`` shows up at once)."""

    def __init__(self, commands: Callable[[], Sequence[Any]]) -> None:
        self.commands = commands

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterable[Completion]:
        """Yield the commands whose name starts with what follows ``/`` (first word only)."""
        text = document.text_before_cursor
        if not text.startswith("/") or " " in text:
            return
        prefix = text[1:]
        for command in self.commands():
            name = getattr(command, "name", None)
            if isinstance(name, str) and name.startswith(prefix):
                hint = getattr(getattr(command, "input", None), "hint", None)
                meta = str(getattr(command, "description", ""))
                shown = f"{meta} [{hint}]" if isinstance(hint, str) else meta
                yield Completion(
                    f"/{name}" + (" " if isinstance(hint, str) else ""),
                    start_position=-len(text),
                    display=sanitize.line(f"/{name}"),  # the agent's text
                    display_meta=sanitize.line(shown),
                )


def chat_key_bindings(on_toggle_thoughts: Callable[[], None]) -> KeyBindings:
    """Ctrl-C (clear the line, or exit when it is empty) and Ctrl-T (toggle thoughts)."""
    bindings = KeyBindings()

    @bindings.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        buffer = event.app.current_buffer
        if buffer.text:
            buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    @bindings.add("c-t")
    def _toggle(event: KeyPressEvent) -> None:
        run_in_terminal(on_toggle_thoughts)

    return bindings


def make_prompt_session(
    commands: Callable[[], Sequence[Any]],
    *,
    toolbar: Callable[[], AnyFormattedText],
    on_toggle_thoughts: Callable[[], None],
    history: History | None = None,
) -> PromptSession[str]:
    """The chat's prompt: file history, ``/`` completion, key bindings, status toolbar."""
    return PromptSession(
        history=history if history is not None else _open_history(),
        completer=CommandCompleter(commands),
        complete_while_typing=True,
        auto_suggest=AutoSuggestFromHistory(),
        key_bindings=chat_key_bindings(on_toggle_thoughts),
        bottom_toolbar=toolbar,
        reserve_space_for_menu=4,
    )
