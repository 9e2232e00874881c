"""Message upserts and chunks (MU-03..MU-09): keys, order, patch rules, text reads."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec import Raw
from state_updates import OMIT, chunk, feed, message, text, texts

from acp2.schema.codec import decode
from acp2.schema.updates import UpdateSessionNotification
from acp2.state import MessageState, SessionState, reduce

A = "agent"

# (case id, updates for ("agent", "m1"), expected text blocks)
ORDER_CASES: list[tuple[str, list[dict[str, Any]], list[str]]] = [
    ("MU-05 an unseen chunk id creates the message", [chunk(A, "m1", "x")], ["x"]),
    (
        "MU-05 plain text chunks append as one block",
        [chunk(A, "m1", "a"), chunk(A, "m1", "b")],
        ["ab"],
    ),
    ("MU-04 a new id without content is empty", [message(A, "m1")], []),
    ("MU-04 a new id with content holds it", [message(A, "m1", ["a", "b"])], ["a", "b"]),
    (
        "MU-04 an update after chunks replaces them",
        [chunk(A, "m1", "a"), chunk(A, "m1", "b"), message(A, "m1", ["C"])],
        ["C"],
    ),
    (
        "MU-05 chunks after an update append to it",
        [message(A, "m1", ["A"]), chunk(A, "m1", "B")],
        ["A", "B"],
    ),
    (
        "MU-06 update A chunk B update C chunk D gives C D",
        [
            message(A, "m1", ["A"]),
            chunk(A, "m1", "B"),
            message(A, "m1", ["C"]),
            chunk(A, "m1", "D"),
        ],
        ["C", "D"],
    ),
    (
        "MU-04 an update without content keeps chunk content",
        [message(A, "m1", ["A"]), chunk(A, "m1", "B"), message(A, "m1", meta={"k": 1})],
        ["A", "B"],
    ),
    (
        "MU-04 content [] clears",
        [chunk(A, "m1", "a"), message(A, "m1", [])],
        [],
    ),
    (
        "MU-09 content null clears (redaction)",
        [message(A, "m1", ["secret"]), chunk(A, "m1", "more"), message(A, "m1", None)],
        [],
    ),
    (
        "MU-05 chunks after a clear start over",
        [message(A, "m1", ["a"]), message(A, "m1", None), chunk(A, "m1", "z")],
        ["z"],
    ),
]


@pytest.mark.parametrize(
    ("updates", "expected"), [c[1:] for c in ORDER_CASES], ids=[c[0] for c in ORDER_CASES]
)
def test_message_updates_and_chunks_apply_in_receive_order(
    updates: list[dict[str, Any]], expected: list[str]
) -> None:
    state = feed(*updates)
    msg = state.messages[(A, "m1")]
    assert texts(msg.content) == expected
    assert msg.text == "".join(expected)
    assert state.timeline == [msg]


@pytest.mark.parametrize("kind", ["user", "agent", "thought"])
def test_every_message_kind_follows_the_same_rules(kind: str) -> None:
    state = feed(message(kind, "m", ["A"]), chunk(kind, "m", "B"), message(kind, "m", ["C"]))
    state = feed(chunk(kind, "m", "D"), state=state)
    assert state.messages[(kind, "m")].text == "CD"


def test_the_same_id_in_different_kinds_is_three_messages_mu03() -> None:
    state = feed(
        chunk("thought", "m1", "hmm"), chunk("agent", "m1", "hi"), chunk("user", "m1", "q")
    )
    assert [(m.kind, m.text) for m in state.timeline if isinstance(m, MessageState)] == [
        ("thought", "hmm"),
        ("agent", "hi"),
        ("user", "q"),
    ]


def test_interleaved_chunks_assemble_each_message_mu08() -> None:
    state = feed(chunk(A, "m1", "a"), chunk(A, "m2", "x"), chunk(A, "m1", "b"), chunk(A, "m2", "y"))
    assert state.messages[(A, "m1")].text == "ab"
    assert state.messages[(A, "m2")].text == "xy"
    assert [m.message_id for m in state.timeline if isinstance(m, MessageState)] == ["m1", "m2"]


def test_the_timeline_keeps_first_seen_order_across_later_updates() -> None:
    state = feed(message("user", "u1", ["q"]), chunk(A, "a1", "x"), message("user", "u1", ["q2"]))
    assert [(m.kind, m.message_id) for m in state.timeline if isinstance(m, MessageState)] == [
        ("user", "u1"),
        ("agent", "a1"),
    ]


# (case id, successive _meta values on whole-message updates, expected meta)
META_CASES: list[tuple[str, list[Any], Any]] = [
    ("MU-07 omitted keeps", [{"a": 1}, OMIT], {"a": 1}),
    ("MU-07 Nov object patches by key", [{"a": 1}, {"b": 2}], {"a": 1, "b": 2}),
    ("MU-07 a value replaces that key", [{"a": 1, "b": 1}, {"a": 2}], {"a": 2, "b": 1}),
    ("MU-07 a null value deletes that key", [{"a": 1, "b": 2}, {"a": None}], {"b": 2}),
    ("MU-07 null clears the whole meta", [{"a": 1}, None], None),
    ("MU-07 {} changes nothing", [{"a": 1}, {}], {"a": 1}),
    ("MU-07 no deep merge", [{"a": {"x": 1}}, {"a": {"y": 2}}], {"a": {"y": 2}}),
    ("D-26 null then the full object", [{"a": 1, "b": 2}, None, {"b": 3}], {"b": 3}),
]


@pytest.mark.parametrize(
    ("metas", "expected"), [c[1:] for c in META_CASES], ids=[c[0] for c in META_CASES]
)
def test_message_meta_is_key_patched(metas: list[Any], expected: Any) -> None:
    state = feed(*[message(A, "m1", meta=meta) for meta in metas])
    assert state.messages[(A, "m1")].meta == expected


def test_chunk_meta_never_patches_the_message_mu07() -> None:
    state = feed(message(A, "m1", ["a"], meta={"keep": 1}), chunk(A, "m1", "b", _meta={"x": 2}))
    msg = state.messages[(A, "m1")]
    assert msg.meta == {"keep": 1}
    assert msg.text == "ab"


def test_a_meta_patch_does_not_mutate_the_previous_dict() -> None:
    state = feed(message(A, "m1", meta={"a": 1}))
    before = state.messages[(A, "m1")].meta
    feed(message(A, "m1", meta={"b": 2}), state=state)
    assert before == {"a": 1}


def test_unknown_content_blocks_are_kept_raw_and_skipped_in_text_ct01() -> None:
    state = feed(
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m1",
            "content": {"type": "_widget", "x": 1},
        },
        chunk(A, "m1", "ok"),
    )
    msg = state.messages[(A, "m1")]
    assert isinstance(msg.content[0], Raw)
    assert msg.text == "ok"


def test_non_text_blocks_do_not_contribute_text() -> None:
    image = {"type": "image", "data": "AA==", "mimeType": "image/png"}
    state = feed(
        {"sessionUpdate": "agent_message", "messageId": "m1", "content": [text("a"), image]}
    )
    assert state.messages[(A, "m1")].text == "a"


def test_text_read_while_streaming_only_joins_the_new_part() -> None:
    state = feed(chunk(A, "m1", "a"))
    msg = state.messages[(A, "m1")]
    assert msg.text == "a"
    feed(chunk(A, "m1", "b"), chunk(A, "m1", "c"), state=state)
    assert msg.text == "abc"
    feed(message(A, "m1", ["Z"]), state=state)
    assert msg.text == "Z"
    assert SessionState.text_of(msg) == "Z"


def test_chunks_append_to_the_same_list_in_place() -> None:
    state = feed(chunk(A, "m1", "a"))
    content = state.messages[(A, "m1")].content
    feed(chunk(A, "m1", "b"), state=state)
    assert state.messages[(A, "m1")].content is content


def test_a_whole_update_does_not_adopt_the_wire_list() -> None:
    state = feed(message(A, "m1", ["a"]))
    msg = state.messages[(A, "m1")]
    feed(chunk(A, "m1", "b"), state=state)
    assert texts(msg.content) == ["a", "b"]


# (case id, updates, agent_text())
AGENT_TEXT_CASES: list[tuple[str, list[dict[str, Any]], str]] = [
    ("empty session", [], ""),
    ("only a user message", [message("user", "u1", ["hi"])], ""),
    (
        "the last turn only",
        [
            message("user", "u1", ["q1"]),
            chunk(A, "a1", "old"),
            message("user", "u2", ["q2"]),
            chunk(A, "a2", "new"),
            chunk(A, "a2", "er"),
        ],
        "newer",
    ),
    (
        "several agent messages, thoughts skipped",
        [
            message("user", "u1", ["q"]),
            chunk(A, "a1", "first"),
            chunk("thought", "t1", "hmm"),
            message(A, "a2", []),
            chunk(A, "a3", "second"),
        ],
        "first\n\nsecond",
    ),
    ("agent-initiated work without a user message", [chunk(A, "a1", "hello")], "hello"),
]


@pytest.mark.parametrize(
    ("updates", "expected"),
    [c[1:] for c in AGENT_TEXT_CASES],
    ids=[c[0] for c in AGENT_TEXT_CASES],
)
def test_agent_text_is_the_agent_text_of_the_last_turn(
    updates: list[dict[str, Any]], expected: str
) -> None:
    assert feed(*updates).agent_text() == expected


def test_plain_chunks_are_joined_but_annotated_or_meta_blocks_stay_whole_and_in_order() -> None:
    annotated = {"type": "text", "text": "B", "annotations": {"priority": 1}}
    with_meta = {"type": "text", "text": "D", "_meta": {"k": 1}}
    image = {"type": "image", "data": "AA==", "mimeType": "image/png"}
    updates = [chunk(A, "m1", "a"), chunk(A, "m1", "b")]
    for block in (annotated, with_meta, image):
        updates.append(
            {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": block}
        )
        updates.append(chunk(A, "m1", "c"))
    msg = feed(*updates).messages[(A, "m1")]
    assert [getattr(b, "text", None) for b in msg.content] == ["ab", "B", "c", "D", "c", None, "c"]
    assert msg.content[1].annotations is not None
    assert msg.content[3].meta == {"k": 1}
    assert msg.text == "abBcDcc"


def test_a_flood_of_tiny_chunks_costs_its_text_not_one_block_per_chunk() -> None:
    """100k chunks: a few hundred blocks and about the text's size in memory (tracemalloc;
    before: one TextContent per chunk, ~120 bytes each)."""
    import tracemalloc

    from acp2.state.entities import FOLD_CHUNKS

    count = 100_000
    head = b'{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1",'
    lines = [head + b'"content":{"type":"text","text":"tok%d "}}}' % i for i in range(count)]
    expected = "".join(f"tok{i} " for i in range(count))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        state = SessionState()
        for line in lines:
            reduce(state, decode(line, UpdateSessionNotification))
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 2 * len(expected) + 100_000, f"{kept} bytes kept for {len(expected)} chars"
    msg = state.messages[(A, "m1")]
    assert len(msg.content) == -(-count // FOLD_CHUNKS)
    assert msg.text == expected
