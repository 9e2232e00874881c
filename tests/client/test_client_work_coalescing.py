"""A Work's log is coalesced and bounded (issue 10, section 4): merged items reduce to the
same state as the updates one by one, and memory follows the state, not the update count.

These drive a real :class:`ClientSession` and :class:`Work` with decoded updates, the way
the connection's reader does (``session.receive``), and read the work the way its async
iterator does (``work._next``), so a consumption schedule can be interleaved exactly.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from acp2.client.core import ClientCore
from acp2.client.session import ClientSession
from acp2.client.work import _NOTHING, MAX_ENTRIES, Skipped, Work
from acp2.schema import AgentMessageChunk, TerminalOutputChunk, TextContent
from acp2.schema.codec import decode
from acp2.schema.updates import UpdateSessionNotification
from acp2.state import SessionState, reduce


def upd(update: dict[str, Any]) -> Any:
    if "meta" in update:
        update["_meta"] = update.pop("meta")
    params = {"sessionId": "s", "update": update}
    return decode(json.dumps(params).encode(), UpdateSessionNotification).update


def chunk(text: str, mid: str = "m1", kind: str = "agent_message_chunk", **extra: Any) -> Any:
    content = {"type": "text", "text": text, **extra.pop("block", {})}
    return upd({"sessionUpdate": kind, "messageId": mid, "content": content, **extra})


def tool(call: str = "c1", **fields: Any) -> Any:
    return upd({"sessionUpdate": "tool_call_update", "toolCallId": call, **fields})


def term(data: bytes | str, tid: str = "t1", **extra: Any) -> Any:
    raw = data if isinstance(data, str) else base64.b64encode(data).decode()
    return upd({"sessionUpdate": "terminal_output_chunk", "terminalId": tid, "data": raw, **extra})


IDLE = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}


def new_work() -> tuple[ClientSession, Work]:
    link: ClientCore[ClientSession] = ClientCore(None, None)  # type: ignore[arg-type]
    session = ClientSession(None, link, "s", "/tmp")  # type: ignore[arg-type]
    work = Work(session, session._wait_change)
    work.accepted = True
    session._works.append(work)
    return session, work


def drain(work: Work, cursor: list[int]) -> list[Any]:
    items = []
    while (item := work._next(cursor)) is not _NOTHING:
        items.append(item)
    return items


def snapshot(state: SessionState) -> Any:
    messages = {key: (m.text, m.meta) for key, m in state.messages.items()}
    terminals = {key: bytes(t.output) for key, t in state.terminals.items()}
    return messages, dict(state.tool_calls), terminals, state.foreground


def replayed(items: list[Any]) -> SessionState:
    state = SessionState()
    for item in items:
        if not isinstance(item, Skipped):
            reduce(state, item)
    return state


def test_a_late_iterator_gets_one_merged_chunk_and_an_early_one_the_agents_objects() -> None:
    session, work = new_work()
    early = [0, 0]
    first, second, third = chunk("a"), chunk("b"), chunk("c")
    session.receive(first, b"")
    assert drain(work, early) == [first]
    session.receive(second, b"")
    session.receive(third, b"")
    assert [u.content.text for u in drain(work, early)] == ["bc"]
    session.receive(chunk("d"), b"")
    late = drain(work, [0, 0])
    assert [type(u) for u in late] == [AgentMessageChunk]
    assert late[0].content.text == "abcd"
    assert late[0].message_id == "m1"
    assert len(work._items) == 1


def test_chunks_with_meta_or_annotations_or_of_another_message_are_not_merged() -> None:
    session, work = new_work()
    updates = [
        chunk("a"),
        chunk("b", meta={"k": 1}),
        chunk("c"),
        chunk("d", block={"annotations": {"priority": 1}}),
        chunk("e", mid="m2"),
        chunk("f", kind="agent_thought_chunk", mid="m2"),
    ]
    for update in updates:
        session.receive(update, b"")
    assert drain(work, [0, 0]) == updates


def test_tool_call_patches_merge_until_an_iterator_takes_them_but_never_a_status() -> None:
    session, work = new_work()
    session.receive(tool(title="t", status="pending", meta={"a": 1, "b": 2}), b"")
    session.receive(tool(title="t2", meta={"b": None, "c": 3}), b"")
    session.receive(tool(content=None), b"")
    session.receive(tool(status="in_progress"), b"")
    session.receive(tool(status="completed"), b"")
    items = drain(work, cursor := [0, 0])
    assert [u.status for u in items] == ["pending", "in_progress", "completed"]
    merged = items[0]
    assert (merged.title, merged.content) == ("t2", None)
    assert merged.meta == {"a": 1, "b": None, "c": 3}
    session.receive(tool(title="late"), b"")
    session.receive(tool(title="later"), b"")
    assert [u.title for u in drain(work, cursor)] == ["later"]
    session.receive(tool(title="last"), b"")
    assert [u.title for u in drain(work, cursor)] == ["last"]
    assert replayed(work.updates).tool_calls == session.state.tool_calls


def test_a_meta_cleared_then_patched_is_not_merged_into_one_patch() -> None:
    session, work = new_work()
    updates = [tool(meta=None), tool(meta={"k": 1}), tool(call="c2"), tool(call="c1")]
    for update in updates:
        session.receive(update, b"")
    assert drain(work, [0, 0]) == updates


def test_terminal_chunks_of_one_terminal_merge_byte_exactly() -> None:
    session, work = new_work()
    session.receive(term(b"caf\xc3"), b"")
    session.receive(term(b"\xa9\n"), b"")
    session.receive(term("not base64!"), b"")
    session.receive(term(b"x", tid="t2"), b"")
    items = drain(work, [0, 0])
    assert [type(u) for u in items] == [TerminalOutputChunk] * 3
    assert base64.b64decode(items[0].data) == "café\n".encode()
    assert snapshot(replayed(items)) == snapshot(session.state)


def test_a_lone_surrogate_survives_merging() -> None:
    """The wire cannot carry one (the decoder refuses it), but a program's update can."""
    session, work = new_work()
    for text in ("\ud800", "ok"):
        session.receive(AgentMessageChunk(message_id="m1", content=TextContent(text=text)), b"")
    (merged,) = drain(work, [0, 0])
    assert merged.content.text == "\ud800ok" == session.state.messages[("agent", "m1")].text


def test_past_max_entries_a_lagging_iterator_gets_a_skipped_marker_and_the_rest() -> None:
    session, work = new_work()
    fast = [0, 0]
    seen: list[Any] = []
    for i in range(MAX_ENTRIES * 3):
        session.receive(chunk(f"{i} ", mid="m1" if i % 2 else "m2"), b"")
        seen += drain(work, fast)
    session.receive(upd(IDLE), b"")
    seen += drain(work, fast)
    assert not any(isinstance(u, Skipped) for u in seen)
    assert len(seen) == MAX_ENTRIES * 3 + 1
    late = drain(work, [0, 0])
    assert isinstance(late[0], Skipped)
    assert late[0].count > MAX_ENTRIES
    assert len(late) <= MAX_ENTRIES + 1
    assert late[-1].state == "idle"
    assert work.done
    evens = "".join(f"{i} " for i in range(0, MAX_ENTRIES * 3, 2))
    assert work.text.startswith(evens)  # the first message survives in the ids kept


def test_a_work_iterated_again_after_it_ended_yields_the_coalesced_log() -> None:
    async def main() -> None:
        session, work = new_work()
        for update in [chunk("a"), tool(title="x"), chunk("b"), chunk("c"), upd(IDLE)]:
            session.receive(update, b"")
        first = [u async for u in work]
        second = [u async for u in work]
        assert first == second == work.updates
        assert [type(u).__name__ for u in first][:3] == [
            "AgentMessageChunk",
            "ToolCallUpdate",
            "AgentMessageChunk",
        ]
        assert first[2].content.text == "bc"

    anyio.run(main)


UPDATES = st.one_of(
    st.builds(chunk, st.sampled_from(["a", "bé", "", "\n"]), st.sampled_from(["m1", "m2"])),
    st.builds(chunk, st.just("t"), st.just("m1"), st.just("agent_thought_chunk")),
    st.builds(lambda t: chunk(t, meta={"x": 1}), st.just("z")),
    st.builds(
        lambda title, status, meta: tool(title=title, status=status, meta=meta),
        st.sampled_from(["x", "y", None]),
        st.sampled_from(["pending", "completed", None]),
        st.sampled_from([{"a": 1}, {"a": None}, {"b": 2}, None]),
    ),
    st.builds(lambda: tool(call="c2", kind="read")),
    st.builds(term, st.sampled_from([b"ab", b"\xc3", b"\xa9", b""])),
    st.builds(term, st.just("!!"), st.just("t1")),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(UPDATES, st.booleans()), max_size=40), st.booleans())
def test_whatever_the_schedule_the_items_reduce_to_the_same_state(
    steps: list[tuple[Any, bool]], late_reader: bool
) -> None:
    """Property: an iterator reading at arbitrary moments (and one reading only at the end,
    and the retained log) reduce to exactly the state of the updates one by one."""
    session, work = new_work()
    cursor = [0, 0]
    items: list[Any] = []
    for update, read_now in steps:
        session.receive(update, b"")
        if read_now:
            items += drain(work, cursor)
    session.receive(upd(IDLE), b"")
    items += drain(work, cursor)
    expected = snapshot(session.state)
    assert snapshot(replayed(items)) == expected
    assert snapshot(replayed(work.updates)) == expected
    if late_reader:
        assert snapshot(replayed(drain(work, [0, 0]))) == expected
    assert sum(1 for u in items if getattr(u, "state", None) == "idle") == 1


def test_memory_of_a_work_follows_the_text_not_the_chunk_count() -> None:
    """tracemalloc: 100k chunks of one message, decoded as the reader does, cost a few
    bytes each beyond their text (before: ~230 bytes per chunk)."""
    import tracemalloc

    count = 100_000
    head = b'{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1",'
    lines = [head + b'"content":{"type":"text","text":"tok%d "}}}' % i for i in range(count)]
    expected = "".join(f"tok{i} " for i in range(count))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        session, work = new_work()
        for line in lines:
            session.receive(decode(line, UpdateSessionNotification).update, b"")
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # The state's text (pieces joined every 256 chunks) and the work's copy: ~2x the text.
    assert kept < 3 * len(expected) + 200_000, f"{kept} bytes kept for {len(expected)} chars"
    assert session.state.agent_text() == expected == work.text
