"""Resuming into a held state (RFD session-replay-complete): a replay rebuilds, never doubles.

A client that saw part of a session and resumes it with a replay ends with exactly the
state a fresh client reducing the same replay has: chunked messages, tool call content,
terminal output and compaction summaries are rebuilt, not appended twice; unknown
updates it already keeps are not kept twice; what the replay lacks is kept.
"""

from __future__ import annotations

from typing import Any

from state_updates import chunk, decode_update, feed, message, state_update
from test_replay_and_unknown import LIVE, REPLAY, rendered

from acp2.schema import ReplayComplete
from acp2.schema.codec import decode, encode
from acp2.schema.updates import SessionUpdate
from acp2.state import ReplayMerge, SessionState, entity_key, reduce

#: The live stream as an agent that replays chunk by chunk sends it (no state updates).
CHUNKED_REPLAY = [u for u in LIVE if u["sessionUpdate"] != "state_update"] + [state_update("idle")]


def _merged(
    held: SessionState, replay: list[dict[str, Any]], *, complete: bool = True
) -> tuple[SessionState, list[Any]]:
    """Reduce ``replay`` into ``held`` through a ReplayMerge (finished when ``complete``);
    return it and the updates that were not absorbed (what a client hands on as news)."""
    merge = ReplayMerge(held)
    news = []
    for raw in replay:
        update = decode_update(raw).update
        if not merge.absorb(held, update):
            reduce(held, update)
            news.append(update)
    if complete:
        merge.finish(held)
    return held, news


def test_a_chunked_replay_into_a_state_that_saw_half_the_session_doubles_nothing() -> None:
    for cut in range(len(LIVE) + 1):
        held, _ = _merged(feed(*LIVE[:cut]), CHUNKED_REPLAY)
        assert rendered(held) == rendered(feed(*CHUNKED_REPLAY)), cut
        assert held.agent_text() == "Running tests.\n\nAll good."
        assert held.terminals["t1"].text == "café ok\n"


def test_a_whole_entity_replay_into_a_state_that_saw_half_the_session_is_exact() -> None:
    for cut in range(len(LIVE) + 1):
        held, _ = _merged(feed(*LIVE[:cut]), REPLAY)
        assert rendered(held) == rendered(feed(*REPLAY)), cut


def test_replayed_updates_about_held_entities_are_not_news_and_the_rest_are() -> None:
    held = feed(message("user", "u1", ["hi"]), chunk("agent", "m1", "hel"))
    _, news = _merged(
        held,
        [message("user", "u1", ["hi"]), chunk("agent", "m1", "hello"), chunk("agent", "m2", "new")],
    )
    assert [entity_key(u) for u in news] == [("agent", "m2")]
    assert [m.text for m in held.timeline] == ["hi", "hello", "new"]  # positions kept


def test_a_truncated_replay_keeps_the_held_entities_it_did_not_reach() -> None:
    held = feed(chunk("agent", "old", "kept"), chunk("agent", "m1", "a"))
    _merged(held, [chunk("agent", "m1", "ab")], complete=False)
    assert [(m.message_id, m.text) for m in held.timeline] == [("old", "kept"), ("m1", "ab")]


def test_a_completed_replay_under_new_ids_leaves_one_copy_of_each_message_ss17() -> None:
    # A v1 agent behind the bridge (or any agent, SS-17) may replay under fresh ids.
    held = feed(chunk("user", "u1", "hi"), chunk("agent", "m1", "hello"))
    held.terminal("t1").append(b"kept")
    _merged(held, [chunk("user", "r1", "hi"), chunk("agent", "r2", "hello")])
    assert [(m.message_id, m.text) for m in held.timeline] == [("r1", "hi"), ("r2", "hello")]
    assert set(held.messages) == {("user", "r1"), ("agent", "r2")}
    assert held.terminals["t1"].text == "kept"


def test_held_unknown_updates_are_not_kept_twice_but_new_ones_are() -> None:
    seen = {"sessionUpdate": "_acme_progress", "percent": 50}
    fresh = {"sessionUpdate": "_acme_progress", "percent": 90}
    held, news = _merged(feed(seen), [seen, fresh])
    assert [encode(u) for u in held.unknown] == [
        b'{"sessionUpdate":"_acme_progress","percent":50}',
        b'{"sessionUpdate":"_acme_progress","percent":90}',
    ]
    assert len(news) == 1


def test_compaction_summaries_and_tool_content_chunks_are_rebuilt_not_appended() -> None:
    cmp = [
        {"sessionUpdate": "compaction_update", "compactionId": "c", "status": "in_progress"},
        {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": "c",
            "content": {"type": "text", "text": "sum"},
        },
    ]
    call = [
        {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "in_progress"},
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "t",
            "content": {"type": "content", "content": {"type": "text", "text": "out"}},
        },
    ]
    held, _ = _merged(feed(*cmp, *call), cmp + call)
    assert len(held.compactions["c"].summary) == 1
    assert len(held.tool_calls["t"].content) == 1


def test_absorb_changes_nothing_for_an_update_about_something_new() -> None:
    held = feed(chunk("agent", "m1", "a"))
    merge = ReplayMerge(held)
    update = decode_update(chunk("agent", "m2", "b")).update
    assert merge.absorb(held, update) is False
    assert list(held.messages) == [("agent", "m1")]


def test_replay_complete_round_trips_and_only_counts_in_the_state() -> None:
    wire = b'{"sessionUpdate":"replay_complete"}'
    update = decode(wire, SessionUpdate)
    assert type(update) is ReplayComplete
    assert encode(update) == wire
    with_meta = b'{"sessionUpdate":"replay_complete","_meta":{"k":1}}'
    assert encode(decode(with_meta, SessionUpdate)) == with_meta
    state = feed(chunk("agent", "m1", "a"), {"sessionUpdate": "replay_complete"})
    assert state.replays == 1
    assert state.unknown == []
    assert [m.text for m in state.timeline] == ["a"]
