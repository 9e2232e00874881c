"""Peer text on the rich and the plain renderers: never markup, never an escape sequence;
links show their target; terminal output keeps only its colours; a diff already seen in a
permission prompt is summarized."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from ui_helpers import diff_content, plan, render, say, state_from, terminal_output, tool

from acp2.client.describe import Seen
from acp2.state import SessionState
from acp2.ui import plain
from acp2.ui.blocks import View, entry_block

EVIL = "\x1b]0;T\x07\x1b]52;c;eA==\x07\x1b[2J\x9b1A\u202e"
FORBIDDEN = ("\x1b", "\x07", "\x9b", "\u202e")


def raw_output(state: SessionState, *, color: bool = False) -> str:
    """Every timeline entry printed on a terminal console; the bytes as written."""
    out = io.StringIO()
    console = Console(
        file=out, width=80, force_terminal=True, color_system="standard" if color else None
    )
    for entry in state.timeline:
        block = entry_block(entry, state, View())
        if block is not None:
            console.print(block)
    return out.getvalue()


def hostile_state(text: str) -> SessionState:
    return state_from(
        say("msg" + text),
        say("thought" + text, "t_1", kind="thought"),
        plan(("step" + text, "pending"), ("done" + text, text or "x")),
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "cmd" + text},
        tool(
            "call_1",
            title="title" + text,
            kind="execute" + text,
            status=text or "pending",
            rawInput={"command": "raw" + text},
            content=[
                {"type": "terminal", "terminalId": "t1"},
                {"type": "content", "content": {"type": "text", "text": "out" + text}},
                diff_content("@@ -1 +1 @@\n-a" + text + "\n+b\n"),
            ],
        ),
        terminal_output("t1", ("term" + text + "\n").encode()),
    )


def test_no_agent_escape_reaches_the_rich_or_the_plain_output() -> None:
    state = hostile_state(EVIL)
    for shown in (raw_output(state), "\n".join(
        text for e in state.timeline if (text := plain.entry_text(e, state)) is not None
    )):  # fmt: skip
        assert not any(char in shown for char in FORBIDDEN)
        assert "msg" in shown
        assert "term" in shown


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from([*"ab[]/;\n\r\t ", *FORBIDDEN, "\x90", "\x9d"])))
def test_random_hostile_text_never_reaches_the_terminal(text: str) -> None:
    state = hostile_state(text)
    assert not any(char in raw_output(state) for char in FORBIDDEN)


def test_terminal_colours_survive_but_nothing_else_of_the_agents() -> None:
    state = state_from(
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "ls"},
        tool("c", title="ls", content=[{"type": "terminal", "terminalId": "t1"}]),
        terminal_output("t1", b"\x1b[31mred\x1b[0m\x1b]0;T\x07\x1b[2J\n"),
    )
    shown = raw_output(state, color=True)
    assert "\x1b[31m" in shown
    assert "\x1b]" not in shown
    assert "\x1b[2J" not in shown


def test_rich_markup_in_agent_text_is_printed_literally() -> None:
    state = state_from(tool("c", title="[bold red]Danger[/] [link=https://x]y[/link]"))
    assert "[bold red]Danger[/] [link=https://x]y[/link]" in render(
        entry_block(state.timeline[0], state, View())
    )


def test_a_markdown_link_shows_its_target_next_to_its_text() -> None:
    state = state_from(say("see [https://github.com/a](https://evil.example/x)"))
    out = raw_output(state)
    assert "https://evil.example/x" in out
    assert "\x1b]8;" not in raw_output(state, color=True)


def test_a_diff_shown_in_a_permission_prompt_is_summarized_afterwards() -> None:
    state = state_from(tool("c", title="Edit a.py", content=[diff_content()]))
    seen = Seen(root="/w", diffs={"c"})
    call = state.timeline[0]
    out = render(entry_block(call, state, View(seen=seen)))
    assert "a.py +1 \u22121" in out
    assert "+new = 2" not in out
    text = plain.entry_text(call, state, seen=seen)
    assert text is not None
    assert "    a.py +1 \u22121" in text.splitlines()


def test_diff_headers_are_relative_to_the_root_in_both_renderers() -> None:
    state = state_from(tool("c", title="Edit a.py", content=[diff_content()]))
    call = state.timeline[0]
    assert "--- a/a.py" in render(entry_block(call, state, View(seen=Seen(root="/w"))))
    text = plain.entry_text(call, state, seen=Seen(root="/w"))
    assert text is not None
    assert "    +++ b/a.py" in text.splitlines()
