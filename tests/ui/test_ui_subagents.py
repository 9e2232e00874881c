"""The chat's folded view of child sessions (acp2.ui.subagents): a child a tool call
references (Preview ``session`` content) is drawn inside that call, any other one gets a
line when it appears and one each time it goes idle; the agent's text sanitized."""

from __future__ import annotations

from types import SimpleNamespace

from ui_helpers import feed, render, tool

from acp2.client.describe import Seen
from acp2.schema import SessionReference, SubagentState, SubagentUpdate
from acp2.state import SessionState, reduce
from acp2.ui.blocks import View, tool_call_block
from acp2.ui.plain import tool_call_text


def session_with(*updates: SubagentUpdate) -> SimpleNamespace:
    state = SessionState(session_id="s")
    for update in updates:
        reduce(state, update)
    return SimpleNamespace(state=state, children={})


def test_a_child_is_announced_once_and_each_idle_is_reported_once() -> None:
    from acp2.ui.subagents import SubagentTracker

    tracker = SubagentTracker()
    session = session_with(SubagentUpdate(session_id="c", title="Re\x1b[2Jsearcher"))
    (started,) = tracker.take(session)
    assert started.startswith("↳ Re")
    assert "started" in started
    assert "\x1b" not in started
    assert tracker.take(session) == []
    reduce(session.state, SubagentUpdate(session_id="c", state=SubagentState(state="running")))
    assert tracker.take(session) == []
    idle = SubagentState(state="idle", stop_reason="end_turn")
    reduce(session.state, SubagentUpdate(session_id="c", state=idle))
    (done,) = tracker.take(session)
    assert done.endswith(": end_turn")
    assert tracker.take(session) == []


def test_a_child_without_a_title_is_named_by_its_id() -> None:
    from acp2.ui.subagents import SubagentTracker

    (line,) = SubagentTracker().take(session_with(SubagentUpdate(session_id="c9")))
    assert line == "↳ c9 started"


def delegated(*child_updates: SubagentUpdate) -> SimpleNamespace:
    """A session whose tool call ``t1`` references its child ``c``, with ``child_updates``
    reduced and a child session that said "Found three pages.\nMore." """
    session = session_with(
        SubagentUpdate(session_id="c", title="Researcher", description="reads"),
        *child_updates,
    )
    feed(session.state, tool("t1", title="Ask the researcher", status="in_progress"))
    chunk = {"type": "session", "sessionId": "c"}
    feed(
        session.state,
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t1", "content": chunk},
    )
    child = SessionState(session_id="c")
    feed(
        child,
        {
            "sessionUpdate": "agent_message",
            "messageId": "m",
            "content": [{"type": "text", "text": "Found three pages.\nMore."}],
        },
    )
    session.children = {"c": SimpleNamespace(state=child)}
    return session


def test_a_child_referenced_by_a_tool_call_is_folded_under_it_not_printed_alone() -> None:
    from acp2.ui.subagents import SubagentTracker

    session = delegated(SubagentUpdate(session_id="c", state=SubagentState(state="running")))
    assert SubagentTracker().take(session) == []
    seen = Seen(children=session.children)
    shown = render(tool_call_block(session.state.tool_calls["t1"], session.state, View(seen=seen)))
    assert "Ask the researcher" in shown
    assert "↳ Researcher -- reads" in shown
    assert shown.index("Ask the researcher") < shown.index("↳ Researcher") < shown.index("running")


def test_a_folded_child_shows_its_stop_reason_and_latest_text_once_idle() -> None:
    from acp2.ui.subagents import folded_lines

    idle = SubagentState(state="idle", stop_reason="end_turn")
    session = delegated(SubagentUpdate(session_id="c", state=idle))
    item = SessionReference(session_id="c")
    assert folded_lines(item, session.state, session.children) == [
        "↳ Researcher -- reads",
        "  end_turn -- Found three pages.",
    ]
    text = tool_call_text(
        session.state.tool_calls["t1"], session.state, Seen(children=session.children)
    )
    assert text.splitlines()[1:] == [
        "    ↳ Researcher -- reads",
        "      end_turn -- Found three pages.",
    ]


def test_a_reference_to_a_session_that_is_no_child_is_named_by_its_id() -> None:
    from acp2.ui.subagents import folded_lines

    state = SessionState(session_id="s")
    assert folded_lines(SessionReference(session_id="s\x1b[2J"), state, {}) == ["↳ session s^[[2J"]


def _child(parent: SimpleNamespace, child_id: str, *, cancel: bool) -> SimpleNamespace:
    """A child of ``parent`` as the chat sees one (entry, state, may_cancel)."""
    state = SessionState(session_id=child_id)
    child = SimpleNamespace(
        id=child_id, state=state, may_cancel=cancel, entry=parent.state.subagents[child_id]
    )
    parent.children[child_id] = child
    return child


def test_subagents_are_listed_numbered_with_how_to_expand_and_cancel_each() -> None:
    from acp2.ui.subagents import listing, pick

    idle = SubagentState(state="idle", stop_reason="end_turn")
    session = session_with(
        SubagentUpdate(session_id="c1", title="Reader", state=SubagentState(state="running")),
        SubagentUpdate(session_id="c2", title="Wri\x1b]0;x\x07ter", state=idle),
    )
    _child(session, "c1", cancel=True)
    _child(session, "c2", cancel=False)
    first, second = listing(session)
    assert first == "  1 ↳ Reader  running  (/subagent 1, /cancel-subagent 1)"
    assert second.startswith("  2 ↳ Wri")
    assert second.endswith("end_turn  (/subagent 2)")
    assert "\x1b" not in second
    assert "\x07" not in second
    assert pick(session, "2", "subagent")[0] is session.children["c2"]
    assert pick(session, "3", "subagent") == (
        None,
        "usage: /subagent N, N from 1 to 2 (/subagents lists them)",
    )
    assert listing(session_with()) == ["this session has no subagents"]


def test_an_expanded_subagent_shows_its_messages_and_tool_calls_sanitized() -> None:
    from acp2.schema import AgentMessage, SessionMessage, TextContent, ToolCallUpdate
    from acp2.ui.subagents import expanded

    session = session_with(SubagentUpdate(session_id="c1", title="Reader"))
    child = _child(session, "c1", cancel=False)
    for update in (
        SessionMessage(
            message_id="m0",
            sender_session_id="s",
            recipient_session_id="c1",
            content=[TextContent(text="read the docs")],
        ),
        ToolCallUpdate(tool_call_id="t1", title="Read README", status="completed"),
        AgentMessage(message_id="m1", content=[TextContent(text="It says \x1b[31mhi")]),
    ):
        reduce(child.state, update)
    assert expanded(child) == [
        "↳ Reader  not reported",
        "  [message s → c1] read the docs",
        "  ⚙ Read README (completed)",
        "  It says hi",
    ]
