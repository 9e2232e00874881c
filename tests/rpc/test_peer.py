"""The sans-IO peer: messages in, events out, bytes out -- no event loop anywhere here.

Ids (TR-09, TR-10), exactly-once answers (TR-21, TR-22), cancellation (TR-19), closing
(TR-23), invalid messages (TR-01, TR-13) and batches (TR-14), over a byte stream and over
whole messages (the remote transports' way).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import msgspec
import pytest

from acp2.errors import (
    InvalidParams,
    MethodNotFound,
    RemoteProtocolError,
    RequestCancelled,
)
from acp2.rpc.events import (
    CancelRequested,
    Event,
    Incoming,
    InvalidMessage,
    Notified,
    Reply,
    RequestReceived,
    ResponseReceived,
    UnknownNotification,
)
from acp2.rpc.peer import Peer


class Num(msgspec.Struct):
    n: int


def line(**fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}, separators=(",", ":")).encode() + b"\n"


def frame_json(data: bytes) -> Any:
    return json.loads(data)


def handler(params: Any) -> Any:
    return params


def peer() -> Peer[str]:
    p: Peer[str] = Peer("test")
    p.serve("echo", Num, handler)
    p.route("tick", Num, handler, False)
    return p


def one(events: list[Event]) -> Event:
    assert len(events) == 1, events
    return events[0]


def received(p: Peer[str], rid: Any, method: str = "echo", params: Any = None) -> Incoming:
    event = one(p.receive_bytes(line(id=rid, method=method, params=params or {"n": 1})))
    assert isinstance(event, RequestReceived)
    return event.request


# --- ids and responses ---------------------------------------------------------------


def test_tr10_our_ids_are_consecutive_integers_and_each_frame_carries_its_own() -> None:
    p = peer()
    sent = [p.send_request("echo", {"n": i}, f"waiter {i}") for i in range(3)]
    assert [rid for rid, _ in sent] == [0, 1, 2]
    assert [frame_json(frame)["id"] for _, frame in sent] == [0, 1, 2]


def test_a_response_wakes_its_entry_once_and_a_duplicate_is_dropped() -> None:
    p = peer()
    rid, _ = p.send_request("echo", {"n": 1}, "w")
    event = one(p.receive_bytes(line(id=rid, result={"n": 2})))
    assert isinstance(event, ResponseReceived)
    assert (event.entry, bytes(event.result or b""), event.error) == ("w", b'{"n":2}', None)
    assert p.receive_bytes(line(id=rid, result={"n": 2})) == []


@pytest.mark.parametrize("rid", ["0", 7], ids=["string-of-our-id", "never-sent"])
def test_tr09_a_response_to_an_id_that_is_not_pending_is_dropped(rid: Any) -> None:
    p = peer()
    p.send_request("echo", {"n": 1}, "w")
    assert p.receive_bytes(line(id=rid, result={})) == []


def test_an_error_response_wakes_the_entry_with_the_matching_error_class() -> None:
    p = peer()
    rid, _ = p.send_request("echo", {"n": 1}, "w")
    event = one(p.receive_bytes(line(id=rid, error={"code": -32602, "message": "bad"})))
    assert isinstance(event, ResponseReceived)
    assert isinstance(event.error, InvalidParams)
    assert event.error.remote
    assert event.result is None


def test_a_malformed_response_to_our_id_fails_the_entry_and_counts_as_invalid() -> None:
    p = peer()
    rid, _ = p.send_request("echo", {"n": 1}, "w")
    events = p.receive_bytes(line(id=rid, result={}, error={"code": 1, "message": "x"}))
    failed, invalid = events
    assert isinstance(failed, ResponseReceived)
    assert failed.entry == "w"
    assert isinstance(failed.error, RemoteProtocolError)
    assert isinstance(invalid, InvalidMessage)
    assert p.protocol_errors == 1


def test_tr19_cancelling_our_request_sends_the_notice_once_and_drops_the_late_answer() -> None:
    p = peer()
    rid, _ = p.send_request("echo", {"n": 1}, "w")
    notice = p.cancel_request(rid)
    assert notice is not None
    assert frame_json(notice) == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": rid},
    }
    assert p.cancel_request(rid) is None
    assert p.receive_bytes(line(id=rid, error={"code": -32800, "message": "cancelled"})) == []


def test_closing_returns_the_pending_entries_and_sends_no_cancel_notice() -> None:
    p = peer()
    rid, _ = p.send_request("echo", {"n": 1}, "a")
    p.send_request("echo", {"n": 2}, "b")
    assert p.close() == ["a", "b"]
    assert p.closing
    assert p.cancel_request(rid) is None


def test_an_unencodable_request_leaves_nothing_pending() -> None:
    p = peer()
    with pytest.raises((TypeError, msgspec.EncodeError)):
        p.send_request("echo", object(), "w")
    assert p.close() == []


# --- serving requests exactly once ---------------------------------------------------


def test_tr21_a_request_is_answered_once_whatever_answers_it_later() -> None:
    p = peer()
    request = received(p, 5)
    frame = p.send_response(request, {"n": 1})
    assert frame is not None
    assert frame_json(frame) == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"n": 1},
    }
    assert p.send_response(request, {"n": 2}) is None
    assert p.send_error(request, RequestCancelled()) is None
    assert p.unanswered == 0


def test_tr09_ids_1_and_string_1_are_two_live_requests_and_a_reused_live_id_is_ignored() -> None:
    p = peer()
    first = received(p, 1)
    received(p, "1")
    assert p.receive_bytes(line(id=1, method="echo", params={"n": 2})) == []
    assert p.unanswered == 2
    p.send_response(first, None)
    received(p, 1)  # answered: the id may be used again


def test_an_unencodable_result_is_answered_internal_error() -> None:
    p = peer()
    request = received(p, 1)
    frame = p.send_response(request, object())
    assert frame is not None
    assert frame_json(frame)["error"]["code"] == -32603


def test_tr22_cancel_request_names_a_live_request_and_ignores_others() -> None:
    p = peer()
    request = received(p, 3)
    event = one(p.receive_bytes(line(method="$/cancel_request", params={"requestId": 3})))
    assert isinstance(event, CancelRequested)
    assert event.request is request
    for rid in (4, "3"):
        assert p.receive_bytes(line(method="$/cancel_request", params={"requestId": rid})) == []
    p.send_error(request, RequestCancelled())
    assert p.receive_bytes(line(method="$/cancel_request", params={"requestId": 3})) == []


@pytest.mark.parametrize(
    ("method", "params", "code"),
    [
        ("nope", {}, MethodNotFound.code),
        ("echo", {"n": "one"}, InvalidParams.code),
        ("echo", [1, 2], InvalidParams.code),
    ],
    ids=["unknown-method", "wrong-type", "not-an-object"],
)
def test_requests_the_peer_cannot_serve_are_answered_by_the_peer_itself(
    method: str, params: Any, code: int
) -> None:
    p = peer()
    event = one(p.receive_bytes(line(id=9, method=method, params=params)))
    assert isinstance(event, Reply)
    answer = frame_json(event.frame)
    assert (answer["id"], answer["error"]["code"]) == (9, code)
    assert p.unanswered == 0


def test_an_unknown_method_goes_to_the_catch_all_handler_when_there_is_one() -> None:
    p = peer()
    p.serve_unknown(lambda method, raw: (method, raw))
    event = one(p.receive_bytes(line(id=1, method="_x/y", params={"a": 1})))
    assert isinstance(event, RequestReceived)
    assert event.handler(event.params) == ("_x/y", event.params)


def test_tr23_after_close_new_requests_are_answered_cancelled_at_once() -> None:
    p = peer()
    p.close()
    event = one(p.receive_bytes(line(id=1, method="echo", params={"n": 1})))
    assert isinstance(event, Reply)
    assert frame_json(event.frame)["error"]["code"] == RequestCancelled.code


# --- notifications -------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b'{"jsonrpc":"2.0","method":"tick","params":{"n":7}}\n',
        b'{"method":"tick","params":{"n":7},"jsonrpc":"2.0"}\n',
        b'{"jsonrpc": "2.0", "method": "tick", "params": {"n": 7, "extra": 1}}\n',
    ],
    ids=["canonical-fast-path", "reordered", "spaced-extra-field"],
)
def test_every_layout_of_a_notification_gives_the_same_event(data: bytes) -> None:
    event = one(peer().receive_bytes(data))
    assert isinstance(event, Notified)
    assert (event.route.method, event.params) == ("tick", Num(7))


def test_a_raw_route_gets_the_exact_params_bytes() -> None:
    p: Peer[str] = Peer()
    p.route("tick", Num, handler, True)
    for data in (
        b'{"jsonrpc":"2.0","method":"tick","params":{"n":1}}',
        b'{"params":{"n":1},"method":"tick","jsonrpc":"2.0"}',
    ):
        event = one(p.receive_message(data))
        assert isinstance(event, Notified)
        assert event.body == b'{"n":1}'


def test_unknown_notifications_are_reported_undecoded_and_bad_params_dropped() -> None:
    p = peer()
    event = one(p.receive_bytes(line(method="_x/note", params={"a": 1})))
    assert isinstance(event, UnknownNotification)
    assert event.method == "_x/note"
    assert p.receive_bytes(line(method="tick", params={"n": "x"})) == []
    assert p.protocol_errors == 0  # a notification with bad params is not a protocol error


# --- invalid messages ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "code", "reply_id"),
    [
        (b"{not json\n", -32700, None),
        (b'{"jsonrpc":"2.0","id":4,"method":5}\n', -32600, 4),
        (b'{"jsonrpc":"1.0","id":"a","method":"echo"}\n', -32600, "a"),
        (b'{"jsonrpc":"2.0","id":true,"method":"echo"}\n', -32600, None),
        (b"[]\n", -32600, None),
        (b"\xff\xfe\n", -32700, None),
        (b"[" * 100_000 + b"]" * 100_000 + b"\n", -32600, None),
    ],
    ids=["parse", "method-type", "version", "bool-id", "empty-batch", "utf8", "too-deep"],
)
def test_tr01_invalid_messages_are_counted_and_answered_with_the_right_error(
    data: bytes, code: int, reply_id: Any
) -> None:
    p = peer()
    event = one(p.receive_bytes(data))
    assert isinstance(event, InvalidMessage)
    assert event.reply is not None
    answer = frame_json(event.reply)
    assert (answer["id"], answer["error"]["code"]) == (reply_id, code)
    assert p.protocol_errors == 1
    assert p.last_protocol_error == event.message


def test_an_oversized_notification_is_dropped_without_a_reply_and_framing_goes_on() -> None:
    p: Peer[str] = Peer(max_message_size=64)
    p.route("tick", Num, handler, False)
    big = line(method="tick", params={"n": 1, "pad": "x" * 200})
    events = p.receive_bytes(big + line(method="tick", params={"n": 2}))
    invalid, ok = events
    assert isinstance(invalid, InvalidMessage)
    assert invalid.reply is None
    assert isinstance(ok, Notified)
    assert ok.params == Num(2)


# --- batches -------------------------------------------------------------------------


def test_tr14_a_batch_is_answered_with_one_array_once_its_last_request_is() -> None:
    p = peer()
    batch = b"[" + line(id=1, method="echo", params={"n": 1}).strip() + b","
    batch += line(id=2, method="nope").strip() + b"," + line(method="tick", params={"n": 3}).strip()
    batch += b"," + line(id=3, method="echo", params={"n": 3}).strip() + b"]"
    first, note, last = p.receive_message(batch)
    assert isinstance(first, RequestReceived)
    assert isinstance(last, RequestReceived)
    assert isinstance(note, Notified)
    assert p.send_response(first.request, {"n": 1}) is None  # the batch is not complete
    reply = p.send_response(last.request, {"n": 3})
    assert reply is not None
    assert sorted(entry["id"] for entry in json.loads(reply)) == [1, 2, 3]


def test_tr14_a_batch_of_notifications_only_gets_no_reply() -> None:
    events = peer().receive_message(b"[" + line(method="tick", params={"n": 1}).strip() + b"]")
    assert [type(event) for event in events] == [Notified]


def test_tr14_invalid_entries_of_a_batch_are_answered_inside_its_array() -> None:
    events = peer().receive_message(b'[1, {"jsonrpc":"2.0","method":"tick","params":{"n":1}}]')
    invalid, note, reply = events
    assert isinstance(invalid, InvalidMessage)
    assert invalid.reply is None
    assert isinstance(note, Notified)
    assert isinstance(reply, Reply)
    assert [entry["error"]["code"] for entry in json.loads(reply.frame)] == [-32600]


# --- bytes or whole messages ---------------------------------------------------------


def test_a_stream_cut_anywhere_gives_the_same_events_as_whole_messages() -> None:
    lines = [line(method="tick", params={"n": i}) for i in range(3)]
    p = peer()
    whole = [(e.route.method, e.params) for data in lines for e in p.receive_message(data)]
    stream = b"".join(lines)
    for cut in range(1, len(stream)):
        events = p.receive_bytes(stream[:cut]) + p.receive_bytes(stream[cut:])
        assert [(e.route.method, e.params) for e in events] == whole  # type: ignore[union-attr]


def test_a_whole_message_may_be_pretty_printed_json() -> None:
    message = json.dumps({"jsonrpc": "2.0", "method": "tick", "params": {"n": 4}}, indent=2)
    event = one(peer().receive_message(message.encode()))
    assert isinstance(event, Notified)
    assert event.params == Num(4)


def test_a_whole_message_over_the_limit_is_rejected_like_an_oversized_line() -> None:
    p: Peer[str] = Peer(max_message_size=32)
    p.serve("echo", Num, handler)
    event = one(p.receive_message(line(id=8, method="echo", params={"pad": "x" * 100})))
    assert isinstance(event, InvalidMessage)
    assert event.reply is not None
    assert frame_json(event.reply)["id"] == 8


def test_the_end_of_the_stream_completes_a_final_unterminated_line() -> None:
    p = peer()
    assert p.receive_bytes(line(method="tick", params={"n": 1}).strip()) == []
    assert [type(e) for e in p.end_of_stream()] == [Notified]


def test_the_tap_sees_every_incoming_frame() -> None:
    seen: list[tuple[str, bytes]] = []
    p: Peer[str] = Peer(tap=lambda direction, frame: seen.append((direction, frame)))
    p.receive_bytes(b'{"jsonrpc":"2.0","method":"a"}\n{"jsonrpc":"2.0","method":"b"}\n')
    assert [direction for direction, _ in seen] == ["in", "in"]


def test_keys_a_notification_or_request_model_skips_are_counted_and_logged_at_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    p = peer()
    with caplog.at_level(logging.DEBUG, logger="acp2.rpc"):
        p.receive_bytes(line(method="tick", params={"n": 1, "future": {"x": 1}}))
        p.receive_bytes(line(id=1, method="echo", params={"n": 1, "extra": 2}))
    assert p.ignored.counts == {"tick future": 1, "echo extra": 1}
    logged = [r.getMessage() for r in caplog.records if "ignored fields" in r.getMessage()]
    assert logged == [
        "test: tick: ignored fields acp2 does not model: ['future']",
        "test: echo: ignored fields acp2 does not model: ['extra']",
    ]


def test_without_debug_logging_nothing_is_walked_or_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    p = peer()
    with caplog.at_level(logging.INFO, logger="acp2.rpc"):
        p.receive_bytes(line(method="tick", params={"n": 1, "future": 1}))
    assert not p.ignored.counts
