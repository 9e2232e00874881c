"""What the interactive chat prints: settled entries, the stop line, the status toolbar,
the expand / collapse toggles and the resume hint (a mixin of
:class:`~acp2.ui.interactive.InteractiveChat`).

Long tool output and terminals are collapsed to their last :data:`COLLAPSED_LINES` lines
(``… 12 lines before · ctrl-o to expand``); Ctrl-O expands them (printing the last such
tool call again in full) or collapses them, the way Ctrl-T does for thoughts.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Final

from prompt_toolkit.formatted_text import AnyFormattedText
from rich.console import Console
from rich.text import Text

from acp2 import sanitize
from acp2.client import describe
from acp2.state import MessageState, ToolCallState
from acp2.ui import background, options
from acp2.ui.blocks import View, entry_block, notice_block
from acp2.ui.commands import no_resume_reason, resume_command
from acp2.ui.live import LiveRegion
from acp2.ui.prompt import ExitGuard
from acp2.ui.settle import NoticeTracker, Settler
from acp2.ui.style import elapsed_text, usage_text
from acp2.ui.subagents import SubagentTracker
from acp2.ui.tokens import turn_tokens_text

__all__ = ["COLLAPSED_LINES", "EXPANDED_LINES", "ChatView", "status_extras"]

#: Lines of tool output and terminals shown when collapsed.
COLLAPSED_LINES: Final = 8
#: Lines shown when expanded (everything, in practice).
EXPANDED_LINES: Final = 1_000_000
_COLLAPSED_HINT: Final = " · ctrl-o to expand"

_STOP_STYLES = {"end_turn": ("✓", "green"), "cancelled": ("⊘", "yellow"), "error": ("✗", "red")}


def collapsed_view(**kw: Any) -> View:
    """The chat's starting view: tool output collapsed, user messages left out."""
    return View(output_lines=COLLAPSED_LINES, more_hint=_COLLAPSED_HINT, show_user=False, **kw)


def status_extras(state: Any) -> list[str]:
    """The background work count, the model name and the session title, when known."""
    parts = []
    running = background.status_part(state)
    if running is not None:
        parts.append(running)
    model = options.find_select(state.config_options, "model")
    if model is not None:
        parts.append(sanitize.line(options.current_name(model)))
    if isinstance(state.title, str) and state.title.strip():
        parts.append(f"“{sanitize.line(' '.join(state.title.split()))}”")
    return parts


class ChatView:
    """Printing for the interactive chat (expects the attributes set in its ``__init__``)."""

    console: Console
    view: View
    session: Any
    settler: Settler
    notices: NoticeTracker
    subagents: SubagentTracker
    guard: ExitGuard
    agent_command: Sequence[str]
    region: LiveRegion | None

    def print_settled(
        self, *, final: bool = False, messages_done: bool = False, view: View | None = None
    ) -> None:
        """Print the entries that settled (all of them with ``final``) and new notices."""
        shown = view or self.view
        for text in self.subagents.take(self.session):  # children first: they ran inside
            self.console.print(Text(text, style="dim"))
        for entry in self.settler.take(final=final, messages_done=messages_done):
            block = entry_block(entry, self.session.state, shown)
            if block is not None:
                self.console.print(block)
        for notice in self.notices.take():
            self.console.print(notice_block(notice))

    def print_stop(self, stop: str | None, seconds: float) -> None:
        """``✓ end_turn · 1.2s · ctx 1.2k/200k (1%) · $0.01``."""
        glyph, style = _STOP_STYLES.get(stop or "", ("■", "yellow"))
        shown = sanitize.line(stop or "stopped")  # an open enum: any agent string
        line = Text.assemble((f"{glyph} {shown}", f"bold {style}"))
        message = describe.error_message(self.session.state.error)
        if message:
            line.append(f": {message}", style=style)
        state = self.session.state
        details = [elapsed_text(seconds), usage_text(state.usage), turn_tokens_text(state)]
        line.append("".join(f" · {d}" for d in details if d), style="dim")
        self.console.print(line)

    def toggle_thoughts(self) -> None:
        """Ctrl-T: show thoughts in full (printing the last one again) or collapsed."""
        expanded = not self.view.expand_thoughts
        self.set_view(replace(self.view, expand_thoughts=expanded))
        self.console.print(Text(f"thoughts {'expanded' if expanded else 'collapsed'}", style="dim"))
        thoughts = [
            e
            for e in self.settler.state.timeline
            if isinstance(e, MessageState) and e.kind == "thought"
        ]
        if expanded and thoughts:
            self._reprint(thoughts[-1])

    def toggle_output(self) -> None:
        """Ctrl-O: show tool output in full (printing the last tool call that had lines
        hidden again) or collapsed to its last lines."""
        expanded = self.view.output_lines == COLLAPSED_LINES
        lines = EXPANDED_LINES if expanded else COLLAPSED_LINES
        hint = "" if expanded else _COLLAPSED_HINT
        self.set_view(replace(self.view, output_lines=lines, more_hint=hint))
        self.console.print(
            Text(f"tool output {'expanded' if expanded else 'collapsed'}", style="dim")
        )
        state = self.settler.state
        calls = [e for e in state.timeline[: self.settler.index] if isinstance(e, ToolCallState)]
        long_calls = [c for c in calls if _output_lines(c, state) > COLLAPSED_LINES]
        if expanded and long_calls:
            self._reprint(long_calls[-1])

    def set_view(self, view: View) -> None:
        """Draw with ``view`` from now on, the running turn's live region too."""
        self.view = view
        if self.region is not None:
            self.region.view = replace(view, live=True)

    def _reprint(self, entry: Any) -> None:
        block = entry_block(entry, self.settler.state, self.view)
        if block is not None:
            self.console.print(block)

    def toolbar(self, width: int | None = None) -> AnyFormattedText:
        """The status bar below the prompt: state, usage, model, title, then the keys
        when they fit in ``width`` (default: the terminal's); while a second Ctrl-C
        would exit, that question comes first."""
        state = self.session.state
        parts = [sanitize.line(state.foreground.replace("_", " "))]
        if state.stop_reason:
            parts.append(sanitize.line(state.stop_reason))
        usage = usage_text(state.usage)
        parts += [usage] if usage else []
        tokens = turn_tokens_text(state)  # the last work's tokens (Preview idle usage)
        parts += [tokens] if tokens else []
        parts += [*self.link_parts(), *status_extras(state)]
        status = f" {' · '.join(parts)}"
        if self.guard.armed():
            return [("class:bottom-toolbar.exit", " press ctrl-c again to exit "), ("", status)]
        keys = " │ /help commands  @ files  ^D quit"
        columns = width or shutil.get_terminal_size().columns
        shown = status + keys if len(status) + len(keys) <= columns else status
        return [("class:bottom-toolbar", shown)]

    def link_parts(self) -> list[str]:
        """The remote link's state for the status line (``reconnecting · attempt 2 in
        1s``) while it is being re-established; else nothing."""
        status = getattr(self, "link_status", None)
        text = status.text() if status is not None else None
        return [text] if text else []

    def print_resume_hint(self) -> None:
        """How to come back to this session: the exact ``acp2 chat --resume`` command."""
        if self.session is None or not self.agent_command:
            return
        reason = no_resume_reason(self.session)
        if reason is not None:
            self.console.print(Text(reason, style="dim"))
            return
        cwd = self.session.cwd
        here = os.path.normpath(os.getcwd()) == os.path.normpath(cwd)
        command = resume_command(self.session.id, self.agent_command, cwd=None if here else cwd)
        # The session id is the agent's: shown with any control character named.
        line = Text.assemble(("resume this session with: ", "dim"), sanitize.line(command))
        self.console.print(line, soft_wrap=True)  # one line, so it copies whole


def _output_lines(call: ToolCallState, state: Any) -> int:
    count = 0
    for item in describe.content_items(call):
        term = state.terminals.get(getattr(item, "terminal_id", None) or "")
        text = term.text if term is not None else describe.block_text(item)
        count = max(count, len(text.splitlines()))
    return count
