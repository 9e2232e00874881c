"""The RFD's routing of server-to-client messages to SSE streams, sans-IO."""

from __future__ import annotations

import msgspec

from acp2.serve.routing import MAX_PENDING, Router, head, id_key


def test_a_response_goes_where_its_request_was_posted() -> None:
    router = Router()
    assert router.posted(head(b'{"id":3,"method":"session/prompt"}'), "s1")
    assert router.posted(head(b'{"id":"x","method":"session/new"}'), None)
    assert router.destination(b'{"jsonrpc":"2.0","id":3,"result":{}}') == "s1"
    assert router.destination(b'{"jsonrpc":"2.0","id":"x","result":{}}') is None
    # Answered once: a second response with the id has no route (connection stream).
    assert router.destination(b'{"jsonrpc":"2.0","id":3,"result":{}}') is None


def test_session_load_is_answered_on_the_connection_stream() -> None:
    router = Router()
    router.posted(head(b'{"id":1,"method":"session/load","params":{"sessionId":"s"}}'), "s")
    assert router.destination(b'{"id":1,"result":{}}') is None


def test_notifications_and_requests_go_to_their_sessions_stream() -> None:
    router = Router()
    update = b'{"method":"session/update","params":{"sessionId":"s2","update":{}}}'
    assert router.destination(update) == "s2"
    ask = b'{"id":9,"method":"session/request_permission","params":{"sessionId":"s3"}}'
    assert router.destination(ask) == "s3"
    assert router.destination(b'{"method":"_ext/thing","params":[1]}') is None
    assert router.destination(b"not json") is None


def test_the_same_id_spelled_differently_has_one_key() -> None:
    assert id_key(msgspec.Raw(b"1")) == id_key(msgspec.Raw(b" 1 "))
    assert id_key(msgspec.Raw(b'"a"')) != id_key(msgspec.Raw(b"1"))
    assert id_key(msgspec.Raw(b"null")) is None
    assert id_key(msgspec.Raw(b"")) is None


def test_a_connection_remembers_a_bounded_number_of_pending_routes() -> None:
    router = Router()
    for n in range(MAX_PENDING):
        assert router.posted(head(b'{"id":%d,"method":"m"}' % n), None)
    assert not router.posted(head(b'{"id":-1,"method":"m"}'), None)
