"""Per-direction request tables and batch reply assembly (TR-09, TR-10, TR-14)."""

from __future__ import annotations

import json

from acp2.rpc.pending import BatchReply, InboundRequests, PendingRequests


def test_tr10_outgoing_ids_are_integers_never_reused() -> None:
    table: PendingRequests[str] = PendingRequests()
    first = table.add("a")
    second = table.add("b")
    assert (first, second) == (0, 1)
    assert table.pop(first) == "a"
    assert table.add("c") == 2
    assert len(table) == 2
    assert 1 in table
    assert first not in table


def test_tr09_a_string_id_never_matches_our_integer_id() -> None:
    table: PendingRequests[str] = PendingRequests()
    rid = table.add("a")
    assert table.pop(str(rid)) is None
    assert table.pop(None) is None
    assert table.pop(True) is None  # bool is an int subclass; never an id
    assert table.pop(rid) == "a"
    assert table.pop(rid) is None


def test_drain_returns_every_pending_entry_once() -> None:
    table: PendingRequests[str] = PendingRequests()
    table.add("a")
    table.add("b")
    assert table.drain() == ["a", "b"]
    assert table.drain() == []
    assert len(table) == 0


def test_tr09_inbound_ids_1_and_string_1_are_distinct_and_duplicates_refused() -> None:
    table: InboundRequests[str] = InboundRequests()
    assert table.add(1, "int")
    assert table.add("1", "str")
    assert not table.add(1, "again")
    assert table.get(1) == "int"
    assert table.get("1") == "str"
    assert table.pop(1) == "int"
    assert table.pop(1) is None
    assert list(table.values()) == ["str"]


def test_tr14_batch_reply_waits_for_every_request_and_never_sends_empty() -> None:
    only_notifications = BatchReply()
    only_notifications.seal()
    assert only_notifications.take() is None

    reply = BatchReply()
    reply.expect()
    reply.add(b'{"id":null}', answers_request=False)
    reply.expect()
    reply.seal()
    assert reply.take() is None
    reply.add(b'{"id":1}', answers_request=True)
    assert reply.take() is None
    reply.add(b'{"id":2}', answers_request=True)
    assert json.loads(reply.take() or b"") == [{"id": None}, {"id": 1}, {"id": 2}]
    assert reply.take() is None
