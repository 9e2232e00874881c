"""Reading input on a terminal with prompt_toolkit: history, completion, keys.

- history is kept per project (:func:`acp2.ui.history.history_path`);
- ``/`` offers the chat's commands and the agent's (:mod:`acp2.ui.commands`), ``@``
  the files of the session folder (:mod:`acp2.ui.mentions`);
- Enter sends; Esc-Enter / Alt-Enter insert a newline, and a bracketed paste keeps its
  newlines;
- Ctrl-C clears a non-empty line; on an empty one it asks to be pressed again within
  :data:`EXIT_WINDOW` seconds to exit; Ctrl-D on an empty line exits at once;
- Ctrl-T / Ctrl-O call the chat's thought / output toggles above the prompt.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from prompt_toolkit import PromptSession
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import AnyFormattedText
from prompt_toolkit.history import History
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from acp2 import sanitize
from acp2.ui import commands, mentions

__all__ = [
    "EXIT_WINDOW",
    "ChatCompleter",
    "ExitGuard",
    "chat_key_bindings",
    "make_prompt_session",
]

#: Seconds within which a second Ctrl-C on an empty line exits.
EXIT_WINDOW: Final = 3.0


@dataclass
class ExitGuard:
    """The first Ctrl-C on an empty line arms it; a second one within the window exits."""

    armed_at: float | None = None
    #: Set by the key binding when it exits on a second press (a SIGINT that arrives
    #: before the prompt took the terminal raises KeyboardInterrupt without it).
    confirmed: bool = False

    def press(self, now: float | None = None) -> bool:
        """Record a Ctrl-C on an empty line; True when it is the second one in time."""
        now = time.monotonic() if now is None else now
        if self.armed_at is not None and now - self.armed_at <= EXIT_WINDOW:
            self.armed_at = None
            return True
        self.armed_at = now
        return False

    def armed(self, now: float | None = None) -> bool:
        """True while a second Ctrl-C would exit."""
        now = time.monotonic() if now is None else now
        return self.armed_at is not None and now - self.armed_at <= EXIT_WINDOW

    def disarm(self) -> None:
        """Forget the first press."""
        self.armed_at = None


class ChatCompleter(Completer):
    """``/`` commands (read at each keypress, so an ``available_commands_update`` shows
    up at once) and ``@path`` file names under the session folder."""

    def __init__(
        self,
        agent_commands: Callable[[], Sequence[Any]],
        categories: Callable[[], Iterable[str]],
        cwd: Callable[[], str],
    ) -> None:
        self.agent_commands = agent_commands
        self.categories = categories
        self.cwd = cwd

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterable[Completion]:
        """Complete the command being typed, or the ``@path`` word under the cursor."""
        text = document.text_before_cursor
        if text.startswith("/") and not any(c.isspace() for c in text):
            found = commands.completions(text, self.agent_commands(), self.categories())
            for item in found:
                yield Completion(
                    item.text,
                    start_position=-len(text),
                    display=sanitize.line(item.shown),  # the agent's text
                    display_meta=sanitize.line(item.meta),
                )
            return
        word = text.split()[-1] if text and not text[-1].isspace() else ""
        if word.startswith("@"):
            for name, is_dir in mentions.path_completions(word[1:], self.cwd()):
                yield Completion(
                    f"@{name}" + ("/" if is_dir else " "),
                    start_position=-len(word),
                    display=sanitize.line(name + ("/" if is_dir else "")),  # workspace names
                )


def chat_key_bindings(
    guard: ExitGuard,
    toggles: dict[str, Callable[[], None]] | None = None,
    *,
    on_armed: Callable[[], None] | None = None,
) -> KeyBindings:
    """Ctrl-C (clear, or exit on a second press; ``on_armed`` runs above the prompt at
    the first), Esc-Enter (newline) and the ``toggles`` by key (e.g. ``{"c-t":
    toggle_thoughts}``), run above the prompt."""
    bindings = KeyBindings()

    @bindings.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        buffer = event.app.current_buffer
        if buffer.text:
            guard.disarm()
            buffer.reset()
        elif guard.press():
            guard.confirmed = True
            event.app.exit(exception=KeyboardInterrupt, style="class:aborting")
        elif on_armed is not None:
            run_in_terminal(on_armed)

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.app.current_buffer.insert_text("\n")

    for key, action in (toggles or {}).items():
        bindings.add(key)(_toggle_handler(action))
    return bindings


def _toggle_handler(action: Callable[[], None]) -> Callable[[KeyPressEvent], None]:
    def handler(event: KeyPressEvent) -> None:
        run_in_terminal(action)

    return handler


def make_prompt_session(
    completer: Completer,
    *,
    toolbar: Callable[[], AnyFormattedText],
    bindings: KeyBindings,
    history: History,
) -> PromptSession[str]:
    """The chat's prompt: history, completion, key bindings, status toolbar."""
    return PromptSession(
        history=history,
        completer=completer,
        complete_while_typing=True,
        auto_suggest=AutoSuggestFromHistory(),
        key_bindings=bindings,
        bottom_toolbar=toolbar,
        prompt_continuation="  ",
        reserve_space_for_menu=4,
    )
