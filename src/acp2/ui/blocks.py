"""Timeline entries as rich renderables: messages, thoughts, tool calls, plans, notices,
and the permission request panel.

Pure functions of the reduced :class:`~acp2.state.SessionState`: they read it and build
renderables, nothing else, so they are tested by printing to a capture console. The same
functions draw the live region (``View.live``) and the settled log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.padding import Padding
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from acp2.client import PermissionRequest
from acp2.schema import Diff, PermissionOption, Terminal
from acp2.state import (
    CompactionState,
    Entry,
    MessageState,
    PlanState,
    SessionState,
    TerminalState,
    ToolCallState,
)
from acp2.ui import describe
from acp2.ui.style import kind_icon, plan_mark, status_glyph

__all__ = [
    "View",
    "entry_block",
    "message_block",
    "notice_block",
    "permission_block",
    "plan_block",
    "terminal_block",
    "thought_block",
    "tool_call_block",
]

#: Lines of a thought shown while it streams.
LIVE_THOUGHT_LINES = 4
#: Characters of a collapsed thought.
COLLAPSED_THOUGHT_CHARS = 68


@dataclass(frozen=True)
class View:
    """How to draw: ``live`` for the in-progress region, ``expand_thoughts`` to show
    thoughts in full once settled, ``output_lines`` of terminal and tool text kept,
    ``show_user`` False to leave out user messages (the prompt is already on screen),
    ``more_hint`` appended to the ``… N lines before`` line (the key that expands)."""

    live: bool = False
    expand_thoughts: bool = False
    output_lines: int = 10
    show_user: bool = True
    more_hint: str = ""


def entry_block(entry: Entry, state: SessionState, view: View) -> RenderableType | None:
    """The renderable of any timeline entry (None when there is nothing to show yet)."""
    if isinstance(entry, MessageState):
        return message_block(entry, view)
    if isinstance(entry, ToolCallState):
        return tool_call_block(entry, state, view)
    if isinstance(entry, PlanState):
        return plan_block(entry)
    return _compaction_block(entry)


def message_block(message: MessageState, view: View) -> RenderableType | None:
    """A user message (``❯ text``), agent text as markdown, or a thought."""
    text = message.text
    if not text.strip():
        return None
    if message.kind == "thought":
        return thought_block(message, view)
    if message.kind == "user":
        if not view.show_user:
            return None
        return Text.assemble(("❯ ", "bold cyan"), (text, "bold"))
    return Markdown(text, code_theme="ansi_dark")


def thought_block(message: MessageState, view: View) -> RenderableType:
    """A thought, dimmed: its last lines while live, one line when collapsed, else all."""
    text = message.text.strip()
    if view.live:
        hidden, lines = describe.tail(text, LIVE_THOUGHT_LINES)
        shown = ("… " if hidden else "") + "\n".join(lines)
        return Text.assemble(("✻ ", "magenta"), (shown, "dim italic"))
    if view.expand_thoughts:
        return Text.assemble(("✻ ", "magenta"), (text, "dim italic"))
    first = " ".join(text.split())
    if len(first) > COLLAPSED_THOUGHT_CHARS:
        first = first[: COLLAPSED_THOUGHT_CHARS - 1].rstrip() + "…"
    return Text.assemble(
        ("✻ ", "magenta"), (first, "dim italic"), no_wrap=True, overflow="ellipsis"
    )


def tool_call_block(call: ToolCallState, state: SessionState, view: View) -> RenderableType:
    """``✓ ✎ Edit file`` with its content below: text, highlighted diffs, terminals."""
    glyph, style = status_glyph(call.status)
    header = Text.assemble(
        (glyph, style),
        " ",
        (kind_icon(call.kind), "cyan"),
        " ",
        (describe.tool_title(call), "bold"),
    )
    if call.status in ("failed", "cancelled"):
        header.append(f"  {call.status}", style=style)
    parts: list[RenderableType] = [header]
    for item in describe.content_items(call):
        block = _content_block(
            item, state, view, call.status == "failed", describe.tool_title(call)
        )
        if block is not None:
            parts.append(Padding(block, (0, 0, 0, 2)))
    return Group(*parts)


def _lines(count: int) -> str:
    return f"{count} line" if count == 1 else f"{count} lines"


def _content_block(item: Any, state: SessionState, view: View, failed: bool, title: str) -> Any:
    if isinstance(item, Diff):
        return diff_block(item)
    if isinstance(item, Terminal):
        term = state.terminals.get(item.terminal_id) or TerminalState(item.terminal_id)
        return terminal_block(term, view, title=title)
    text = describe.block_text(item)
    if not text.strip():
        return None
    hidden, lines = describe.tail(text, view.output_lines)
    body = Text("\n".join(lines), style="red" if failed else "dim")
    more = Text(f"… {_lines(hidden)} before{view.more_hint}", style="dim")
    return Group(more, body) if hidden else body


def diff_block(diff: Diff) -> RenderableType:
    """A diff: its patch syntax-highlighted, else the list of changed paths."""
    patch = describe.diff_patch(diff)
    if patch is None:
        return Text("\n".join(describe.diff_changes(diff)), style="yellow")
    return Syntax(
        patch.rstrip("\n"),
        "diff",
        theme="ansi_dark",
        background_color="default",
        word_wrap=True,
    )


def terminal_block(term: TerminalState, view: View, *, title: str = "") -> RenderableType:
    """``$ command`` (unless it is the tool call's ``title``), the last lines of the
    output (ANSI colours kept), the exit status."""
    parts: list[RenderableType] = []
    if term.command and term.command != title:
        parts.append(Text.assemble(("$ ", "bold green"), (term.command, "bold")))
    hidden, lines = describe.tail(term.text, view.output_lines)
    if hidden:
        parts.append(Text(f"… {_lines(hidden)} before{view.more_hint}", style="dim"))
    if lines:
        output = Text.from_ansi("\n".join(lines))
        output.no_wrap, output.overflow = True, "ellipsis"
        parts.append(output)
    ended = describe.exit_text(term)
    if ended is not None:
        ok = ended == "exit 0"
        parts.append(Text(ended, style="green" if ok else "red"))
    return Group(*parts)


def plan_block(plan: PlanState) -> RenderableType:
    """The plan as a checklist (an unknown plan type as one line)."""
    entries = plan.entries
    if not entries:
        return Text("☰ plan (unsupported format)", style="dim")
    lines = [Text("☰ Plan", style="bold")]
    for entry in entries:
        mark, style = plan_mark(str(entry.status))
        text_style = "dim" if entry.status in ("completed", "cancelled") else ""
        lines.append(Text.assemble("  ", (mark, style), " ", (str(entry.content), text_style)))
    return Group(*lines)


def notice_block(notice: Any) -> RenderableType:
    """A notice: ``! title`` coloured by severity, then its description."""
    severity = str(getattr(notice, "severity", "info"))
    style = {"error": "red", "warning": "yellow"}.get(severity, "blue")
    text = Text.assemble(("! ", style), (str(notice.title), "bold"))
    description = getattr(notice, "description", None)
    if isinstance(description, str) and description:
        text.append("\n  " + description)
    return text


def _compaction_block(comp: CompactionState) -> RenderableType:
    summary = "".join(describe.block_text(block) for block in comp.summary).strip()
    text = Text.assemble(("⟲ ", "blue"), (f"context compacted ({comp.status})", "dim"))
    if comp.error:
        text.append(f": {comp.error}", style="red")
    elif summary:
        text.append(f": {summary}", style="dim italic")
    return text


def _option_style(option: PermissionOption) -> str:
    kind = str(option.kind)
    return "green" if kind.startswith("allow") else "red" if kind.startswith("reject") else ""


def permission_block(request: PermissionRequest) -> RenderableType:
    """The request as a panel: title, description, subject, numbered options."""
    parts: list[RenderableType] = [Text(request.title, style="bold")]
    if request.description:
        parts.append(Text(request.description))
    command = request.command
    if command is not None:
        parts.append(
            Text.assemble(
                ("$ ", "bold green"), (command.command, "bold"), (f"  in {command.cwd}", "dim")
            )
        )
    call = request.tool_call
    repeats_command = command is not None and call is not None and not call.content
    if call is not None and not repeats_command:
        parts.append(Padding(tool_call_block(call, request.session.state, View()), (1, 0, 0, 0)))
    options = Text()
    for number, option in enumerate(request.options, 1):
        options.append(f"\n {number} ", style="bold reverse")
        options.append(f" {option.name}", style=_option_style(option))
        options.append(f"  ({option.kind})", style="dim")
    parts.append(options)
    return Panel(
        Group(*parts), title="permission requested", title_align="left", border_style="yellow"
    )
